/* harness_hier.c: the two-level AlltoAll verified (mode hier), and the three AlltoAlls timed side
 * by side (mode compare). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab20_harness.h"

#define MAX_SAMPLES 64

/* What one checked call found, the same on every rank. */
typedef struct verdict {
    call_out call;
    int64_t bad[3];
    char pattern[200];
} verdict;

static char first_pattern[200];

/* One call of the student's entry (args, bytes) on fresh inputs, checked: the data, then the
 * pattern of its trace, the two-level one on nodes of local ranks or, with local 0, the
 * pairwise one. */
static cl_result checked_call(cl_run *run, cl_comm *c, a2a *b, const char *entry, void *args,
                              size_t bytes, int local, verdict *v)
{
    memset(v, 0, sizeof *v);
    first_pattern[0] = '\0';
    CL_CHECK(lab20_a2a_fill(run, c, b));
    CL_CHECK(lab20_call(c, entry, args, bytes, CL_ALLOW_COLLECTIVE, &v->call));
    if (v->call.status != CL_OK)
        return CL_OK;
    CL_CHECK(lab20_a2a_check(c, b, v->bad));
    int n;
    char why[200] = "";
    const cl_trace_event *ev = cl_student_trace(c, &n);
    size_t block = b->count / (size_t)cl_comm_size(c) * cl_dtype_size(b->t);
    int64_t off = local ? !lab20_hier_fits(c, local, block, ev, n, why, sizeof why)
                        : !lab20_pairwise_fits(c, block, ev, n, why, sizeof why);
    if (off && !first_pattern[0])
        snprintf(first_pattern, sizeof first_pattern, "rank %d: %s", cl_comm_rank(c), why);
    CL_CHECK(cl_agree(c, CL_MAX, &off, 1));
    if (off)
        snprintf(v->pattern, sizeof v->pattern, "%s",
                 first_pattern[0] ? first_pattern : "(on another rank)");
    return CL_OK;
}

/* One call of the two-level AlltoAll on fresh inputs, checked. */
static cl_result hier_once(cl_run *run, cl_comm *c, a2a *b, int local, verdict *v)
{
    hier_args h = {.local = local};
    lab20_coll_args(b, &h.a);
    return checked_call(run, c, b, "hier", &h, sizeof h, local, v);
}

static void verdict_columns(cl_row *row, const verdict *v)
{
    cl_col_str(row, "status", cl_result_str(v->call.status));
    cl_col_int(row, "#wrong", (long long)v->bad[0]);
    cl_col_int(row, "overrun", (long long)v->bad[1]);
    cl_col_int(row, "input_changed", (long long)v->bad[2]);
    cl_col_str(row, "forbidden", v->call.forbidden[0] ? v->call.forbidden : "-");
    cl_col_str(row, "pattern", v->pattern[0] ? v->pattern : "ok");
    if (v->call.status != CL_OK)
        cl_col_str(row, "error", v->call.error);
}

cl_result lab20_hier_verify(cl_run *run, cl_comm *c)
{
    int p = cl_comm_size(c), local;
    CL_CHECK(lab20_local(run, c, &local));
    cl_report_int(run, "local", local);
    const size_t per[] = {0, 1, 7, 13, 512, 8191};
    for (size_t ci = 0; ci < sizeof per / sizeof per[0]; ci++)
        for (int ti = 0; ti < CL_DTYPE_COUNT; ti++) {
            cl_dtype t = (cl_dtype)ti;
            if (t != CL_FLOAT32 && per[ci] != 512 && !(per[ci] == 8191 && t == CL_FLOAT64))
                continue;
            a2a b;
            verdict v;
            cl_result rc = lab20_a2a_open(c, &b, per[ci] * (size_t)p, t);
            if (rc == CL_OK)
                rc = hier_once(run, c, &b, local, &v);
            lab20_a2a_close(c, &b);
            CL_CHECK(rc);
            cl_row *row = cl_row_begin(run, c);
            cl_col_str(row, "name", "hier");
            cl_col_int(row, "local", local);
            cl_col_int(row, "size", (long long)(per[ci] * (size_t)p * cl_dtype_size(t)));
            cl_col_int(row, "count", (long long)(per[ci] * (size_t)p));
            cl_col_str(row, "type", cl_dtype_name(t));
            verdict_columns(row, &v);
            cl_row_end(row);
            if (v.call.status == CL_ERR_NOT_IMPLEMENTED)
                return CL_OK; /* one row says it */
        }
    return CL_OK;
}

/* --- compare: the library's, the pairwise and the two-level AlltoAll, interleaved ---------- */

typedef struct trio {
    double lib[MAX_SAMPLES], pair[MAX_SAMPLES], hier[MAX_SAMPLES];
    int n;
    verdict pv, hv;
    int64_t lib_wrong;
} trio;

