/* driver.c: lab 01's plug-in: the ping-pong, the fit, the step model and the layout choice.
 *
 *   lab01 sweep    [--backend cpu|gpu|sim] [-e 2M] [--repeats 5]   (2 ranks)
 *   lab01 bench    [--bytes 4M] [--repeats 15]                     (2 ranks)
 *   lab01 fit      points=8:1.2e-6,1024:1.5e-6,...
 *   lab01 ring     p=8 bytes=50331648 alpha_s=3.4e-6 bandwidth_Bps=240e9
 *   lab01 estimate params=13e9 ... nodes=4 gpus_per_node=8 ... tp=8 pp=2 dp=2
 *   lab01 plan     params=13e9 ... nodes=4 gpus_per_node=8 ...   (your layout, then its step)
 * Cases modes also read --cases FILE (labs/lab01/scale.cases: the scale sweep).
 *
 * sweep and bench interleave the student's ping-pong with the harness's own
 * loop, on buffers filled with fresh bytes for every call. The harness checks
 * that both ranks end with rank 0's bytes, counts the messages each rank
 * really sent and received (its trace), and times the call from outside.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness.h"
#include "lab01.h"

#define MAX_POINTS 64

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct pingpong_args {
    void *buf;
    size_t bytes;
    int iters;
    double one_way_s; /* out */
} pingpong_args;

typedef struct fit_args {
    int n;
    double bytes[MAX_POINTS], seconds[MAX_POINTS];
    double alpha_s, beta_s_per_byte; /* out */
} fit_args;

typedef struct ring_args {
    int p;
    double bytes;
    lab01_link link;
    lab01_cost out; /* out */
} ring_args;

typedef struct step_args {
    lab01_workload w;
    lab01_cluster c;
    lab01_layout l; /* in for "estimate", out for "plan" */
    lab01_estimate out;
} step_args;

#ifdef CL_STUDENT_SIDE

static cl_result pingpong(cl_comm *c, void *args)
{
    pingpong_args *a = args;
    return lab01_pingpong(c, a->buf, a->bytes, a->iters, &a->one_way_s);
}

static cl_result fit(cl_comm *c, void *args)
{
    (void)c;
    fit_args *a = args;
    return lab01_fit_alpha_beta(a->bytes, a->seconds, a->n, &a->alpha_s, &a->beta_s_per_byte);
}

static cl_result ring(cl_comm *c, void *args)
{
    (void)c;
    ring_args *a = args;
    a->out = lab01_ring_allreduce(a->p, a->bytes, a->link);
    return CL_OK;
}

static cl_result estimate(cl_comm *c, void *args)
{
    (void)c;
    step_args *a = args;
    return lab01_estimate_step(&a->w, &a->c, &a->l, &a->out);
}

static cl_result plan(cl_comm *c, void *args)
{
    (void)c;
    step_args *a = args;
    CL_CHECK(lab01_choose_layout(&a->w, &a->c, &a->l));
    return lab01_estimate_step(&a->w, &a->c, &a->l, &a->out);
}

CL_STUDENT_ENTRIES({"pingpong", pingpong}, {"fit", fit}, {"ring", ring}, {"estimate", estimate},
                   {"plan", plan});

#else

/* --- ping-pong ------------------------------------------------------------------------- */

/* The harness's own loop: the same exchange as the student's, without the
 * crossing between the student's program and the harness. */
static cl_result harness_loop(cl_comm *c, void *buf, size_t bytes, int iters, double *one_way)
{
    int rank = cl_comm_rank(c);
    if (rank > 1)
        return CL_OK;
    double t0 = cl_comm_time(c);
    for (int i = 0; i < iters; i++) {
        if (rank == 0) {
            CL_CHECK(cl_send(c, buf, bytes, 1));
            CL_CHECK(cl_recv(c, buf, bytes, 1));
        } else {
            CL_CHECK(cl_recv(c, buf, bytes, 0));
            CL_CHECK(cl_send(c, buf, bytes, 0));
        }
    }
    *one_way = (cl_comm_time(c) - t0) / (2.0 * iters);
    return CL_OK;
}

/* Transfers of `bytes` with the other rank that the trace shows, not counting
 * any of another size or peer (those make *odd non-zero). */
