/* driver.c: lab 11's plug-in: a modelled GPU whose SMs compute and communicate, and the step.
 *
 *   lab11 model ranks=8 sms=132 layers=4 layer_s=1e-4 layer_bytes=8388608 alpha_s=3.4e-6
 *         link_gbps=370 slot_bytes=524288 max_channels=32 channels=8 bucket_bytes=1.6e7
 *         parts=4 bytes=3.2e7
 *       your model's AllReduce time (bytes, channels), step time (the plan given),
 *       and your plan for that machine
 *   lab11 step [--backend cpu|sim] [--repeats 3]      (2 or more ranks)
 *       measures the link and the library's AllReduce of the gradients, sizes the
 *       kernels to --ratio x that AllReduce, asks your plan, then, each repeat:
 *       the kernels alone, the library's AllReduce alone, your overlapped step
 *   lab11 gpu [--repeats 5]                            (gpu, one rank per GPU)
 *       your plan on real GPUs: see harness/gpu.c
 *
 * The modelled GPU (the lab's operation LAB11_OP_COMPUTE) is the harness's:
 * a kernel part lasts layer_s / parts x S / (S - k), k the channels of the
 * rank's transfers in flight when it starts (common/boundary/inspect.h), in
 * virtual time on "sim" and spinning on "cpu" while MPI keeps moving the data,
 * as a GPU's copy engines and communication kernels do without the host.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness.h"
#include "lab11.h"
#include "lab11_ops.h"

typedef struct model_args {
    lab11_model m;
    lab11_plan p; /* the plan whose step time is asked */
    double bytes; /* the AllReduce whose time is asked */
    int channels;
    double allreduce_s, step_s; /* out */
    int plan_status;            /* out */
    lab11_plan plan;            /* out: your plan for m */
} model_args;

typedef struct step_args {
    lab11_model m;
    lab11_plan p;
    float *grads, *scratch;
} step_args;

#ifdef CL_STUDENT_SIDE

static cl_result model(cl_comm *c, void *args)
{
    (void)c;
    model_args *a = args;
    a->allreduce_s = lab11_allreduce_s(&a->m, a->bytes, a->channels);
    a->step_s = lab11_step_s(&a->m, &a->p);
    cl_clear_error();
    a->plan_status = lab11_plan_step(&a->m, &a->plan);
    return CL_OK;
}

static cl_result plan(cl_comm *c, void *args)
{
    (void)c;
    step_args *a = args;
    return lab11_plan_step(&a->m, &a->p);
}

static cl_result step(cl_comm *c, void *args)
{
    step_args *a = args;
    return lab11_step(c, &a->m, &a->p, a->grads, a->scratch);
}

/* The baseline: every kernel, whole, with nothing else going on. */
static cl_result kernels(cl_comm *c, void *args)
{
    step_args *a = args;
    for (int l = a->m.layers - 1; l >= 0; l--)
        CL_CHECK(lab11_compute(c, l, 0, 1));
    return CL_OK;
}

CL_STUDENT_ENTRIES({"model", model}, {"plan", plan}, {"step", step}, {"kernels", kernels});

#else

#include "boundary/inspect.h"
#include "harness/lab11_gpu.h"
#include "harness/overlap.h"

/* --- the modelled GPU ------------------------------------------------------------------------ */

#define MAX_RANKS 256

typedef struct device {
    const lab11_model *m;
    int next_layer, next_part, parts;
    int fill; /* "sim": a layer's gradient appears when its kernel ends */
    float *grads;
    uint64_t seed;
    double kernel_s, sm_s;  /* time charged, and time x SMs taken by communication */
    double start, last_end; /* the rank's clock at the step's start, at its last kernel's end */
} device;

static device dev[MAX_RANKS];

static void device_reset(int rank, const lab11_model *m, float *grads, int fill, uint64_t seed)
{
    dev[rank] =
        (device){.m = m, .next_layer = m->layers - 1, .grads = grads, .fill = fill, .seed = seed};
}

/* Offset (floats) of layer l's gradient: layers-1 comes first. */
static size_t layer_offset(const lab11_model *m, int l)
{
    double off = 0;
    for (int j = m->layers - 1; j > l; j--)
        off += m->layer_bytes[j];
    return (size_t)(off / sizeof(float));
}

static cl_result lab_op(cl_run *run, cl_comm *c, int code, void *args, size_t bytes)
{
    (void)run;
    lab11_compute_args *a = args;
    int r = cl_comm_rank(c);
    device *d = r < MAX_RANKS ? &dev[r] : NULL;
    if (code != LAB11_OP_COMPUTE || bytes != sizeof *a || !d || !d->m) {
        cl_set_error("lab 11 has no such operation here");
        return CL_ERR_INVALID;
    }
    if (a->layer != d->next_layer || a->part != d->next_part || a->parts < 1 ||
        a->parts > LAB11_MAX_PARTS || (a->part > 0 && a->parts != d->parts)) {
        cl_set_error("kernel part %d/%d of layer %d out of order: next is part %d of layer %d",
                     a->part, a->parts, a->layer, d->next_part, d->next_layer);
        return CL_ERR_INVALID;
    }
    d->parts = a->parts;
    int sms = d->m->sms, k = (cl_student_in_flight(c) + 1) / 2;
    k = k > sms - 1 ? sms - 1 : k;
    double s = d->m->layer_s[a->layer] / a->parts * sms / (sms - k);
    d->kernel_s += s, d->sm_s += s * k;
    CL_CHECK(cl_overlap_busy_until(c, cl_comm_time(c) + s));
    d->last_end = cl_comm_time(c);
    if (++d->next_part < a->parts)
        return CL_OK;
    if (d->fill) { /* the layer's gradients exist from now on */
        size_t off = layer_offset(d->m, a->layer);
        CL_CHECK(cl_fill(c, d->grads + off, (size_t)(d->m->layer_bytes[a->layer] / sizeof(float)),
                         CL_FLOAT32, CL_SUM, d->seed, r, off));
    }
    d->next_part = 0;
    d->next_layer--;
    return CL_OK;
}

