/* driver.c: lab 06's plug-in: latency-optimal AllReduce algorithms, their message patterns,
 * the cost model and the selector, measured against the best algorithm.
 *
 *   lab06 verify    [--backend cpu|gpu|sim] [--nranks N] [--coll A,B]
 *   lab06 sweep     [--coll ...] [-b 8] [-e 16M] [-f 4]
 *   lab06 calibrate                  alpha, beta, gamma as your code meets them
 *   lab06 select    [-b 8] [-e 16M] [-f 8] [--repeats R] [--model A,B,G]
 *   lab06 model     alpha=5e-6 beta=5e-12 gamma=2e-12 p=6 bytes=65536   (or --cases FILE)
 *
 * Every algorithm's AllReduce is verified by the collective suite, and after
 * every call the trace of each rank must show the algorithm's own message
 * pattern (a ring copied four times is caught there). select runs the four
 * algorithms and the student's selector at each size, interleaved, with fresh
 * data for every call, after measuring the machine's alpha, beta and gamma as
 * the student's program meets them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/coll_suite.h"
#include "harness/patterns.h"
#include "lab06.h"

#define NALGO        LAB06_ALGO_COUNT
#define PINGPONG_MAX ((size_t)4 << 20)

/* The argument blocks of the lab's own entries, the same on both sides. */
typedef struct pingpong_args {
    void *buf;
    size_t bytes;
    int iters;
} pingpong_args;

typedef struct reduce_args {
    void *a, *b;
    size_t count;
    int iters;
} reduce_args;

typedef struct cost_args {
    lab06_model m;
    int p;
    double bytes;
    double cost[NALGO]; /* out */
    int selected;       /* out */
} cost_args;

#ifdef CL_STUDENT_SIDE

/* The model lab06_allreduce() uses: a fixed one for verify, the measured one
 * once the harness sends it (select). The same on every rank. */
static lab06_model model = {.alpha_s = 5e-6, .beta_s_per_byte = 1e-10, .gamma_s_per_byte = 5e-11};

#define ALLREDUCE(name, fn)                                                                        \
    static cl_result name(cl_comm *c, void *args)                                                  \
    {                                                                                              \
        const cl_coll_args *a = args;                                                              \
        return fn(c, a->sendbuf, a->recvbuf, a->count, a->dtype, a->op, a->scratch);               \
    }
ALLREDUCE(ring, lab06_ring_allreduce)
ALLREDUCE(recursive_doubling, lab06_recursive_doubling)
ALLREDUCE(rabenseifner, lab06_rabenseifner)
ALLREDUCE(tree, lab06_tree_allreduce)

static cl_result selected(cl_comm *c, void *args)
{
    const cl_coll_args *a = args;
    return lab06_allreduce(c, a->sendbuf, a->recvbuf, a->count, a->dtype, a->op, a->scratch,
                           &model);
}

static cl_result broadcast(cl_comm *c, void *args)
{
    const cl_coll_args *a = args;
    if (cl_comm_rank(c) == a->root)
        CL_CHECK(cl_copy_local(c, a->recvbuf, a->sendbuf, a->count * cl_dtype_size(a->dtype)));
    return lab06_binomial_bcast(c, a->recvbuf, a->count, a->dtype, a->root);
}

static cl_result reduce(cl_comm *c, void *args)
{
    const cl_coll_args *a = args;
    return lab06_binomial_reduce(c, a->sendbuf, a->recvbuf, a->count, a->dtype, a->op, a->root,
                                 a->scratch);
}

static cl_result set_model(cl_comm *c, void *args)
{
    (void)c;
    model = *(const lab06_model *)args;
    return CL_OK;
}

static cl_result cost(cl_comm *c, void *args)
{
    (void)c;
    cost_args *a = args;
    for (int i = 0; i < NALGO; i++)
        a->cost[i] = lab06_cost((lab06_algo)i, a->p, a->bytes, &a->m);
    a->selected = (int)lab06_select(a->p, a->bytes, &a->m);
    return CL_OK;
}

/* Calibration: a ping-pong between ranks 0 and 1 and a loop of local
 * reductions, made by this program, so their times include what every call
 * of the student's code costs on the way to the harness. */
static cl_result pingpong(cl_comm *c, void *args)
{
    const pingpong_args *a = args;
    int r = cl_comm_rank(c);
    for (int i = 0; i < a->iters && r < 2; i++) {
        CL_CHECK(r == 0 ? cl_send(c, a->buf, a->bytes, 1) : cl_recv(c, a->buf, a->bytes, 0));
        CL_CHECK(r == 0 ? cl_recv(c, a->buf, a->bytes, 1) : cl_send(c, a->buf, a->bytes, 0));
    }
    return CL_OK;
}

