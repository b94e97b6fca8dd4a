/* driver.c: lab 24's plug-in: a backward pass that produces gradients, and DDP's buckets over it.
 *
 *   lab24 assign sizes=4096,1024,... order=1,0,... first_cap=1048576 cap=26214400 last_small=0
 *       your bucket assignment for those gradients and caps
 *   lab24 step [--backend cpu|sim] [--repeats 3]            (2 or more ranks)
 *       measures the link and the library's AllReduce of all the gradients, sizes the
 *       backward pass to --ratio x that AllReduce, asks your caps and buckets, then,
 *       each repeat: the backward pass alone, the library's AllReduce alone, your step
 *   lab24 gpu [--repeats 5]                                  (gpu, one rank per GPU)
 *       your buckets on real GPUs: see harness_gpu.c
 *
 * The backward pass (the lab's operation LAB24_OP_BACKWARD) is the harness's: a
 * GPT-style stack of layers whose kernels run from the last layer to the first,
 * each cut into parts no longer than the quantum. A kernel's gradients appear in
 * the flat gradient buffer when its last part ends: in virtual time on "sim", and
 * on "cpu" while the harness spins and keeps MPI moving the posted transfers, as a
 * GPU computes while its copy engines and communication kernels move data.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness.h"
#include "lab24.h"
#include "lab24_ops.h"

typedef struct plan_args {
    lab24_model m;
    int forced;      /* the caps are given (--cap ...): only assign */
    lab24_caps caps; /* out, or in when forced */
    lab24_buckets b; /* out */
} plan_args;

typedef struct step_args {
    lab24_model m;
    lab24_buckets b;
    float *grads, *scratch;
} step_args;

/* The harness's measurement of a ring step as the student's program makes it. */
typedef struct ring_args {
    char *buf; /* 2 x bytes */
    size_t bytes;
    int iters;
} ring_args;

#ifdef CL_STUDENT_SIDE

static cl_result plan(cl_comm *c, void *args)
{
    (void)c;
    plan_args *a = args;
    if (!a->forced)
        CL_CHECK(lab24_choose(&a->m, &a->caps));
    return lab24_assign(&a->m, &a->caps, &a->b);
}

static cl_result assign(cl_comm *c, void *args)
{
    (void)c;
    plan_args *a = args;
    return lab24_assign(&a->m, &a->caps, &a->b);
}

static cl_result step(cl_comm *c, void *args)
{
    step_args *a = args;
    return lab24_step(c, &a->m, &a->b, a->grads, a->scratch);
}

/* iters ring steps: send to the next rank, receive from the previous, at once. */
static cl_result ring(cl_comm *c, void *args)
{
    ring_args *a = args;
    int r = cl_comm_rank(c), p = cl_comm_size(c);
    for (int i = 0; i < a->iters; i++)
        CL_CHECK(cl_sendrecv(c, a->buf, a->bytes, (r + 1) % p, a->buf + a->bytes, a->bytes,
                             (r + p - 1) % p));
    return CL_OK;
}

/* The baseline: the whole backward pass with nothing else going on. */
static cl_result kernels(cl_comm *c, void *args)
{
    (void)args;
    int ready[2], nready, left = 1;
    while (left > 0)
        CL_CHECK(lab24_backward(c, ready, &nready, &left));
    return CL_OK;
}

CL_STUDENT_ENTRIES({"plan", plan}, {"assign", assign}, {"step", step}, {"kernels", kernels},
                   {"ring", ring});

#else

#include "harness/overlap.h"
#include "harness_lab24.h"

/* --- the backward pass ------------------------------------------------------------------------ */

#define MAX_RANKS 256

typedef struct device {
    const lab24_net *net;
    int next_kernel, next_part, parts_left;
    float *grads;
    size_t off[LAB24_MAX_PARAMS]; /* floats: where each parameter's gradient lies */
    const float *stage;           /* "cpu": this rank's gradients, written when produced */
    uint64_t seed;
    double last_end; /* the rank's clock when its last kernel ended */
} device;

static device dev[MAX_RANKS];

static int on_sim(const cl_comm *c) { return strcmp(cl_comm_backend(c), "sim") == 0; }

