/* harness_select.c: lab 06's select mode: the four algorithms and the student's selector at
 * each size, interleaved, with fresh data for every call, each call checked (data, overrun,
 * input, forbidden calls, message pattern), under the model calibrate measures or --model
 * gives.
 */
#include <stdio.h>
#include <string.h>

#include "lab06_harness.h"

/* --- select: the four algorithms and the selector, interleaved, at each size ----------------- */

static const char *const algo_names[NALGO] = {"ring", "recursive_doubling", "rabenseifner", "tree"};

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
    if (cl_comm_on_sim(c))
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

cl_result select_mode(cl_run *run, cl_comm *c)
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