static cl_result reduce_loop(cl_comm *c, void *args)
{
    const reduce_args *a = args;
    for (int i = 0; i < a->iters; i++)
        CL_CHECK(cl_reduce_local(c, a->a, a->b, a->count, CL_FLOAT32, CL_SUM));
    return CL_OK;
}

CL_STUDENT_ENTRIES({"ring", ring}, {"recursive_doubling", recursive_doubling},
                   {"rabenseifner", rabenseifner}, {"tree", tree}, {"allreduce", selected},
                   {"broadcast", broadcast}, {"reduce", reduce}, {"set_model", set_model},
                   {"cost", cost}, {"pingpong", pingpong}, {"reduce_loop", reduce_loop});

#else

static const char *const algo_names[NALGO] = {"ring", "recursive_doubling", "rabenseifner", "tree"};

/* Each algorithm's message pattern (harness/patterns.h), in lab06_algo order. */
static const cl_pattern_fn patterns[NALGO] = {
    cl_pattern_ring_allreduce, cl_pattern_recursive_doubling, cl_pattern_halving_doubling,
    cl_pattern_binomial_allreduce};

/* The selected AllReduce: the pattern of one of the four algorithms. */
static int pattern_any(const cl_comm *c, const cl_coll_args *a, const cl_trace_event *ev, int n,
                       char *why, size_t len)
{
    char ignored[200];
    for (int i = 0; i < NALGO; i++)
        if (patterns[i](c, a, ev, n, ignored, sizeof ignored))
            return 1;
    snprintf(why, len,
             "the messages match none of ring, recursive doubling, Rabenseifner and "
             "the binomial tree");
    return 0;
}

/* --- calibration: alpha, beta and gamma as the student's code meets them --------------------- */

/* One-way time of a ping-pong of `bytes` between ranks 0 and 1, made by the
 * student's program and timed by the harness (median of 5). */
static cl_result one_way(cl_comm *c, void *buf, size_t bytes, int iters, double *t)
{
    double v[5];
    for (int k = 0; k < 5; k++) {
        pingpong_args a = {.buf = buf, .bytes = bytes, .iters = iters};
        cl_call_result res;
        CL_CHECK(cl_barrier(c));
        CL_CHECK(cl_student_run(c, "pingpong", &a, sizeof a, CL_ALLOW_P2P, &res));
        if (res.status != CL_OK) {
            cl_set_error("the calibration ping-pong failed: %s", res.error);
            return res.status;
        }
        v[k] = cl_comm_rank(c) == 0 ? res.seconds / (2.0 * iters) : 0;
        CL_CHECK(cl_agree_max(c, &v[k], 1));
    }
    *t = cl_median(v, 5);
    return CL_OK;
}

static cl_result calibrate(cl_comm *c, lab06_model *m)
{
    const size_t big = PINGPONG_MAX;
    void *a = NULL, *b = NULL;
    double small_t = 0, big_t = 0, g[5];
    cl_result rc = cl_mem_alloc(c, big, &a);
    if (rc == CL_OK)
        rc = cl_mem_alloc(c, big, &b);
    if (rc == CL_OK)
        rc = cl_fill_bytes(c, a, big, 1, 0, 0);
    if (rc == CL_OK)
        rc = cl_fill_bytes(c, b, big, 2, 0, 0);
    if (rc == CL_OK && cl_comm_size(c) > 1) {
        rc = one_way(c, a, 8, 200, &small_t);
        if (rc == CL_OK)
            rc = one_way(c, a, big, 4, &big_t);
    }
    for (int k = 0; rc == CL_OK && k < 5; k++) {
        reduce_args ra = {.a = a, .b = b, .count = big / 4, .iters = 4};
        cl_call_result res;
        rc = cl_student_run(c, "reduce_loop", &ra, sizeof ra, CL_ALLOW_LOCAL, &res);
        if (rc == CL_OK && res.status != CL_OK) {
            cl_set_error("the calibration's local reductions failed: %s", res.error);
            rc = res.status;
        }
        g[k] = res.seconds / ra.iters / (double)big;
        if (rc == CL_OK)
            rc = cl_agree_max(c, &g[k], 1);
    }
    if (rc == CL_OK) {
        *m = (lab06_model){.alpha_s = small_t,
                           .beta_s_per_byte = big_t > small_t ? (big_t - small_t) / big : 0,
                           .gamma_s_per_byte = cl_median(g, 5)};
    }
    if (a)
        cl_mem_free(c, a);
    if (b)
        cl_mem_free(c, b);
    return rc;
}

