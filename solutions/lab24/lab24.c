/* lab24.c: lab 24, DDP's gradient buckets, each AllReduced while the backward pass goes on.
 *
 * PyTorch's DistributedDataParallel groups gradients into buckets in the order
 * they become ready, and starts a bucket's AllReduce as soon as its last
 * gradient exists, so that communication hides behind the rest of the backward
 * pass. You write DDP's bucket assignment, a non-blocking ring AllReduce that
 * moves on only when your code calls it, the overlapped step, and the choice of
 * bucket sizes for a machine. Read labs/lab24/README.md first; the TODOs below
 * follow its sections. Build with `make lab24`, grade with `./grade lab24`.
 */
#include <math.h>
#include <string.h>

#include "coll.h"
#include "lab24.h"

cl_result lab24_assign(const lab24_model *m, const lab24_caps *caps, lab24_buckets *out)
{
    /* BEGIN SOLUTION */
    int n = m->params;
    if (n < 1 || n > LAB24_MAX_PARAMS || !(caps->first_cap > 0) || !(caps->cap > 0)) {
        cl_set_error("no buckets for %d parameters with caps %g and %g bytes", n, caps->first_cap,
                     caps->cap);
        return CL_ERR_INVALID;
    }
    /* The ready order, reversed when the small bucket is to come last. */
    int list[LAB24_MAX_PARAMS];
    for (int i = 0; i < n; i++)
        list[i] = m->order[caps->last_small ? n - 1 - i : i];
    double limits[2] = {caps->first_cap, caps->cap}, size = 0;
    int limit = 0, at = 0;
    out->n = 0;
    out->start[0] = 0;
    for (int i = 0; i < n; i++) {
        out->param[at++] = list[i];
        size += m->bytes[list[i]];
        if (size >= limits[limit]) { /* full: close it, and use the next limit from now on */
            out->start[++out->n] = at;
            size = 0;
            limit = 1;
        }
    }
    if (out->start[out->n] != at)
        out->start[++out->n] = at;
    if (caps->last_small) { /* the buckets were built from the end: put them back in order */
        lab24_buckets rev = *out;
        int k = 0;
        for (int b = out->n - 1; b >= 0; b--) {
            out->start[out->n - 1 - b] = k;
            for (int j = rev.start[b]; j < rev.start[b + 1]; j++)
                out->param[k++] = rev.param[j];
        }
        out->start[out->n] = k;
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab24) 1: DDP's bucket assignment (section 1 of the handout).
    (void)m, (void)caps, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* BEGIN SOLUTION */
static int mod(int a, int p) { return ((a % p) + p) % p; }

/* Post the current step: receive block recv from the left, send block send right. */
static cl_result post_step(lab24_allreduce *ar)
{
    int p = ar->ranks, r = ar->rank, rs = ar->step < p - 1;
    int k = rs ? ar->step : ar->step - (p - 1);
    int send = rs ? mod(r - k, p) : mod(r + 1 - k, p),
        recv = rs ? mod(r - k - 1, p) : mod(r - k, p);
    size_t soff, slen, roff, rlen;
    cl_coll_block(ar->count, p, send, &soff, &slen);
    cl_coll_block(ar->count, p, recv, &roff, &rlen);
    ar->req[0] = ar->req[1] = (cl_request){0};
    if (rlen)
        CL_CHECK(cl_irecv(ar->comm, rs ? ar->scratch : ar->buf + roff, rlen * sizeof(float),
                          mod(r - 1, p), &ar->req[0]));
    if (slen)
        CL_CHECK(
            cl_isend(ar->comm, ar->buf + soff, slen * sizeof(float), mod(r + 1, p), &ar->req[1]));
    ar->due = cl_comm_time(ar->comm) + ar->alpha_s + (double)slen * sizeof(float) / ar->link_Bps;
    return CL_OK;
}

/* The step's transfers are over: add what came in (reduce-scatter half), move on. */
static cl_result next_step(lab24_allreduce *ar)
{
    int p = ar->ranks, r = ar->rank;
    if (ar->step < p - 1) {
        size_t roff, rlen;
        cl_coll_block(ar->count, p, mod(r - ar->step - 1, p), &roff, &rlen);
        if (rlen)
            CL_CHECK(
                cl_reduce_local(ar->comm, ar->buf + roff, ar->scratch, rlen, CL_FLOAT32, CL_SUM));
    }
    if (++ar->step == 2 * (p - 1)) {
        ar->done = 1;
        return CL_OK;
    }
    return post_step(ar);
}
/* END SOLUTION */
cl_result lab24_ar_start(lab24_allreduce *ar, cl_comm *c, const lab24_model *m, float *buf,
                         size_t count, float *scratch)
{
    /* BEGIN SOLUTION */
    *ar = (lab24_allreduce){.comm = c,
                            .buf = buf,
                            .scratch = scratch,
                            .count = count,
                            .rank = cl_comm_rank(c),
                            .ranks = cl_comm_size(c),
                            .alpha_s = m->alpha_s,
                            .link_Bps = m->link_Bps > 0 ? m->link_Bps : 1e12};
    if (ar->ranks == 1 || count == 0) {
        ar->done = 1;
        return CL_OK;
    }
    return post_step(ar);
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab24) 2: start the ring AllReduce (section 2): post its first step.
    (void)ar, (void)c, (void)m, (void)buf, (void)count, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab24_ar_progress(lab24_allreduce *ar, int *done)
{
    /* BEGIN SOLUTION */
    while (!ar->done && cl_comm_time(ar->comm) >= ar->due) {
        for (int i = 0; i < 2; i++) {
            int fin = 1;
            if (ar->req[i].id)
                CL_CHECK(cl_test(ar->comm, &ar->req[i], &fin));
            if (!fin) { /* not yet: ask again at the next call */
                *done = 0;
                return CL_OK;
            }
        }
        CL_CHECK(next_step(ar));
    }
    *done = ar->done;
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab24) 2: move the AllReduce on without waiting (section 2).
    (void)ar;
    *done = 0;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab24_ar_finish(lab24_allreduce *ar)
{
    /* BEGIN SOLUTION */
    while (!ar->done) {
        CL_CHECK(cl_waitall(ar->comm, 2, ar->req));
        CL_CHECK(next_step(ar));
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab24) 2: wait for the AllReduce to complete (section 2).
    (void)ar;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab24_step(cl_comm *c, const lab24_model *m, const lab24_buckets *b, float *grads,
                     float *scratch)
{
    /* BEGIN SOLUTION */
    int bucket_of[LAB24_MAX_PARAMS], pending[LAB24_MAX_PARAMS];
    size_t off[LAB24_MAX_PARAMS + 1];
    off[0] = 0;
    for (int k = 0; k < b->n; k++) {
        double bytes = 0;
        pending[k] = b->start[k + 1] - b->start[k];
        for (int j = b->start[k]; j < b->start[k + 1]; j++) {
            bucket_of[b->param[j]] = k;
            bytes += m->bytes[b->param[j]];
        }
        off[k + 1] = off[k] + (size_t)(bytes / sizeof(float));
    }
    lab24_allreduce ar = {.done = 1};
    int next = 0, left = 1, done;
    while (left > 0) {
        int ready[2], nready;
        CL_CHECK(lab24_backward(c, ready, &nready, &left));
        for (int i = 0; i < nready; i++)
            pending[bucket_of[ready[i]]]--;
        if (!ar.done)
            CL_CHECK(lab24_ar_progress(&ar, &done));
        /* Buckets go out in order, one at a time: every rank posts the same messages
         * in the same order, so they match. */
        if (ar.done && next < b->n && pending[next] == 0) {
            CL_CHECK(
                lab24_ar_start(&ar, c, m, grads + off[next], off[next + 1] - off[next], scratch));
            next++;
        }
    }
    for (;;) { /* the backward pass is over: the rest, blocking */
        CL_CHECK(lab24_ar_finish(&ar));
        if (next == b->n)
            break;
        CL_CHECK(lab24_ar_start(&ar, c, m, grads + off[next], off[next + 1] - off[next], scratch));
        next++;
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab24) 3: the overlapped step (section 3): the whole backward pass, each
    //   bucket's AllReduce started once its gradients exist and moved on between
    //   parts, everything summed before you return.
    (void)c, (void)m, (void)b, (void)grads, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* BEGIN SOLUTION */
/* The step an event model predicts for buckets bk, as lab24_step runs them: the
 * backward pass in parts of the quantum; after each part, the AllReduce in flight
 * moves one ring step on if that step is over (a reduction costs the rank's time),
 * and the next bucket starts once it is ready and the link is free; when the
 * backward pass is over, the rest runs back to back. */
static double model_step(const lab24_model *m, const lab24_buckets *bk)
{
    double ready[LAB24_MAX_PARAMS], size[LAB24_MAX_PARAMS], ready_of[LAB24_MAX_PARAMS];
    int p = m->ranks, nb = bk->n;
    for (int k = 0; k < m->params; k++)
        ready_of[m->order[k]] = m->ready_s[k];
    for (int b = 0; b < nb; b++) {
        ready[b] = size[b] = 0;
        for (int j = bk->start[b]; j < bk->start[b + 1]; j++) {
            size[b] += m->bytes[bk->param[j]];
            ready[b] = fmax(ready[b], ready_of[bk->param[j]]);
        }
    }
    double q = m->quantum_s > 0 ? m->quantum_s : m->compute_s / 1000, t = 0, done = 0, due = 0,
           raw = 0, add = 0;
    int next = 0, step = -1, steps = 2 * (p - 1);
    while (done < m->compute_s || step >= 0 || next < nb) {
        int computing = done < m->compute_s;
        if (computing) {
            double part = fmin(q, m->compute_s - done);
            t += part, done += part;
        } else if (step >= 0) {
            t = fmax(t, due);
        }
        if (step >= 0 && t >= due) {
            if (step < p - 1)
                t += add;
            if (++step == steps)
                step = -1;
            else
                due = t + raw;
        }
        if (step < 0 && next < nb && (ready[next] <= done || !computing)) {
            double block = ceil(size[next] / sizeof(float) / p) * sizeof(float);
            raw = m->alpha_s + block / m->link_Bps;
            add = m->reduce_Bps > 0 ? block / m->reduce_Bps : 0;
            step = p > 1 ? 0 : -1, due = t + raw;
            next++;
        }
    }
    return t;
}
/* END SOLUTION */
cl_result lab24_choose(const lab24_model *m, lab24_caps *out)
{
    /* BEGIN SOLUTION */
    double total = 0, best = INFINITY;
    for (int i = 0; i < m->params; i++)
        total += m->bytes[i];
    if (m->ranks < 1 || m->params < 1 || !(total > 0) || !(m->link_Bps > 0)) {
        cl_set_error("no choice for %d parameters on %d ranks", m->params, m->ranks);
        return CL_ERR_INVALID;
    }
    /* Caps on a geometric grid from 64 KiB to everything in one bucket. */
    static lab24_buckets bk;
    for (double cap = 65536; cap < 2 * total; cap *= 1.25)
        for (double first = 65536; first <= cap; first *= 2)
            for (int last = 0; last <= 1; last++) {
                lab24_caps c = {.first_cap = first, .cap = cap, .last_small = last};
                CL_CHECK(lab24_assign(m, &c, &bk));
                double t = model_step(m, &bk);
                if (t < best * (1 - 1e-9)) {
                    best = t;
                    *out = c;
                }
            }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab24) 4: your decision (section 4): the bucket sizes for machine m.
    (void)m, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
