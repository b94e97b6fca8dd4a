/* harness_step.c: lab 11's step and gpu modes: the machine measured (the link by the
 * harness's own ping-pong, the library's AllReduce, kernels sized to --ratio x it), the
 * student's plan asked on every rank and checked, then each repeat: the kernels alone, the
 * library's AllReduce alone, the student's overlapped step (on the modelled GPU of
 * harness_device.c, or on real GPUs by harness/gpu.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness/lab11_gpu.h"
#include "harness/overlap.h"
#include "lab11_harness.h"

/* One-way seconds of `bytes` between ranks 0 and 1 (the harness's own ping-pong),
 * the maximum over ranks, median of 5. */
static cl_result one_way(cl_comm *c, void *buf, size_t bytes, double *out)
{
    double t[5];
    int r = cl_comm_rank(c);
    for (int i = 0; i < 5; i++) {
        CL_CHECK(cl_barrier(c));
        double t0 = cl_comm_time(c);
        for (int k = 0; k < 4 && r <= 1; k++) {
            if (r == 0) {
                CL_CHECK(cl_send(c, buf, bytes, 1));
                CL_CHECK(cl_recv(c, buf, bytes, 1));
            } else {
                CL_CHECK(cl_recv(c, buf, bytes, 0));
                CL_CHECK(cl_send(c, buf, bytes, 0));
            }
        }
        t[i] = r <= 1 ? (cl_comm_time(c) - t0) / 8 : 0;
        CL_CHECK(cl_agree_max(c, &t[i], 1));
    }
    *out = cl_median(t, 5);
    return CL_OK;
}

/* The largest transfer of this rank's last call (its trace). */
static size_t largest_message(const cl_comm *c)
{
    int n;
    size_t most = 0;
    const cl_trace_event *ev = cl_student_trace(c, &n);
    for (int i = 0; i < n; i++)
        if ((ev[i].op == CL_WOP_ISEND || ev[i].op == CL_WOP_IRECV) && ev[i].bytes > most)
            most = ev[i].bytes;
    return most;
}

/* The machine, the link as measured, and kernels sized to ratio x the library's AllReduce. */
static cl_result build_model(cl_run *run, cl_comm *c, const cl_overlap *o, size_t slot,
                             lab11_model *m)
{
    size_t grad = o->count * sizeof(float);
    memset(m, 0, sizeof *m);
    m->ranks = cl_comm_size(c);
    m->max_channels = LAB11_MAX_CHANNELS;
    double ratio;
    CL_CHECK(cl_opt_int(run, "sms", m->max_channels + 1, 100000, &m->sms));
    CL_CHECK(cl_opt_int(run, "layers", 1, LAB11_MAX_LAYERS, &m->layers));
    CL_CHECK(cl_opt_num(run, "ratio", 1e-3, 1e3, &ratio));
    if (slot < sizeof(float) || grad < (size_t)m->layers * sizeof(float)) {
        cl_set_error("--slot must hold a float and --grad one float per layer");
        return CL_ERR_INVALID;
    }
    double small, large, comm;
    CL_CHECK(one_way(c, o->grads, 8, &small));
    CL_CHECK(one_way(c, o->grads, slot, &large));
    m->alpha_s = small;
    m->link_Bps = (double)slot / fmax(large - small, 1e-9);
    m->slot_bytes = (double)slot;
    CL_CHECK(cl_overlap_allreduce(c, o, &comm)); /* warm-up */
    CL_CHECK(cl_overlap_allreduce(c, o, &comm));
    size_t per = grad / (size_t)m->layers / sizeof(float) * sizeof(float);
    for (int l = 0; l < m->layers; l++) {
        m->layer_bytes[l] = (double)(l == 0 ? grad - per * (size_t)(m->layers - 1) : per);
        m->layer_s[l] = ratio * comm / m->layers;
    }
    return CL_OK;
}