static cl_result lab_op(cl_run *run, cl_comm *c, int code, void *args, size_t bytes)
{
    (void)run;
    lab24_backward_args *a = args;
    int r = cl_comm_rank(c);
    device *d = r < MAX_RANKS ? &dev[r] : NULL;
    if (code != LAB24_OP_BACKWARD || bytes != sizeof *a || !d || !d->net) {
        cl_set_error("lab 24 has no such operation here");
        return CL_ERR_INVALID;
    }
    if (d->next_kernel >= d->net->kernels) {
        cl_set_error("the backward pass is over: lab24_backward called after *left became 0");
        return CL_ERR_INVALID;
    }
    const lab24_kernel *k = &d->net->kernel[d->next_kernel];
    double part = k->s / k->parts, end = cl_comm_time(c) + part;
    int last = d->next_part + 1 == k->parts;
    a->nready = 0;
    if (last && !on_sim(c)) /* the kernel writes its gradients while it runs */
        for (int i = 0; i < k->nready; i++) {
            size_t o = d->off[k->ready[i]];
            memcpy(d->grads + o, d->stage + o, (size_t)d->net->bytes[k->ready[i]]);
        }
    CL_CHECK(cl_overlap_busy_until(c, end));
    d->last_end = cl_comm_time(c);
    d->parts_left--;
    if (!last) {
        d->next_part++;
    } else {
        for (int i = 0; i < k->nready; i++) {
            int p = k->ready[i];
            size_t o = d->off[p];
            if (on_sim(c)) /* the gradient exists from now on; before, it was garbage */
                CL_CHECK(cl_fill(c, d->grads + o, (size_t)(d->net->bytes[p] / sizeof(float)),
                                 CL_FLOAT32, CL_SUM, d->seed, r, o));
            a->ready[a->nready++] = p;
        }
        d->next_part = 0;
        d->next_kernel++;
    }
    a->left = d->parts_left;
    return CL_OK;
}

static void device_reset(int r, const lab24_net *net, float *grads, const size_t *off,
                         const float *stage, uint64_t seed)
{
    dev[r] = (device){
        .net = net, .grads = grads, .stage = stage, .seed = seed, .parts_left = net->parts};
    memcpy(dev[r].off, off, sizeof dev[r].off);
}

/* --- the assignment's cases ---------------------------------------------------------------------
 */

/* A comma-separated list of up to max numbers. */
static cl_result numbers(cl_case *c, const char *key, double *out, int max, int *n)
{
    const char *text;
    CL_CHECK(cl_case_str(c, key, &text));
    *n = 0;
    for (const char *p = text; *p;) {
        char *end;
        if (*n == max) {
            cl_set_error("%s: more than %d values", key, max);
            return CL_ERR_INVALID;
        }
        out[(*n)++] = strtod(p, &end);
        if (end == p || (*end && *end != ',')) {
            cl_set_error("%s: expected numbers separated by commas at '%.20s'", key, p);
            return CL_ERR_INVALID;
        }
        p = *end ? end + 1 : end;
    }
    return CL_OK;
}

/* Buckets as text: "3,2|1,0" (parameters of bucket 0, then of bucket 1, ...). */
static void buckets_text(const lab24_buckets *b, int params, char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    if (b->n < 1 || b->n > params || b->start[0] != 0 || b->start[b->n] != params) {
        snprintf(out, len, "invalid");
        return;
    }
    for (int k = 0; k < b->n && at + 16 < len; k++)
        for (int j = b->start[k]; j < b->start[k + 1] && at + 16 < len; j++) {
            if (j < 0 || j >= params) {
                snprintf(out, len, "invalid");
                return;
            }
            at += (size_t)snprintf(out + at, len - at, "%s%d",
                                   j == b->start[k] ? (k ? "|" : "") : ",", b->param[j]);
        }
}

