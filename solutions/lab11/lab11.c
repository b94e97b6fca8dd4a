/* lab11.c: lab 11, communication competing with computation for SMs, and overlapping them.
 *
 * A backward pass produces gradients layer by layer while they are summed over
 * the ranks. You model what an AllReduce costs on C channels and what a whole
 * step costs when the communication's channels take SMs from the compute
 * kernels, choose the channel count, the bucket size and how finely to cut the
 * kernels, and run the overlapped step with the lab's non-blocking AllReduce.
 * Read labs/lab11/README.md first; the TODOs below follow its sections. Build
 * with `make lab11`, grade with `./grade lab11`.
 */
#include <math.h>

#include "lab11.h"

double lab11_allreduce_s(const lab11_model *m, double bytes, int channels)
{
    /* BEGIN SOLUTION */
    int p = m->ranks;
    if (p <= 1 || bytes <= 0)
        return 0;
    /* 2(p-1) ring steps; in each, a channel moves bytes/(pC) in pieces of at
     * most K, one piece per round, and a round's C pieces share the link. */
    double rounds = ceil(bytes / ((double)p * channels * m->slot_bytes));
    return 2.0 * (p - 1) * (rounds * m->alpha_s + bytes / p / m->link_Bps);
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab11) 1: the model's AllReduce time (section 1 of the handout).
    (void)m, (void)bytes, (void)channels;
    return 0;
    END SKELETON */
}

double lab11_step_s(const lab11_model *m, const lab11_plan *p)
{
    /* BEGIN SOLUTION */
    double rate = (double)(m->sms - p->channels) / m->sms; /* compute speed under comm */
    double size[LAB11_MAX_LAYERS], ready[LAB11_MAX_LAYERS], t = 0, comm_end = 0, acc = 0;
    int nq = 0, head = 0;
    for (int l = m->layers - 1; l >= 0; l--) {
        double w = m->layer_s[l]; /* work left, seconds on all SMs */
        while (w > 0) {
            while (head < nq && comm_end <= t) { /* the link is free and a bucket waits */
                comm_end =
                    fmax(comm_end, ready[head]) + lab11_allreduce_s(m, size[head], p->channels);
                head++;
            }
            if (comm_end <= t) {
                t += w, w = 0;
            } else if (t + w / rate <= comm_end) {
                t += w / rate, w = 0;
            } else {
                w -= (comm_end - t) * rate;
                t = comm_end;
            }
        }
        acc += m->layer_bytes[l];
        if (acc >= p->bucket_bytes || l == 0) {
            size[nq] = acc, ready[nq++] = t;
            acc = 0;
        }
    }
    while (head < nq) { /* one AllReduce at a time, in bucket order */
        comm_end = fmax(comm_end, ready[head]) + lab11_allreduce_s(m, size[head], p->channels);
        head++;
    }
    return fmax(t, comm_end);
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab11) 2: the model's time of a whole step (section 2): buckets,
    //   one AllReduce at a time, compute slowed while one runs.
    (void)m, (void)p;
    return 0;
    END SKELETON */
}

cl_result lab11_plan_step(const lab11_model *m, lab11_plan *out)
{
    /* BEGIN SOLUTION */
    if (m->layers < 1 || m->layers > LAB11_MAX_LAYERS || m->max_channels < 1 ||
        m->max_channels >= m->sms || !(m->slot_bytes > 0) || !(m->link_Bps > 0)) {
        cl_set_error("no plan for this model (layers %d, channels %d of %d SMs)", m->layers,
                     m->max_channels, m->sms);
        return CL_ERR_INVALID;
    }
    /* Every channel count, and every bucket that closes at a layer boundary. */
    double best = INFINITY, acc = 0;
    for (int k = m->layers - 1; k >= 0; k--) {
        acc += m->layer_bytes[k];
        for (int c = 1; c <= m->max_channels; c++) {
            lab11_plan p = {.channels = c, .bucket_bytes = acc, .parts = 1};
            double t = lab11_step_s(m, &p);
            if (t < best) {
                best = t;
                *out = p;
            }
        }
    }
    /* Cut the kernels so that a part lasts about one round of the AllReduce:
     * the next round is posted only between parts. */
    double round = m->alpha_s + out->channels * m->slot_bytes / m->link_Bps, longest = 0;
    for (int l = 0; l < m->layers; l++)
        longest = fmax(longest, m->layer_s[l]);
    double parts = ceil(longest / round);
    out->parts = parts < 1 ? 1 : parts > LAB11_MAX_PARTS ? LAB11_MAX_PARTS : (int)parts;
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab11) 3: your decision (section 3): the channels, the bucket size and
    //   the parts of every kernel for machine m.
    (void)m, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab11_step(cl_comm *c, const lab11_model *m, const lab11_plan *p, float *grads,
                     float *scratch)
{
    /* BEGIN SOLUTION */
    size_t slot = (size_t)(m->slot_bytes / sizeof(float)), off[LAB11_MAX_LAYERS],
           len[LAB11_MAX_LAYERS], start = 0;
    int nb = 0, next = 0, active = 0, done = 0;
    double acc = 0;
    lab11_allreduce ar;
    for (int l = m->layers - 1; l >= 0; l--) {
        for (int part = 0; part < p->parts; part++) {
            CL_CHECK(lab11_compute(c, l, part, p->parts));
            if (active) { /* keep the AllReduce moving between parts */
                CL_CHECK(lab11_ar_progress(&ar, &done));
                active = !done;
            }
            if (!active && next < nb) {
                CL_CHECK(lab11_ar_start(&ar, c, m, grads + off[next], scratch, len[next],
                                        p->channels, slot));
                active = !ar.done, next++;
            }
        }
        acc += m->layer_bytes[l];
        if (acc >= p->bucket_bytes || l == 0) { /* this bucket's gradients all exist now */
            off[nb] = start, len[nb] = (size_t)(acc / sizeof(float));
            start += len[nb++];
            acc = 0;
        }
        if (!active && next < nb) {
            CL_CHECK(lab11_ar_start(&ar, c, m, grads + off[next], scratch, len[next], p->channels,
                                    slot));
            active = !ar.done, next++;
        }
    }
    while (active || next < nb) {
        if (active)
            CL_CHECK(lab11_ar_finish(&ar));
        active = 0;
        if (next < nb) {
            CL_CHECK(lab11_ar_start(&ar, c, m, grads + off[next], scratch, len[next], p->channels,
                                    slot));
            active = !ar.done, next++;
        }
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab11) 4: the overlapped step (section 4): every layer's kernel in
    //   parts, each bucket's AllReduce started as soon as its gradients exist
    //   and kept moving between parts, everything finished before you return.
    (void)c, (void)m, (void)p, (void)grads, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