static void merge(verdict *into, const verdict *v)
{
    if (into->call.status == CL_OK && v->call.status != CL_OK)
        into->call = v->call;
    if (!into->call.forbidden[0] && v->call.forbidden[0])
        snprintf(into->call.forbidden, sizeof into->call.forbidden, "%s", v->call.forbidden);
    for (int i = 0; i < 3; i++)
        into->bad[i] += v->bad[i];
    if (!into->pattern[0] && v->pattern[0])
        snprintf(into->pattern, sizeof into->pattern, "%s", v->pattern);
}

static cl_result pair_once(cl_run *run, cl_comm *c, a2a *b, verdict *v)
{
    cl_coll_args a;
    lab20_coll_args(b, &a);
    return checked_call(run, c, b, "alltoall", &a, sizeof a, 0, v);
}

static cl_result measure(cl_run *run, cl_comm *c, a2a *b, int local, int samples, trio *t)
{
    memset(t, 0, sizeof *t);
    verdict v;
    /* A checked warm-up of each, then interleaved samples: library, pairwise, two-level. */
    for (int k = -1; k < samples; k++) {
        double s;
        int64_t bad[3];
        CL_CHECK(lab20_a2a_fill(run, c, b));
        CL_CHECK(lab20_library(c, b, &s));
        CL_CHECK(lab20_a2a_check(c, b, bad));
        t->lib_wrong += bad[0];
        if (k >= 0)
            t->lib[k] = s;
        CL_CHECK(pair_once(run, c, b, &v));
        merge(&t->pv, &v);
        if (k >= 0)
            t->pair[k] = v.call.seconds;
        CL_CHECK(hier_once(run, c, b, local, &v));
        merge(&t->hv, &v);
        if (k >= 0)
            t->hier[k] = v.call.seconds;
        if (t->pv.call.status != CL_OK || t->hv.call.status != CL_OK)
            break;
        t->n = k + 1;
    }
    return CL_OK;
}

static void times(cl_row *row, const char *key, const double *s, int n)
{
    double us[MAX_SAMPLES];
    for (int i = 0; i < n; i++)
        us[i] = s[i] * 1e6;
    cl_col_nums(row, key, us, (size_t)n, "%.2f");
}

cl_result lab20_compare(cl_run *run, cl_comm *c)
{
    const cl_opts *o = cl_run_opts(run);
    int p = cl_comm_size(c), local, samples = o->repeats > MAX_SAMPLES ? MAX_SAMPLES : o->repeats;
    CL_CHECK(lab20_local(run, c, &local));
    cl_report_int(run, "local", local);
    cl_report_str(run, "units", "size in bytes per rank, times in us");
    size_t es = cl_dtype_size(o->dtype);
    for (size_t bytes = o->min_bytes; bytes <= o->max_bytes; bytes *= (size_t)o->factor) {
        size_t count = bytes / es / (size_t)p * (size_t)p;
        if (count == 0)
            count = (size_t)p;
        a2a b;
        trio *t = malloc(sizeof *t);
        cl_result rc = t ? lab20_a2a_open(c, &b, count, o->dtype) : CL_ERR_NOMEM;
        if (rc == CL_OK)
            rc = measure(run, c, &b, local, samples, t);
        lab20_a2a_close(c, &b);
        if (rc == CL_OK) {
            cl_row *row = cl_row_begin(run, c);
            cl_col_int(row, "size", (long long)(count * es));
            cl_col_int(row, "count", (long long)count);
            times(row, "lib_time", t->lib, t->n);
            times(row, "pairwise_time", t->pair, t->n);
            times(row, "hier_time", t->hier, t->n);
            cl_col_int(row, "lib_wrong", (long long)t->lib_wrong);
            cl_col_str(row, "pairwise_status", cl_result_str(t->pv.call.status));
            cl_col_str(row, "hier_status", cl_result_str(t->hv.call.status));
            cl_col_int(row, "#wrong", (long long)(t->pv.bad[0] + t->hv.bad[0]));
            cl_col_int(row, "overrun", (long long)(t->pv.bad[1] + t->hv.bad[1]));
            cl_col_int(row, "input_changed", (long long)(t->pv.bad[2] + t->hv.bad[2]));
            cl_col_str(row, "forbidden",
                       t->pv.call.forbidden[0]   ? t->pv.call.forbidden
                       : t->hv.call.forbidden[0] ? t->hv.call.forbidden
                                                 : "-");
            cl_col_str(row, "pattern",
                       t->pv.pattern[0]   ? t->pv.pattern
                       : t->hv.pattern[0] ? t->hv.pattern
                                          : "ok");
            if (t->pv.call.status != CL_OK || t->hv.call.status != CL_OK)
                cl_col_str(row, "error",
                           t->pv.call.status != CL_OK ? t->pv.call.error : t->hv.call.error);
            cl_row_end(row);
        }
        free(t);
        CL_CHECK(rc);
        if (bytes > o->max_bytes / (size_t)o->factor)
            break;
    }
    return CL_OK;
}