/* --- the model's cases ------------------------------------------------------------------------ */

/* "v" or "v1,v2,..." into n values (one value: all n the same). */
static cl_result values(cl_case *c, const char *key, double *out, int n)
{
    const char *text;
    CL_CHECK(cl_case_str(c, key, &text));
    int k = 0;
    for (const char *p = text; *p && k < n; k++) {
        char *end;
        out[k] = strtod(p, &end);
        if (end == p || (*end && *end != ',')) {
            cl_set_error("%s: expected numbers separated by commas at '%.20s'", key, p);
            return CL_ERR_INVALID;
        }
        p = *end ? end + 1 : end;
    }
    if (k == 1)
        for (int i = 1; i < n; i++)
            out[i] = out[0];
    else if (k != n) {
        cl_set_error("%s: %d values for %d layers", key, k, n);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

static cl_result model_case(cl_case *c)
{
    model_args a;
    long long n;
    double v;
    memset(&a, 0, sizeof a);
    CL_CHECK(cl_case_int(c, "layers", &n));
    if (n < 1 || n > LAB11_MAX_LAYERS) {
        cl_set_error("layers=%lld (1 to %d)", n, LAB11_MAX_LAYERS);
        return CL_ERR_INVALID;
    }
    a.m.layers = (int)n;
    CL_CHECK(values(c, "layer_s", a.m.layer_s, a.m.layers));
    CL_CHECK(values(c, "layer_bytes", a.m.layer_bytes, a.m.layers));
    CL_CHECK(cl_case_int(c, "ranks", &n));
    a.m.ranks = (int)n;
    CL_CHECK(cl_case_int(c, "sms", &n));
    a.m.sms = (int)n;
    CL_CHECK(cl_case_int(c, "max_channels", &n));
    a.m.max_channels = (int)n;
    CL_CHECK(cl_case_num(c, "alpha_s", &a.m.alpha_s));
    CL_CHECK(cl_case_num(c, "link_gbps", &v));
    a.m.link_Bps = v * 1e9;
    CL_CHECK(cl_case_num(c, "slot_bytes", &a.m.slot_bytes));
    CL_CHECK(cl_case_int(c, "channels", &n));
    a.p.channels = a.channels = (int)n;
    CL_CHECK(cl_case_num(c, "bucket_bytes", &a.p.bucket_bytes));
    CL_CHECK(cl_case_int(c, "parts", &n));
    a.p.parts = (int)n;
    CL_CHECK(cl_case_num(c, "bytes", &a.bytes));
    cl_result rc = cl_case_call(c, "model", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    cl_col_num(row, "allreduce_s", a.allreduce_s, "%.9g");
    cl_col_num(row, "step_s", a.step_s, "%.9g");
    cl_col_str(row, "plan_status", cl_result_str((cl_result)a.plan_status));
    cl_col_int(row, "plan_channels", a.plan.channels);
    cl_col_num(row, "plan_bucket_bytes", a.plan.bucket_bytes, "%.9g");
    cl_col_int(row, "plan_parts", a.plan.parts);
    return rc;
}

/* --- the step -----------------------------------------------------------------------------------
 */

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
    m->sms = atoi(cl_opt(run, "sms"));
    m->layers = atoi(cl_opt(run, "layers"));
    m->max_channels = LAB11_MAX_CHANNELS;
    double ratio = atof(cl_opt(run, "ratio"));
    if (m->layers < 1 || m->layers > LAB11_MAX_LAYERS || m->sms <= m->max_channels ||
        !(ratio > 0) || slot < sizeof(float) || grad < (size_t)m->layers * sizeof(float)) {
        cl_set_error("bad --layers, --sms, --ratio, --slot or --grad");
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
    int r = cl_comm_rank(c), sim = strcmp(cl_comm_backend(c), "sim") == 0;
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

static cl_result step_mode(cl_run *run, cl_comm *c)
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
static cl_result gpu_mode(cl_run *run, cl_comm *c)
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

static const cl_mode modes[] = {
    {.name = "model",
     .help = "your model's times and your plan for one machine",
     .cases = model_case},
    {.name = "step",
     .help = "kernels alone, the library's AllReduce alone, your step",
     .ranks = step_mode,
     .min_ranks = 2,
     .backends = "cpu,sim"},
    {.name = "gpu",
     .help = "your plan on real GPUs: kernels and bucketed ncclAllReduce",
     .ranks = gpu_mode,
     .min_ranks = 2,
     .backends = "gpu"},
    {0}};

static const cl_option options[] = {
    {.name = "layers", .help = "N  step: layers of the backward pass", .fallback = "24"},
    {.name = "sms", .help = "S  step: SMs of the modelled GPU (H100 SXM: 132)", .fallback = "132"},
    {.name = "ratio", .help = "R  step: kernels = R x the library's AllReduce", .fallback = "2.5"},
    {.name = "grad", .help = "BYTES  step: gradients per rank (cpu 32M, sim 256M)"},
    {.name = "slot", .help = "BYTES  step: a channel's largest message (cpu 4M, sim 512K)"},
    {0}};

const cl_lab cl_lab_def = {
    .name = "lab11",
    .title = "SM 资源与计算通信重叠",
    .modes = modes,
    .options = options,
    .lab_op = lab_op,
    .arena_bytes = (size_t)256 << 20, /* "cpu": the gradients, the result, the scratch */
};

#endif