static void count_messages(const cl_comm *c, size_t bytes, int *sends, int *recvs, int *odd)
{
    int n;
    const cl_trace_event *ev = cl_student_trace(c, &n);
    int peer = 1 - cl_comm_rank(c);
    *sends = *recvs = *odd = 0;
    for (int i = 0; i < n; i++) {
        if (ev[i].op != CL_WOP_ISEND && ev[i].op != CL_WOP_IRECV)
            continue;
        if (ev[i].peer != peer || ev[i].bytes != bytes)
            (*odd)++;
        else if (ev[i].op == CL_WOP_ISEND)
            (*sends)++;
        else
            (*recvs)++;
    }
}

typedef struct sample {
    double student, external, harness; /* one-way seconds */
    int64_t corrupt, messages_off;
} sample;

/* One student call and one harness loop at `bytes`, checked; agreed over ranks. */
static cl_result one_sample(cl_run *run, cl_comm *c, void *buf, size_t bytes, int iters, sample *s)
{
    int rank = cl_comm_rank(c);
    uint64_t seed;
    CL_CHECK(cl_barrier(c));
    CL_CHECK(harness_loop(c, buf, bytes, iters, &s->harness));
    CL_CHECK(cl_fresh_seed(run, c, &seed));
    CL_CHECK(cl_fill_bytes(c, buf, bytes, seed, rank, 0));
    CL_CHECK(cl_barrier(c));
    pingpong_args a = {.buf = buf, .bytes = bytes, .iters = iters};
    cl_call_result res;
    CL_CHECK(cl_student_run(c, "pingpong", &a, sizeof a, CL_ALLOW_P2P, &res));
    if (res.status != CL_OK)
        return res.status;
    s->student = a.one_way_s;
    s->external = res.seconds / (2.0 * iters);
    size_t wrong = 0;
    int sends = iters, recvs = iters, odd = 0;
    if (rank <= 1) {
        CL_CHECK(cl_count_wrong_bytes(c, buf, bytes, seed, 0, 0, &wrong));
        count_messages(c, bytes, &sends, &recvs, &odd);
    }
    int64_t v[2] = {(int64_t)wrong, (sends != iters) + (recvs != iters) + (odd != 0)};
    CL_CHECK(cl_agree(c, CL_SUM, v, 2));
    s->corrupt = v[0];
    s->messages_off = v[1];
    double t[3] = {s->student > 0 ? s->student : 0, s->external, s->harness};
    if (rank > 1)
        t[0] = t[1] = t[2] = 0;
    return cl_agree_max(c, t, 3);
}

static int iterations_for(size_t bytes)
{
    size_t n = ((size_t)16 << 20) / (bytes ? bytes : 1);
    return n < 10 ? 10 : n > 500 ? 500 : (int)n;
}

static cl_result pingpong_mode(cl_run *run, cl_comm *c, int bench)
{
    const cl_opts *o = cl_run_opts(run);
    size_t first = bench ? o->bytes : 8, last = bench ? o->bytes : o->max_bytes;
    int reps = o->repeats > 64 ? 64 : o->repeats;
    void *buf;
    CL_CHECK(cl_mem_alloc(c, last, &buf));
    double sizes[32], mine[32];
    int n = 0;
    cl_report_str(run, "units", "bytes, one-way times in us, bandwidths in GB/s");
    for (size_t bytes = first; bytes <= last && n < 32; bytes *= 4, n++) {
        int iters = bench ? 50 : iterations_for(bytes);
        sample s[64];
        double st[64], ex[64], hs[64], sbw[64], hbw[64];
        int64_t corrupt = 0, off = 0;
        for (int r = 0; r < reps; r++) {
            CL_CHECK(one_sample(run, c, buf, bytes, iters, &s[r]));
            st[r] = s[r].student * 1e6, ex[r] = s[r].external * 1e6, hs[r] = s[r].harness * 1e6;
            sbw[r] = s[r].student > 0 ? bytes / s[r].student / 1e9 : 0;
            hbw[r] = s[r].harness > 0 ? bytes / s[r].harness / 1e9 : 0;
            corrupt += s[r].corrupt;
            off += s[r].messages_off;
        }
        sizes[n] = (double)bytes;
        mine[n] = cl_median(st, (size_t)reps) * 1e-6;
        cl_row *row = cl_row_begin(run, c);
        cl_col_int(row, "bytes", (long long)bytes);
        cl_col_int(row, "iters", iters);
        cl_col_nums(row, "student_us", st, (size_t)reps, "%.2f");
        cl_col_nums(row, "external_us", ex, (size_t)reps, "%.2f");
        cl_col_nums(row, "harness_us", hs, (size_t)reps, "%.2f");
        cl_col_nums(row, "student_gbps", sbw, (size_t)reps, "%.3f");
        cl_col_nums(row, "harness_gbps", hbw, (size_t)reps, "%.3f");
        cl_col_int(row, "corrupt_bytes", corrupt);
        cl_col_int(row, "messages_off", off);
        cl_row_end(row);
        if (bench)
            break;
    }
    CL_CHECK(cl_mem_free(c, buf));
    if (bench || cl_comm_rank(c) != 0)
        return CL_OK;
    /* The student's fit of the student's own measurements. */
    fit_args f = {.n = n};
    memcpy(f.bytes, sizes, (size_t)n * sizeof *sizes);
    memcpy(f.seconds, mine, (size_t)n * sizeof *mine);
    cl_call_result res;
    CL_CHECK(cl_student_run(c, "fit", &f, sizeof f, 0, &res));
    cl_report_str(run, "fit_status", cl_result_str(res.status));
    cl_report_num(run, "alpha_s", res.status == CL_OK ? f.alpha_s : 0.0 / 0.0);
    cl_report_num(run, "beta_s_per_byte", res.status == CL_OK ? f.beta_s_per_byte : 0.0 / 0.0);
    return CL_OK;
}