static cl_result assign_case(cl_case *c)
{
    static plan_args a;
    static double v[LAB24_MAX_PARAMS];
    static char text[LAB24_MAX_PARAMS * 8];
    int n, k;
    double x;
    memset(&a, 0, sizeof a);
    CL_CHECK(numbers(c, "sizes", a.m.bytes, LAB24_MAX_PARAMS, &n));
    CL_CHECK(numbers(c, "order", v, LAB24_MAX_PARAMS, &k));
    if (k != n) {
        cl_set_error("order: %d values for %d parameters", k, n);
        return CL_ERR_INVALID;
    }
    a.m.params = n;
    for (int i = 0; i < n; i++)
        a.m.order[i] = (int)v[i];
    CL_CHECK(cl_case_num(c, "first_cap", &a.caps.first_cap));
    CL_CHECK(cl_case_num(c, "cap", &a.caps.cap));
    CL_CHECK(cl_case_num(c, "last_small", &x));
    a.caps.last_small = x != 0;
    cl_result rc = cl_case_call(c, "assign", &a, sizeof a);
    buckets_text(&a.b, n, text, sizeof text);
    cl_col_int(cl_case_row(c), "buckets", a.b.n);
    cl_col_str(cl_case_row(c), "assignment", rc == CL_OK ? text : "");
    return rc;
}

/* --- the step ----------------------------------------------------------------------------------
 */

/* A lab option as a number, or the backend's default. */
static double num_opt(cl_run *run, const char *name, double cpu, double sim)
{
    const char *v = cl_opt(run, name);
    if (!v)
        return strcmp(cl_run_opts(run)->backend, "sim") == 0 ? sim : cpu;
    return atof(v);
}

/* Seconds of one ring step of `bytes` as the student's program makes it (given code:
 * every rank sends to the next and receives from the previous at once, through the
 * boundary, as the student's AllReduce will), the slowest rank's, median of 5. buf
 * holds 2 x bytes. */
static cl_result ring_step(cl_comm *c, char *buf, size_t bytes, double *out)
{
    double t[5];
    ring_args a = {.buf = buf, .bytes = bytes, .iters = 4};
    for (int i = 0; i < 5; i++) {
        cl_call_result res;
        CL_CHECK(cl_barrier(c));
        CL_CHECK(cl_student_run(c, "ring", &a, sizeof a, CL_ALLOW_P2P, &res));
        CL_CHECK(res.status);
        t[i] = res.seconds / a.iters;
        CL_CHECK(cl_agree_max(c, &t[i], 1));
    }
    *out = cl_median(t, 5);
    return CL_OK;
}

/* Seconds of cl_reduce_local over `count` floats, the slowest rank's, median of 5. */
static cl_result reduce_time(cl_comm *c, float *buf, size_t count, double *out)
{
    double t[5];
    for (int i = 0; i < 5; i++) {
        double t0 = cl_comm_time(c);
        CL_CHECK(cl_reduce_local(c, buf, buf + count, count, CL_FLOAT32, CL_SUM));
        t[i] = cl_comm_time(c) - t0;
        CL_CHECK(cl_agree_max(c, &t[i], 1));
    }
    *out = cl_median(t, 5);
    return CL_OK;
}

/* --cap, --first-cap, --last-small: caps to try instead of your choice. */
static cl_result forced_caps(cl_run *run, plan_args *p)
{
    const char *cap = cl_opt(run, "cap"), *first = cl_opt(run, "first-cap");
    const char *last = cl_opt(run, "last-small");
    if (!cap && !first && !last)
        return CL_OK;
    size_t v;
    p->forced = 1;
    p->caps = (lab24_caps){.first_cap = 1 << 20, .cap = 25 << 20}; /* DDP's defaults */
    if (cap) {
        CL_CHECK(cl_parse_size(cap, &v));
        p->caps.cap = (double)v;
    }
    if (first) {
        CL_CHECK(cl_parse_size(first, &v));
        p->caps.first_cap = (double)v;
    }
    p->caps.last_small = last && atoi(last) != 0;
    return CL_OK;
}