/* The model of --model A,B,G, or measured. */
static cl_result get_model(cl_run *run, cl_comm *c, lab06_model *m)
{
    const char *text = cl_opt(run, "model");
    if (!text || strcmp(text, "measure") == 0)
        CL_CHECK(calibrate(c, m));
    else if (sscanf(text, "%lf,%lf,%lf", &m->alpha_s, &m->beta_s_per_byte, &m->gamma_s_per_byte) !=
                 3 ||
             !(m->alpha_s >= 0 && m->beta_s_per_byte >= 0 && m->gamma_s_per_byte >= 0)) {
        cl_set_error("--model wants ALPHA,BETA,GAMMA (seconds, seconds per byte), not '%s'", text);
        return CL_ERR_INVALID;
    }
    cl_report_num(run, "alpha_s", m->alpha_s);
    cl_report_num(run, "beta_s_per_byte", m->beta_s_per_byte);
    cl_report_num(run, "gamma_s_per_byte", m->gamma_s_per_byte);
    return CL_OK;
}

/* The harness's own ping-pong of 8 B: alpha without the way to the harness. */
static cl_result harness_alpha(cl_comm *c, double *t)
{
    void *buf;
    int r = cl_comm_rank(c), iters = 200;
    *t = 0;
    CL_CHECK(cl_mem_alloc(c, 8, &buf));
    CL_CHECK(cl_barrier(c));
    double t0 = cl_comm_time(c);
    for (int i = 0; i < iters && r < 2 && cl_comm_size(c) > 1; i++) {
        CL_CHECK(r == 0 ? cl_send(c, buf, 8, 1) : cl_recv(c, buf, 8, 0));
        CL_CHECK(r == 0 ? cl_recv(c, buf, 8, 1) : cl_send(c, buf, 8, 0));
    }
    if (r == 0 && cl_comm_size(c) > 1)
        *t = (cl_comm_time(c) - t0) / (2.0 * iters);
    CL_CHECK(cl_mem_free(c, buf));
    return cl_agree_max(c, t, 1);
}

static cl_result calibrate_mode(cl_run *run, cl_comm *c)
{
    lab06_model m;
    double t;
    CL_CHECK(get_model(run, c, &m));
    CL_CHECK(harness_alpha(c, &t));
    cl_report_num(run, "harness_alpha_s", t);
    return CL_OK;
}

/* --- select: the four algorithms and the selector, interleaved, at each size ----------------- */

#define GUARD       16
#define MAX_REPEATS 64

typedef struct bufs {
    void *send, *recv, *scratch;
    size_t scratch_bytes;
} bufs;

/* What went wrong in a size's calls, the same on every rank. */
typedef struct verdict {
    cl_result status;
    char error[320], forbidden[48], pattern[240];
    int64_t wrong, overrun, changed;
} verdict;

