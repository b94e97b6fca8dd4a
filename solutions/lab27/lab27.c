/* lab27.c: a benchmark harness in the manner of nccl-tests: the counts of each row, the
 * timing and the check of one size, the sweep and its report, and the record of one
 * change measured before and after. See README.md. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab27.h"

/* --- 1. the counts of a row ------------------------------------------------------------------ */

void lab27_sizes_of(cl_coll_kind kind, size_t bytes, int nranks, lab27_sizes *s)
{
    /* BEGIN SOLUTION */
    size_t es = sizeof(float), n = bytes / es, p = (size_t)nranks;
    memset(s, 0, sizeof *s);
    if (kind == CL_COLL_ALLGATHER) {
        size_t base = (n / p) & ~(size_t)(16 / es - 1); /* 16-byte blocks, as nccl-tests */
        s->count = s->sendcount = base;
        s->recvcount = base * p;
        s->bw_bytes = (double)(base * es * p);
        s->bus_factor = (double)(nranks - 1) / nranks;
    } else {
        s->count = s->sendcount = s->recvcount = n;
        s->bw_bytes = (double)(n * es);
        s->bus_factor = 2.0 * (nranks - 1) / nranks;
    }
    s->size_bytes = (s->sendcount > s->recvcount ? s->sendcount : s->recvcount) * es;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab27) 1: the count, send and receive counts, size column, the bytes algbw
    //                counts and the busbw factor of one row (README section 1).
    (void)kind, (void)bytes, (void)nranks;
    memset(s, 0, sizeof *s);
    END SKELETON */
}

/* --- 2. one size: timed, then checked ----------------------------------------------------------
 */

/* BEGIN SOLUTION */
/* The time of one call, in microseconds, averaged over the ranks. */
static cl_result time_calls(cl_comm *c, cl_coll_kind kind, const void *in, void *out, size_t total,
                            int warmup, int iters, double *us)
{
    for (int i = 0; i < warmup; i++)
        CL_CHECK(lab27_coll(c, kind, in, out, total));
    CL_CHECK(cl_barrier(c));
    double t0 = cl_comm_time(c);
    for (int i = 0; i < iters; i++)
        CL_CHECK(lab27_coll(c, kind, in, out, total));
    int64_t ps[1] = {(int64_t)((cl_comm_time(c) - t0) / iters * 1e12 + 0.5)};
    CL_CHECK(cl_agree(c, CL_SUM, ps, 1));
    *us = (double)ps[0] / 1e6 / cl_comm_size(c);
    return CL_OK;
}

/* Fresh inputs, one call, and the wrong elements of every rank's output, summed. */
static cl_result check_once(cl_comm *c, cl_coll_kind kind, const lab27_sizes *s, void *in,
                            void *out, long long *wrong)
{
    int p = cl_comm_size(c), r = cl_comm_rank(c);
    size_t total = s->recvcount, block = s->sendcount;
    long long w = 0, x;
    CL_CHECK(lab27_fill(c, in, block, kind == CL_COLL_ALLGATHER ? (size_t)r * block : 0));
    CL_CHECK(lab27_coll(c, kind, in, out, total));
    if (kind == CL_COLL_ALLREDUCE) {
        CL_CHECK(lab27_check(c, out, total, 0, p, 0, &w));
    } else {
        for (int j = 0; j < p; j++) { /* block j is rank j's own input */
            CL_CHECK(lab27_check(c, (float *)out + (size_t)j * block, block, j, j + 1,
                                 (size_t)j * block, &x));
            w += x;
        }
    }
    int64_t v[1] = {w};
    CL_CHECK(cl_agree(c, CL_SUM, v, 1));
    *wrong = v[0];
    return CL_OK;
}
/* END SOLUTION */