/* Every rank must have chosen the same buckets. */
static cl_result same_buckets(cl_comm *c, const lab24_buckets *b, int params)
{
    uint64_t h = (uint64_t)b->n; /* unsigned: the hash wraps */
    for (int i = 0; i <= b->n && i <= params; i++)
        h = h * 1000003 + (uint64_t)b->start[i];
    for (int i = 0; i < params; i++)
        h = h * 1000003 + (uint64_t)b->param[i];
    h &= ((uint64_t)1 << 62) - 1;
    int64_t v[2] = {(int64_t)h, -(int64_t)h};
    CL_CHECK(cl_agree(c, CL_MAX, v, 2));
    if (v[0] != -v[1]) {
        cl_set_error("your buckets differ between ranks");
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

/* The model the student gets: the measured link, the net's sizes, order and times. */
static cl_result build_model(cl_run *run, cl_comm *c, const lab24_net *net, float *buf,
                             lab24_model *m)
{
    memset(m, 0, sizeof *m);
    m->ranks = cl_comm_size(c);
    m->params = net->params;
    memcpy(m->bytes, net->bytes, sizeof m->bytes);
    memcpy(m->order, net->order, sizeof m->order);
    lab24_net_ready_times(net, m->ready_s);
    m->compute_s = net->compute_s;
    m->quantum_s = net->quantum_s;
    size_t probe;
    CL_CHECK(cl_opt_size(run, "probe", (size_t)4 << 20, (size_t)4 << 20, &probe));
    if (2 * probe > (size_t)net->total_bytes) {
        cl_set_error("--probe %zu: at most half the gradients' %.0f bytes", probe,
                     net->total_bytes);
        return CL_ERR_INVALID;
    }
    double small, large, reduce;
    CL_CHECK(ring_step(c, (char *)buf, 8, &small));
    CL_CHECK(ring_step(c, (char *)buf, probe, &large));
    CL_CHECK(reduce_time(c, buf, probe / sizeof(float), &reduce));
    m->alpha_s = small;
    m->link_Bps = (double)probe / fmax(large - small, 1e-9);
    m->reduce_Bps = (double)probe / fmax(reduce, 1e-9);
    return CL_OK;
}

/* What a repeat of the step shows beside the overlap's sample. */
typedef struct step_extra {
    double end_s, unfinished;
} step_extra;

/* One repeat: the backward pass alone, the library's AllReduce alone, your step. */
static cl_result repeat(cl_run *run, cl_comm *c, const lab24_net *net, const cl_overlap *o,
                        const size_t *off, float *stage, cl_overlap_sample *s, step_extra *x)
{
    int r = cl_comm_rank(c), sim = on_sim(c);
    uint64_t seed;
    double start, seconds;
    size_t wrong, count = o->count;
    CL_CHECK(cl_fresh_seed(run, c, &seed));
    if (!sim) /* what the kernels will write, made ahead of time */
        CL_CHECK(cl_data_fill(stage, 0, count, CL_FLOAT32, CL_SUM, r, seed));
    device_reset(r, net, o->grads, off, stage, seed);
    CL_CHECK(cl_overlap_alone(c, o, s));
    CL_CHECK(cl_fresh_seed(run, c, &seed));
    if (!sim)
        CL_CHECK(cl_data_fill(stage, 0, count, CL_FLOAT32, CL_SUM, r, seed));
    CL_CHECK(cl_poison(c, o->grads, count * sizeof(float), CL_FLOAT32));
    device_reset(r, net, o->grads, off, stage, seed);
    CL_CHECK(cl_overlap_step(c, o, seed, &start, &seconds, &wrong));
    double t[2] = {seconds, dev[r].last_end - start};
    double v[2] = {(double)wrong, dev[r].next_kernel < net->kernels};
    CL_CHECK(cl_agree_max(c, t, 2));
    CL_CHECK(cl_agree_sum(c, v, 2));
    s->step_s = t[0], x->end_s = t[1], s->wrong = v[0], x->unfinished = v[1];
    return CL_OK;
}

/* What one rank of the step mode holds (on "sim" every rank lives in this process). */
typedef struct step_state {
    lab24_net net;
    step_args a;
    plan_args p;
    lab24_buckets ddp;
    size_t off[LAB24_MAX_PARAMS];
} step_state;

static cl_result step_rank(cl_run *run, cl_comm *c, step_state *st);

static cl_result step_mode(cl_run *run, cl_comm *c)
{
    step_state *st = calloc(1, sizeof *st);
    if (!st)
        return CL_ERR_NOMEM;
    cl_result rc = step_rank(run, c, st);
    free(st);
    return rc;
}

static cl_result step_rank(cl_run *run, cl_comm *c, step_state *st)
{
    lab24_net *n = &st->net;
    step_args *a = &st->a;
    plan_args *p = &st->p;
    int reps = cl_overlap_repeats(run);
    int layers = (int)num_opt(run, "layers", 8, 16), hidden = (int)num_opt(run, "hidden", 256, 512);
    double ratio = num_opt(run, "ratio", 2.5, 2.5);
    double quantum = num_opt(run, "quantum", 500e-6, 10e-6);
    CL_CHECK(lab24_net_build(n, layers, hidden, quantum));
    size_t count = (size_t)(n->total_bytes / sizeof(float));
    cl_overlap o = {.args = a, .args_bytes = sizeof *a};
    float *stage = NULL;
    cl_result rc = CL_OK;
    CL_TRY(cl_overlap_alloc(c, &o, count));
    a->grads = o.grads;
    if (!on_sim(c) && !(stage = malloc(count * sizeof(float)))) {
        rc = CL_ERR_NOMEM;
        goto done;
    }
    double comm[3];
    CL_TRY(cl_overlap_allreduce(c, &o, &comm[0])); /* warm-up */
    for (int i = 0; i < 3; i++)
        CL_TRY(cl_overlap_allreduce(c, &o, &comm[i]));
    CL_TRY(lab24_net_scale(n, ratio * cl_median(comm, 3)));
    CL_TRY(build_model(run, c, n, a->grads, &p->m));
    CL_TRY(forced_caps(run, p));
    cl_call_result res;
    CL_TRY(cl_student_run(c, "plan", p, sizeof *p, 0, &res));
    CL_TRY(res.status);
    CL_TRY(lab24_buckets_check(&p->b, n->params));
    CL_TRY(same_buckets(c, &p->b, n->params));
    CL_TRY(lab24_ddp_assign(n, &p->caps, &st->ddp));
    a->m = p->m, a->b = p->b;
    size_t largest;
    lab24_layout(n, &a->b, st->off, &largest);
    size_t scratch = (largest + (size_t)p->m.ranks - 1) / (size_t)p->m.ranks + 1;
    CL_TRY(cl_mem_alloc(c, scratch * sizeof(float), (void **)&a->scratch));
    cl_report_int(run, "layers", layers);
    cl_report_int(run, "hidden", hidden);
    cl_report_int(run, "params", n->params);
    cl_report_num(run, "grad_bytes", n->total_bytes);
    cl_report_num(run, "alpha_us", p->m.alpha_s * 1e6);
    cl_report_num(run, "link_gbps", p->m.link_Bps / 1e9);
    cl_report_num(run, "reduce_gbps", p->m.reduce_Bps / 1e9);
    cl_report_num(run, "quantum_us", n->quantum_s * 1e6);
    cl_report_num(run, "compute_us", n->compute_s * 1e6);
    cl_report_num(run, "first_cap", p->caps.first_cap);
    cl_report_num(run, "cap", p->caps.cap);
    cl_report_int(run, "last_small", p->caps.last_small);
    cl_report_int(run, "buckets", p->b.n);
    cl_report_int(run, "ddp_match", lab24_buckets_equal(&st->ddp, &p->b, n->params));
    cl_overlap_sample s[CL_OVERLAP_MAX_SAMPLES];
    step_extra x[CL_OVERLAP_MAX_SAMPLES];
    for (int i = 0; i < reps; i++)
        CL_TRY(repeat(run, c, n, &o, st->off, stage, &s[i], &x[i]));
    double end[CL_OVERLAP_MAX_SAMPLES], unfinished = 0;
    for (int i = 0; i < reps; i++)
        end[i] = x[i].end_s, unfinished += x[i].unfinished;
    cl_row *row = cl_overlap_row(run, c, s, reps);
    cl_col_nums(row, "last_kernel_end_s", end, (size_t)reps, "%.6f");
    cl_col_int(row, "wrong", cl_overlap_wrong(s, reps));
    cl_col_int(row, "unfinished", (long long)unfinished);
    cl_row_end(row);
done:
    free(stage);
    if (a->scratch)
        cl_mem_free(c, a->scratch);
    cl_overlap_free(c, &o);
    return rc;
}

/* Your buckets on real GPUs (harness_gpu.c): the net sized from NCCL's AllReduce here,
 * the link measured, your caps and buckets, then the real step. */
static cl_result gpu_mode(cl_run *run, cl_comm *c)
{
    static lab24_net net;
    static plan_args p;
    int reps = cl_overlap_repeats(run);
    int layers = (int)num_opt(run, "layers", 16, 16),
        hidden = (int)num_opt(run, "hidden", 1024, 1024);
    double ratio = num_opt(run, "ratio", 2.5, 2.5);
    CL_CHECK(lab24_net_build(&net, layers, hidden, 0));
    cl_overlap o = {0};
    cl_result rc = CL_OK;
    CL_TRY(cl_overlap_alloc(c, &o, (size_t)(net.total_bytes / sizeof(float))));
    double comm;
    CL_TRY(cl_overlap_allreduce(c, &o, &comm)); /* warm-up */
    CL_TRY(cl_overlap_allreduce(c, &o, &comm));
    CL_TRY(lab24_net_scale(&net, ratio * comm));
    memset(&p, 0, sizeof p);
    CL_TRY(build_model(run, c, &net, o.grads, &p.m));
    p.m.quantum_s = 0; /* on a GPU, NCCL moves on by itself */
    cl_call_result res;
    CL_TRY(cl_student_run(c, "plan", &p, sizeof p, 0, &res));
    CL_TRY(res.status);
    CL_TRY(lab24_buckets_check(&p.b, net.params));
    CL_TRY(same_buckets(c, &p.b, net.params));
    cl_report_num(run, "grad_bytes", net.total_bytes);
    cl_report_num(run, "first_cap", p.caps.first_cap);
    cl_report_num(run, "cap", p.caps.cap);
    cl_report_int(run, "last_small", p.caps.last_small);
    cl_report_int(run, "buckets", p.b.n);
    cl_overlap_sample s[CL_OVERLAP_MAX_SAMPLES];
    CL_TRY(lab24_gpu_steps(c, &net, &p.b, reps, s));
    cl_overlap_gpu_row(run, c, s, reps);
done:
    cl_overlap_free(c, &o);
    return rc;
}

static const cl_mode modes[] = {
    {.name = "assign",
     .help = "your buckets for the sizes, order and caps of each case",
     .cases = assign_case},
    {.name = "step",
     .help = "the backward pass alone, the library's AllReduce alone, your step",
     .ranks = step_mode,
     .min_ranks = 2,
     .backends = "cpu,sim"},
    {.name = "gpu",
     .help = "your buckets on real GPUs: kernels and a bucketed ncclAllReduce on two streams",
     .ranks = gpu_mode,
     .min_ranks = 2,
     .backends = "gpu"},
    {0}};

static const cl_option options[] = {
    {.name = "layers", .help = "N  step: layers of the model (cpu 8, sim 16, gpu 16)"},
    {.name = "hidden", .help = "H  step: hidden size (cpu 256, sim 512, gpu 1024)"},
    {.name = "ratio", .help = "R  step: backward pass = R x the library's AllReduce (2.5)"},
    {.name = "quantum", .help = "S  step: longest part of a kernel, seconds (cpu 5e-4, sim 1e-5)"},
    {.name = "probe", .help = "BYTES  step: the message that measures the bandwidth (4M)"},
    {.name = "cap", .help = "BYTES  step: try this bucket cap instead of your choice (DDP: 25M)"},
    {.name = "first-cap", .help = "BYTES  step: try this first-bucket cap (DDP: 1M)"},
    {.name = "last-small", .help = "0|1  step: try the small bucket last"},
    {0}};

const cl_lab cl_lab_def = {
    .name = "lab24",
    .title = "计算通信重叠",
    .modes = modes,
    .options = options,
    .lab_op = lab_op,
    .arena_bytes = (size_t)256 << 20, /* "cpu": the gradients, the result, the scratch */
};

#endif