/* One checked call of entry at count floats; *t its time (max over ranks). */
static cl_result one_call(cl_run *run, cl_comm *c, int entry, size_t count, bufs *b, verdict *v,
                          double *t)
{
    const char *name = entry < NALGO ? algo_names[entry] : "allreduce";
    cl_pattern_fn pat = entry < NALGO ? patterns[entry] : pattern_any;
    uint64_t seed;
    size_t es = sizeof(float), wrong = 0, over = 0, changed = 0;
    int p = cl_comm_size(c);
    CL_CHECK(cl_fresh_seed(run, c, &seed));
    CL_CHECK(cl_fill(c, b->send, count, CL_FLOAT32, CL_SUM, seed, cl_comm_rank(c), 0));
    CL_CHECK(cl_poison(c, b->recv, (count + GUARD) * es, CL_FLOAT32));
    cl_coll_args a = {.sendbuf = b->send,
                      .recvbuf = b->recv,
                      .count = count,
                      .dtype = CL_FLOAT32,
                      .op = CL_SUM,
                      .scratch = b->scratch,
                      .scratch_bytes = b->scratch_bytes};
    cl_call_result res;
    CL_CHECK(cl_barrier(c));
    CL_CHECK(cl_student_run(c, name, &a, sizeof a, CL_ALLOW_COLLECTIVE, &res));
    int64_t bad[6] = {res.status != CL_OK, res.forbidden[0] != 0, 0};
    char why[240] = "";
    if (res.status == CL_OK) {
        int n;
        const cl_trace_event *ev = cl_student_trace(c, &n);
        CL_CHECK(cl_count_wrong(c, b->recv, count, CL_FLOAT32, CL_SUM, seed, 0, p, 0, &wrong));
        CL_CHECK(cl_count_unpoisoned(c, (char *)b->recv + count * es, GUARD, CL_FLOAT32, &over));
        CL_CHECK(cl_count_wrong(c, b->send, count, CL_FLOAT32, CL_SUM, seed, cl_comm_rank(c),
                                cl_comm_rank(c) + 1, 0, &changed));
        bad[2] = !pat(c, &a, ev, n, why, sizeof why);
    }
    bad[3] = (int64_t)wrong, bad[4] = (int64_t)over, bad[5] = (int64_t)changed;
    if (res.status != CL_OK && !v->error[0])
        snprintf(v->error, sizeof v->error, "%s on rank %d: %.280s", name, cl_comm_rank(c),
                 res.error);
    if (res.forbidden[0] && !v->forbidden[0])
        snprintf(v->forbidden, sizeof v->forbidden, "%s", res.forbidden);
    if (bad[2] && !v->pattern[0])
        snprintf(v->pattern, sizeof v->pattern, "%s on rank %d: %s", name, cl_comm_rank(c), why);
    CL_CHECK(cl_agree(c, CL_SUM, bad, 6));
    if (bad[0] && v->status == CL_OK)
        v->status = res.status != CL_OK ? res.status : CL_ERR_INVALID;
    if (bad[0] && !v->error[0])
        snprintf(v->error, sizeof v->error, "%s failed on another rank", name);
    if (bad[1] && !v->forbidden[0])
        snprintf(v->forbidden, sizeof v->forbidden, "(on another rank)");
    if (bad[2] && !v->pattern[0])
        snprintf(v->pattern, sizeof v->pattern, "%s: (on another rank)", name);
    v->wrong += bad[3], v->overrun += bad[4], v->changed += bad[5];
    *t = res.seconds;
    return cl_agree_max(c, t, 1);
}

/* Calls per sample (the fastest counts). */
static int iters_for(const cl_comm *c, size_t bytes)
{
    if (strcmp(cl_comm_backend(c), "sim") == 0)
        return 1; /* virtual time is exact */
    size_t k = ((size_t)1 << 20) / (bytes ? bytes : 1);
    return k < 3 ? 3 : k > 8 ? 8 : (int)k;
}

static cl_result select_size(cl_run *run, cl_comm *c, size_t bytes, bufs *b)
{
    const cl_opts *o = cl_run_opts(run);
    int reps = o->repeats > MAX_REPEATS ? MAX_REPEATS : o->repeats;
    size_t count = bytes / sizeof(float) ? bytes / sizeof(float) : 1;
    int iters = iters_for(c, bytes);
    double t[NALGO + 1][MAX_REPEATS];
    verdict v = {.status = CL_OK};
    double dummy;
    for (int e = 0; e <= NALGO && v.status == CL_OK; e++) /* a checked warm-up of each */
        CL_CHECK(one_call(run, c, e, count, b, &v, &dummy));
    /* A sample of an entry is the fastest of `iters` calls: another process
     * can only add time. The calls go round the entries, starting one further
     * in each sample, so the entries share the machine's moments alike. */
    for (int k = 0; k < reps && v.status == CL_OK; k++) {
        for (int e = 0; e <= NALGO; e++)
            t[e][k] = 1e300;
        for (int i = 0; i < iters; i++)
            for (int j = 0; j <= NALGO && v.status == CL_OK; j++) {
                int e = (j + k) % (NALGO + 1);
                double s;
                CL_CHECK(one_call(run, c, e, count, b, &v, &s));
                if (s < t[e][k])
                    t[e][k] = s;
            }
    }
    cl_row *row = cl_row_begin(run, c);
    cl_col_int(row, "size", (long long)(count * sizeof(float)));
    cl_col_int(row, "count", (long long)count);
    cl_col_int(row, "iters", iters);
    for (int e = 0; e <= NALGO; e++) {
        char key[40];
        double us[MAX_REPEATS];
        for (int k = 0; k < reps; k++)
            us[k] = t[e][k] * 1e6;
        snprintf(key, sizeof key, "%s_us", e < NALGO ? algo_names[e] : "selected");
        cl_col_nums(row, key, us, v.status == CL_OK ? (size_t)reps : 0, "%.2f");
    }
    cl_col_str(row, "status", cl_result_str(v.status));
    cl_col_int(row, "#wrong", (long long)v.wrong);
    cl_col_int(row, "overrun", (long long)v.overrun);
    cl_col_int(row, "input_changed", (long long)v.changed);
    cl_col_str(row, "forbidden", v.forbidden[0] ? v.forbidden : "-");
    cl_col_str(row, "pattern", v.pattern[0] ? v.pattern : "ok");
    if (v.status != CL_OK)
        cl_col_str(row, "error", v.error);
    cl_row_end(row);
    return CL_OK;
}