/* Every rank must have got the same plan. */
static cl_result same_plan(cl_comm *c, const lab11_plan *p)
{
    int64_t mx[3] = {p->channels, p->parts, llround(p->bucket_bytes)};
    int64_t mn[3] = {-mx[0], -mx[1], -mx[2]};
    CL_CHECK(cl_agree(c, CL_MAX, mx, 3));
    CL_CHECK(cl_agree(c, CL_MAX, mn, 3));
    if (mx[0] != -mn[0] || mx[1] != -mn[1] || mx[2] != -mn[2]) {
        cl_set_error("your plan differs between ranks");
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

/* What a repeat of the step shows beside the overlap's sample. */
typedef struct step_extra {
    double comm_sms;
    double busy_s, compute_end_s; /* kernel time in the step; when its last kernel ended */
    double unfinished, largest;
} step_extra;

/* One repeat: the kernels alone, the library's AllReduce alone, your step. */
static cl_result repeat(cl_run *run, cl_comm *c, const cl_overlap *o, step_args *a,
                        cl_overlap_sample *s, step_extra *x)
{
    int r = cl_comm_rank(c), sim = cl_comm_on_sim(c);
    uint64_t seed;
    double seconds;
    size_t wrong;
    device_reset(r, &a->m, o->grads, 0, 0);
    CL_CHECK(cl_overlap_alone(c, o, s));
    CL_CHECK(cl_fresh_seed(run, c, &seed));
    if (sim) /* the kernels write the gradients; until then they are garbage */
        CL_CHECK(cl_poison(c, o->grads, o->count * sizeof(float), CL_FLOAT32));
    else
        CL_CHECK(cl_fill(c, o->grads, o->count, CL_FLOAT32, CL_SUM, seed, r, 0));
    device_reset(r, &a->m, o->grads, sim, seed);
    CL_CHECK(cl_overlap_step(c, o, seed, &dev[r].start, &seconds, &wrong));
    double t[4] = {seconds, dev[r].kernel_s > 0 ? dev[r].sm_s / dev[r].kernel_s : 0,
                   dev[r].kernel_s, dev[r].last_end - dev[r].start};
    double v[3] = {(double)wrong, dev[r].next_layer >= 0, (double)largest_message(c)};
    CL_CHECK(cl_agree_max(c, t, 4));
    CL_CHECK(cl_agree_max(c, v + 2, 1));
    CL_CHECK(cl_agree_sum(c, v, 2));
    s->step_s = t[0], x->comm_sms = t[1], x->busy_s = t[2], x->compute_end_s = t[3];
    s->wrong = v[0], x->unfinished = v[1], x->largest = v[2];
    return CL_OK;
}

cl_result step_mode(cl_run *run, cl_comm *c)
{
    step_args a;
    size_t grad, slot;
    int reps = cl_overlap_repeats(run);
    CL_CHECK(cl_opt_size(run, "grad", (size_t)32 << 20, (size_t)256 << 20, &grad));
    CL_CHECK(cl_opt_size(run, "slot", (size_t)4 << 20, (size_t)512 << 10, &slot));
    cl_overlap o = {.args = &a, .args_bytes = sizeof a};
    cl_result rc = CL_OK;
    memset(&a, 0, sizeof a);
    CL_TRY(cl_overlap_alloc(c, &o, grad / sizeof(float)));
    a.grads = o.grads;
    CL_TRY(build_model(run, c, &o, slot, &a.m));
    cl_call_result res;
    CL_TRY(cl_student_run(c, "plan", &a, sizeof a, 0, &res));
    CL_TRY(res.status);
    CL_TRY(same_plan(c, &a.p));
    if (a.p.channels < 1 || a.p.channels > a.m.max_channels || !(a.p.bucket_bytes > 0) ||
        a.p.parts < 1 || a.p.parts > LAB11_MAX_PARTS) {
        cl_set_error("your plan (channels %d, bucket %g B, parts %d) is outside the rules",
                     a.p.channels, a.p.bucket_bytes, a.p.parts);
        rc = CL_ERR_INVALID;
        goto done;
    }
    CL_TRY(cl_mem_alloc(c, (size_t)a.p.channels * slot, (void **)&a.scratch));
    cl_report_int(run, "layers", a.m.layers);
    cl_report_int(run, "sms", a.m.sms);
    cl_report_num(run, "grad_bytes", (double)(o.count * sizeof(float)));
    cl_report_num(run, "slot_bytes", a.m.slot_bytes);
    cl_report_num(run, "alpha_us", a.m.alpha_s * 1e6);
    cl_report_num(run, "link_gbps", a.m.link_Bps / 1e9);
    cl_report_num(run, "layer_us", a.m.layer_s[0] * 1e6);
    cl_report_int(run, "plan_channels", a.p.channels);
    cl_report_num(run, "plan_bucket_bytes", a.p.bucket_bytes);
    cl_report_int(run, "plan_parts", a.p.parts);
    cl_overlap_sample s[CL_OVERLAP_MAX_SAMPLES];
    step_extra x[CL_OVERLAP_MAX_SAMPLES];
    for (int i = 0; i < reps; i++)
        CL_TRY(repeat(run, c, &o, &a, &s[i], &x[i]));
    double busy_s[CL_OVERLAP_MAX_SAMPLES], end[CL_OVERLAP_MAX_SAMPLES];
    double sms = 0, unfinished = 0, largest = 0;
    for (int i = 0; i < reps; i++) {
        busy_s[i] = x[i].busy_s, end[i] = x[i].compute_end_s;
        sms = fmax(sms, x[i].comm_sms), unfinished += x[i].unfinished;
        largest = fmax(largest, x[i].largest);
    }
    cl_row *row = cl_overlap_row(run, c, s, reps);
    cl_col_nums(row, "step_kernels_s", busy_s, (size_t)reps, "%.6f");
    cl_col_nums(row, "last_kernel_end_s", end, (size_t)reps, "%.6f");
    cl_col_num(row, "comm_sms", sms, "%.2f");
    cl_col_int(row, "wrong", cl_overlap_wrong(s, reps));
    cl_col_int(row, "unfinished", (long long)unfinished);
    cl_col_int(row, "largest_message", (long long)largest);
    cl_row_end(row);
done:
    if (a.scratch)
        cl_mem_free(c, a.scratch);
    cl_overlap_free(c, &o);
    return rc;
}

/* Your plan on real GPUs (harness/gpu.c): the model from this machine (its SMs,
 * the link as measured, NCCL's AllReduce), your plan, then the real step. */
cl_result gpu_mode(cl_run *run, cl_comm *c)
{
    step_args a;
    size_t grad;
    int reps = cl_overlap_repeats(run);
    CL_CHECK(cl_opt_size(run, "grad", (size_t)256 << 20, (size_t)256 << 20, &grad));
    cl_overlap o = {.args = &a, .args_bytes = sizeof a};
    cl_result rc = CL_OK;
    memset(&a, 0, sizeof a);
    CL_TRY(cl_overlap_alloc(c, &o, grad / sizeof(float)));
    a.grads = o.grads;
    CL_TRY(build_model(run, c, &o, (size_t)512 << 10, &a.m));
    CL_TRY(lab11_gpu_sms(&a.m.sms));
    a.m.max_channels = a.m.sms / 4 < LAB11_MAX_CHANNELS ? a.m.sms / 4 : LAB11_MAX_CHANNELS;
    cl_call_result res;
    CL_TRY(cl_student_run(c, "plan", &a, sizeof a, 0, &res));
    CL_TRY(res.status);
    CL_TRY(same_plan(c, &a.p));
    if (a.p.channels < 1 || a.p.channels > a.m.max_channels || !(a.p.bucket_bytes > 0)) {
        cl_set_error("your plan (channels %d, bucket %g B) is outside the rules", a.p.channels,
                     a.p.bucket_bytes);
        rc = CL_ERR_INVALID;
        goto done;
    }
    cl_report_int(run, "sms", a.m.sms);
    cl_report_int(run, "plan_channels", a.p.channels);
    cl_report_num(run, "plan_bucket_bytes", a.p.bucket_bytes);
    cl_overlap_sample s[CL_OVERLAP_MAX_SAMPLES];
    CL_TRY(lab11_gpu_steps(c, &a.m, &a.p, reps, s));
    cl_overlap_gpu_row(run, c, s, reps);
done:
    cl_overlap_free(c, &o);
    return rc;
}