cl_result lab27_bench(cl_comm *c, cl_coll_kind kind, size_t bytes, int warmup, int iters,
                      void *sendbuf, void *recvbuf, lab27_result *r)
{
    /* BEGIN SOLUTION */
    memset(r, 0, sizeof *r);
    lab27_sizes_of(kind, bytes, cl_comm_size(c), &r->s);
    size_t block = r->s.sendcount;
    for (int ip = 0; ip < 2; ip++) {
        /* in place: AllReduce's input is its output, AllGather's is its own block of it */
        void *in = !ip ? sendbuf
                   : kind == CL_COLL_ALLGATHER
                       ? (void *)((float *)recvbuf + (size_t)cl_comm_rank(c) * block)
                       : recvbuf;
        CL_CHECK(time_calls(c, kind, in, recvbuf, r->s.recvcount, warmup, iters, &r->time_us[ip]));
        r->algbw[ip] = r->s.bw_bytes / 1e9 / (r->time_us[ip] * 1e-6);
        r->busbw[ip] = r->algbw[ip] * r->s.bus_factor;
        CL_CHECK(check_once(c, kind, &r->s, in, recvbuf, &r->wrong[ip]));
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab27) 2: out-of-place then in-place: warmup untimed calls, a barrier, iters
    //                timed calls (the time of one, averaged over the ranks), then fresh
    //                inputs, one call and the wrong elements of every rank (README section 2).
    (void)c, (void)kind, (void)bytes, (void)warmup, (void)iters, (void)sendbuf, (void)recvbuf;
    memset(r, 0, sizeof *r);
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* --- 3. the sweep and its report ------------------------------------------------------------- */

/* BEGIN SOLUTION */
/* Append to text[*used..cap) like snprintf; stops (and keeps the text terminated) when full. */
static void put(char *text, size_t cap, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *text, size_t cap, size_t *used, const char *fmt, ...)
{
    if (*used >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text + *used, cap - *used, fmt, ap);
    va_end(ap);
    *used = n < 0 ? cap : *used + (size_t)n;
}

static void put_time(char *text, size_t cap, size_t *used, double us)
{
    if (us >= 10000.0)
        put(text, cap, used, "  %7.0f", us);
    else if (us >= 100.0)
        put(text, cap, used, "  %7.1f", us);
    else
        put(text, cap, used, "  %7.2f", us);
}
/* END SOLUTION */

cl_result lab27_sweep(cl_comm *c, const lab27_config *cfg, char *text, size_t cap)
{
    /* BEGIN SOLUTION */
    int p = cl_comm_size(c), me = cl_comm_rank(c);
    const char *prog = cfg->kind == CL_COLL_ALLGATHER ? "all_gather_perf" : "all_reduce_perf";
    const char *redop = cfg->kind == CL_COLL_ALLGATHER ? "none" : "sum";
    size_t used = 0;
    if (me != 0)
        cap = 0; /* only rank 0 reports */
    void *send = NULL, *recv = NULL;
    cl_result rc = CL_OK;
    CL_TRY(cl_mem_alloc(c, cfg->max_bytes, &send));
    CL_TRY(cl_mem_alloc(c, cfg->max_bytes, &recv));
    put(text, cap, &used, "# Collective test starting: %s\n", prog);
    put(text, cap, &used,
        "# nThread 1 nGpus 1 minBytes %zu maxBytes %zu step: %d(factor) warmup iters: %d "
        "iters: %d agg iters: 1 validation: 1 graph: 0\n",
        cfg->min_bytes, cfg->max_bytes, cfg->factor, cfg->warmup, cfg->iters);
    put(text, cap, &used, "#\n");
    put(text, cap, &used,
        "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place"
        "          \n",
        "", "", "", "", "");
    put(text, cap, &used, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n",
        "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time",
        "algbw", "busbw", "#wrong");
    put(text, cap, &used, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n",
        "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
        "");
    /* warm-up: every size from the smallest, doubling, before anything is timed */
    for (size_t b = cfg->min_bytes; b <= cfg->max_bytes; b *= 2) {
        lab27_sizes s;
        lab27_sizes_of(cfg->kind, b, p, &s);
        for (int i = 0; i < cfg->warmup && s.recvcount; i++)
            CL_TRY(lab27_coll(c, cfg->kind, send, recv, s.recvcount));
    }
    double bus_sum = 0;
    int rows = 0, errors = 0;
    for (size_t b = cfg->min_bytes; b <= cfg->max_bytes; b *= (size_t)cfg->factor) {
        lab27_result r;
        CL_TRY(lab27_bench(c, cfg->kind, b, 1, cfg->iters, send, recv, &r));
        put(text, cap, &used, "%12zu  %12zu  %8s  %6s  %6i", r.s.size_bytes, r.s.count, "float",
            redop, -1);
        for (int ip = 0; ip < 2; ip++) {
            put_time(text, cap, &used, r.time_us[ip]);
            put(text, cap, &used, "  %6.2f  %6.2f  %5g", r.algbw[ip], r.busbw[ip],
                (double)r.wrong[ip]);
            bus_sum += r.busbw[ip];
            rows++;
            errors += r.wrong[ip] != 0;
        }
        put(text, cap, &used, "\n");
        if (b > cfg->max_bytes / (size_t)cfg->factor)
            break;
    }
    put(text, cap, &used, "# Out of bounds values : %d %s\n", errors, errors ? "FAILED" : "OK");
    put(text, cap, &used, "# Avg bus bandwidth    : %g %s\n", rows ? bus_sum / rows : 0.0, "");
    put(text, cap, &used, "#\n");
    put(text, cap, &used, "# Collective test concluded: %s\n", prog);
    if (me == 0 && used >= cap) {
        cl_set_error("the report is longer than %zu bytes", cap);
        rc = CL_ERR_INVALID;
    }
done:
    if (send)
        cl_mem_free(c, send);
    if (recv)
        cl_mem_free(c, recv);
    return rc;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab27) 3: warm up every size, then measure each size of the sweep, and write
    //                nccl-tests' report on rank 0: its header, one row per size, its
    //                footer (README section 3).
    (void)c, (void)cfg, (void)cap;
    text[0] = '\0';
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* --- 4. the record of one change ------------------------------------------------------------- */

/* BEGIN SOLUTION */
static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
/* END SOLUTION */

cl_result lab27_compare(const double *before, const double *after, int n, lab27_effect *e)
{
    /* BEGIN SOLUTION */
    memset(e, 0, sizeof *e);
    if (n < 1 || n > 64) {
        cl_set_error("%d pairs of samples (1 to 64)", n);
        return CL_ERR_INVALID;
    }
    double b[64], a[64], ratio[64];
    for (int i = 0; i < n; i++) {
        if (!(before[i] > 0) || !(after[i] > 0)) {
            cl_set_error("sample %d is not a positive number", i);
            return CL_ERR_INVALID;
        }
        b[i] = before[i];
        a[i] = after[i];
        ratio[i] = after[i] / before[i];
    }
    e->median_before = median_of(b, n);
    e->median_after = median_of(a, n);
    e->effect = median_of(ratio, n); /* sorts ratio */
    e->lo = ratio[0];
    e->hi = ratio[n - 1];
    /* The verdict: the middle half of the paired ratios on one side of 1. One outlier
     * does not move it (the range would), and noise alone rarely puts three quarters
     * of the pairs on the same side. */
    double q1 = ratio[(n - 1) / 4], q3 = ratio[n - 1 - (n - 1) / 4];
    e->verdict = q1 > 1 ? 1 : q3 < 1 ? -1 : 0;
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab27) 4: the medians, the effect (median of the paired ratios), its spread,
    //                and your verdict: does the change help, hurt, or can these samples
    //                not tell (README section 4)?
    (void)before, (void)after, (void)n;
    memset(e, 0, sizeof *e);
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