static cl_result select_mode(cl_run *run, cl_comm *c)
{
    const cl_opts *o = cl_run_opts(run);
    lab06_model m;
    CL_CHECK(get_model(run, c, &m));
    cl_call_result res;
    CL_CHECK(cl_student_run(c, "set_model", &m, sizeof m, 0, &res));
    cl_report_str(run, "units", "size in bytes (float sum), times in us");
    size_t count = o->max_bytes / sizeof(float) + 1, es = sizeof(float);
    bufs b = {.scratch_bytes = count * es < 4096 ? 4096 : count * es};
    cl_result rc = cl_mem_alloc(c, count * es, &b.send);
    if (rc == CL_OK)
        rc = cl_mem_alloc(c, (count + GUARD) * es, &b.recv);
    if (rc == CL_OK)
        rc = cl_mem_alloc(c, b.scratch_bytes, &b.scratch);
    for (size_t bytes = o->min_bytes; rc == CL_OK && bytes <= o->max_bytes;
         bytes *= (size_t)o->factor) {
        rc = select_size(run, c, bytes, &b);
        if (bytes > o->max_bytes / (size_t)o->factor)
            break;
    }
    if (b.send)
        cl_mem_free(c, b.send);
    if (b.recv)
        cl_mem_free(c, b.recv);
    if (b.scratch)
        cl_mem_free(c, b.scratch);
    return rc;
}

/* --- model: the student's cost formulas and selection for one case ------------------------- */

static cl_result model_case(cl_case *c)
{
    cost_args a = {0};
    long long p;
    CL_CHECK(cl_case_num(c, "alpha", &a.m.alpha_s));
    CL_CHECK(cl_case_num(c, "beta", &a.m.beta_s_per_byte));
    CL_CHECK(cl_case_num(c, "gamma", &a.m.gamma_s_per_byte));
    CL_CHECK(cl_case_int(c, "p", &p));
    CL_CHECK(cl_case_num(c, "bytes", &a.bytes));
    if (p < 1 || p > 1 << 20) {
        cl_set_error("p=%lld: ranks from 1 to 2^20", p);
        return CL_ERR_INVALID;
    }
    a.p = (int)p;
    a.selected = -1;
    cl_result rc = cl_case_call(c, "cost", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    cl_col_nums(row, "cost_s", a.cost, NALGO, "%.6g");
    cl_col_int(row, "selected", a.selected);
    return rc;
}

const cl_lab cl_lab_def = {
    .name = "lab06",
    .title = "集合通信原语 (二): recursive doubling, Rabenseifner, binomial trees and a selector",
    .collectives =
        (const cl_coll_entry[]){
            {.name = "ring", .kind = CL_COLL_ALLREDUCE, .pattern = cl_pattern_ring_allreduce},
            {.name = "recursive_doubling",
             .kind = CL_COLL_ALLREDUCE,
             .pattern = cl_pattern_recursive_doubling},
            {.name = "rabenseifner",
             .kind = CL_COLL_ALLREDUCE,
             .pattern = cl_pattern_halving_doubling},
            {.name = "tree", .kind = CL_COLL_ALLREDUCE, .pattern = cl_pattern_binomial_allreduce},
            {.name = "allreduce", .kind = CL_COLL_ALLREDUCE, .baseline = 1, .pattern = pattern_any},
            {.name = "broadcast", .kind = CL_COLL_BROADCAST, .pattern = cl_pattern_binomial_bcast},
            {.name = "reduce", .kind = CL_COLL_REDUCE, .pattern = cl_pattern_binomial_reduce},
            {0}},
    .modes = (const cl_mode[]){{.name = "calibrate",
                                .help = "alpha, beta and gamma as your code meets them",
                                .ranks = calibrate_mode},
                               {.name = "select",
                                .help = "the four algorithms and your selector at each size, "
                                        "interleaved, checked",
                                .ranks = select_mode},
                               {.name = "model",
                                .help = "your cost of each algorithm and your choice: alpha= beta= "
                                        "gamma= p= bytes=",
                                .cases = model_case},
                               {0}},
    .options = (const cl_option[]){{.name = "model",
                                    .help = "ALPHA,BETA,GAMMA for select, or measure",
                                    .fallback = "measure"},
                                   {0}},
};

#endif