static cl_result sweep(cl_run *run, cl_comm *c) { return pingpong_mode(run, c, 0); }
static cl_result bench(cl_run *run, cl_comm *c) { return pingpong_mode(run, c, 1); }

/* --- the model's cases ------------------------------------------------------------------ */

static cl_result fit_case(cl_case *c)
{
    const char *text;
    CL_CHECK(cl_case_str(c, "points", &text));
    fit_args a = {0};
    for (const char *p = text; *p && a.n < MAX_POINTS; a.n++) {
        char *end;
        a.bytes[a.n] = strtod(p, &end);
        if (*end != ':') {
            cl_set_error("points: expected BYTES:SECONDS,... at '%s'", p);
            return CL_ERR_INVALID;
        }
        a.seconds[a.n] = strtod(end + 1, &end);
        if (*end != ',' && *end != '\0') {
            cl_set_error("points: expected BYTES:SECONDS,... at '%s'", end);
            return CL_ERR_INVALID;
        }
        p = *end == ',' ? end + 1 : end;
    }
    cl_result rc = cl_case_call(c, "fit", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    cl_col_num(row, "alpha_s", a.alpha_s, "%.6g");
    cl_col_num(row, "beta_s_per_byte", a.beta_s_per_byte, "%.6g");
    return rc;
}

static cl_result ring_case(cl_case *c)
{
    ring_args a;
    memset(&a, 0, sizeof a);
    long long p;
    CL_CHECK(cl_case_int(c, "p", &p));
    CL_CHECK(cl_case_num(c, "bytes", &a.bytes));
    CL_CHECK(cl_case_num(c, "alpha_s", &a.link.alpha_s));
    CL_CHECK(cl_case_num(c, "bandwidth_Bps", &a.link.bandwidth_Bps));
    if (p < 1 || p > 1 << 20) {
        cl_set_error("p=%lld is not a rank count", p);
        return CL_ERR_INVALID;
    }
    a.p = (int)p;
    cl_result rc = cl_case_call(c, "ring", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    cl_col_num(row, "alpha_s", a.out.alpha_s, "%.6g");
    cl_col_num(row, "beta_s", a.out.beta_s, "%.6g");
    cl_col_num(row, "time_s", a.out.alpha_s + a.out.beta_s, "%.6g");
    return rc;
}

/* The parameters of a step: name, where it goes, and whether it is an int. */
#define W(f, i)                                                                                    \
    {                                                                                              \
#f, offsetof(step_args, w.f), i, 0                                                         \
    }
#define C(k, f, i)                                                                                 \
    {                                                                                              \
        k, offsetof(step_args, c.f), i, 0                                                          \
    }
#define L(f)                                                                                       \
    {                                                                                              \
#f, offsetof(step_args, l.f), 1, 1                                                         \
    }
static const struct {
    const char *key;
    size_t off;
    int is_int, layout; /* layout: given to "estimate", chosen by "plan" */
} params[] = {
    W(params, 0),
    W(bytes_per_element, 0),
    W(layers, 1),
    W(hidden, 1),
    W(seq_len, 1),
    W(global_batch, 1),
    W(micro_batch, 1),
    W(gpu_flops, 0),
    C("nodes", nodes, 1),
    C("gpus_per_node", gpus_per_node, 1),
    C("mem_bytes", mem_bytes, 0),
    C("intra_alpha_s", intra.alpha_s, 0),
    C("intra_bandwidth_Bps", intra.bandwidth_Bps, 0),
    C("inter_alpha_s", inter.alpha_s, 0),
    C("inter_bandwidth_Bps", inter.bandwidth_Bps, 0),
    L(tp),
    L(pp),
    L(dp),
};

static int power_of_two(long long v) { return v > 0 && (v & (v - 1)) == 0; }

/* Read the case into a (the layout too when with_layout); a reason for bad input. */
static cl_result read_step(cl_case *c, step_args *a, int with_layout)
{
    memset(a, 0, sizeof *a);
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
        if (params[i].layout && !with_layout)
            continue;
        char *dst = (char *)a + params[i].off;
        if (params[i].is_int) {
            long long v;
            CL_CHECK(cl_case_int(c, params[i].key, &v));
            if (v < 1 || v > 1 << 24) {
                cl_set_error("%s=%lld is out of range", params[i].key, v);
                return CL_ERR_INVALID;
            }
            *(int *)dst = (int)v;
        } else {
            double v;
            CL_CHECK(cl_case_num(c, params[i].key, &v));
            if (!(v > 0)) {
                cl_set_error("%s=%g must be positive", params[i].key, v);
                return CL_ERR_INVALID;
            }
            *(double *)dst = v;
        }
    }
    if (!power_of_two(a->c.nodes) || !power_of_two(a->c.gpus_per_node)) {
        cl_set_error("nodes and gpus_per_node must be powers of two");
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

static void step_columns(cl_row *row, const step_args *a)
{
    const lab01_estimate *e = &a->out;
    cl_col_int(row, "m", e->micro_batches);
    cl_col_num(row, "compute_s", e->compute_s, "%.4g");
    cl_col_num(row, "bubble_s", e->bubble_s, "%.4g");
    cl_col_num(row, "tp_alpha_s", e->tp.alpha_s, "%.4g");
    cl_col_num(row, "tp_beta_s", e->tp.beta_s, "%.4g");
    cl_col_num(row, "dp_alpha_s", e->dp.alpha_s, "%.4g");
    cl_col_num(row, "dp_beta_s", e->dp.beta_s, "%.4g");
    cl_col_num(row, "pp_alpha_s", e->pp.alpha_s, "%.4g");
    cl_col_num(row, "pp_beta_s", e->pp.beta_s, "%.4g");
    cl_col_num(row, "comm_s", e->comm_s, "%.4g");
    cl_col_num(row, "step_s", e->step_s, "%.4g");
    cl_col_num(row, "share", e->share, "%.4f");
}

static cl_result estimate_case(cl_case *c)
{
    step_args a;
    CL_CHECK(read_step(c, &a, 1));
    cl_result rc = cl_case_call(c, "estimate", &a, sizeof a);
    step_columns(cl_case_row(c), &a);
    return rc;
}

static cl_result plan_case(cl_case *c)
{
    step_args a;
    CL_CHECK(read_step(c, &a, 0));
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "gpus", (long long)a.c.nodes * a.c.gpus_per_node);
    cl_result rc = cl_case_call(c, "plan", &a, sizeof a);
    cl_col_int(row, "tp", a.l.tp);
    cl_col_int(row, "pp", a.l.pp);
    cl_col_int(row, "dp", a.l.dp);
    step_columns(row, &a);
    return rc;
}

const cl_lab cl_lab_def = {
    .name = "lab01",
    .title = "通信为何成为瓶颈: the alpha-beta model",
    .modes =
        (const cl_mode[]){{.name = "sweep",
                           .help = "ping-pong from 8 B to --max-bytes, yours and the harness's",
                           .ranks = sweep,
                           .min_ranks = 2},
                          {.name = "bench",
                           .help = "ping-pong bandwidth at --bytes, yours and the harness's",
                           .ranks = bench,
                           .min_ranks = 2},
                          {.name = "fit",
                           .help = "your alpha-beta fit of points=BYTES:SECONDS,...",
                           .cases = fit_case},
                          {.name = "ring",
                           .help = "your ring AllReduce time: p= bytes= alpha_s= bandwidth_Bps=",
                           .cases = ring_case},
                          {.name = "estimate",
                           .help = "your step estimate of a workload, cluster and layout",
                           .cases = estimate_case},
                          {.name = "plan",
                           .help = "your layout for a workload and cluster, and its step",
                           .cases = plan_case},
                          {0}},
};

#endif
