/* coll_suite.c: verify, bench and sweep the collectives of a lab (coll_suite.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boundary/wire.h"
#include "coll_suite.h"
#include "data.h"
#include "run.h"

#define GUARD       64 /* poisoned elements after every output */
#define MAX_SAMPLES 1000

/* One test: an entry at one count, type, reduction and root. */
typedef struct test {
    const cl_coll_entry *e;
    size_t count;
    cl_dtype t;
    cl_op op;
    int root;
    int samples; /* timed samples after one checked warm-up */
    int iters;   /* calls per sample */
    int base;    /* time the library's collective too, interleaved (it goes first) */
} test;

/* What a test found, the same on every rank. */
typedef struct outcome {
    cl_result status;
    char error[400];
    char forbidden[48];
    char pattern[200];
    size_t wrong, overrun, changed, base_wrong;
    int n;
    double t[MAX_SAMPLES], bt[MAX_SAMPLES];
} outcome;

/* This rank's buffers and argument block for one test. */
typedef struct bufs {
    void *send, *recv, *scratch;
    size_t send_elems, recv_elems, scratch_bytes;
    size_t *counts;  /* ALLTOALLV: sendcounts, sdispls, recvcounts, rdispls (p each) */
    uint64_t layout; /* ALLTOALLV: the seed of the counts */
    size_t avg;      /* ALLTOALLV: their mean */
    size_t block;    /* ALLTOALL: count / p */
} bufs;

static const cl_coll_entry *entries(const cl_run *run) { return run->lab->collectives; }

/* --- sizes of each kind's buffers ---------------------------------------------------------- */

/* ALLTOALLV's counts: element j of rank i's send goes to rank j; sizes drawn
 * from the seed, uneven, zero included. */
static size_t v_count(uint64_t seed, int i, int j, size_t avg)
{
    return (size_t)(cl_data_hash(seed ^ ((uint64_t)i << 32 | (uint64_t)j)) % (2 * avg + 1));
}

static void v_layout(size_t *cnt, int p, int me, uint64_t seed, size_t avg)
{
    size_t *sc = cnt, *sd = cnt + p, *rc = cnt + 2 * p, *rd = cnt + 3 * p, s = 0, r = 0;
    for (int j = 0; j < p; j++) {
        sc[j] = v_count(seed, me, j, avg);
        rc[j] = v_count(seed, j, me, avg);
        sd[j] = s;
        rd[j] = r;
        s += sc[j];
        r += rc[j];
    }
}

static cl_result bufs_open(cl_comm *c, const test *t, uint64_t layout_seed, bufs *b)
{
    int p = cl_comm_size(c), r = cl_comm_rank(c);
    size_t es = cl_dtype_size(t->t), off, len;
    memset(b, 0, sizeof *b);
    cl_coll_block(t->count, p, r, &off, &len);
    switch (t->e->kind) {
    case CL_COLL_ALLGATHER: b->send_elems = len, b->recv_elems = t->count; break;
    case CL_COLL_REDUCESCATTER: b->send_elems = t->count, b->recv_elems = len; break;
    case CL_COLL_ALLTOALLV: {
        b->counts = malloc(4 * (size_t)p * sizeof *b->counts);
        if (!b->counts)
            return CL_ERR_NOMEM;
        b->layout = layout_seed;
        b->avg = t->count / (size_t)p + 1;
        v_layout(b->counts, p, r, b->layout, b->avg);
        for (int j = 0; j < p; j++) {
            b->send_elems += b->counts[j];
            b->recv_elems += b->counts[2 * p + j];
        }
        break;
    }
    default: b->send_elems = b->recv_elems = t->count;
    }
    b->block = t->count / (size_t)p;
    size_t two_blocks = 2 * (t->count / (size_t)p + 1);
    b->scratch_bytes = (t->count > two_blocks ? t->count : two_blocks) * es;
    if (b->scratch_bytes < 4096)
        b->scratch_bytes = 4096;
    CL_CHECK(cl_mem_alloc(c, b->send_elems * es, &b->send));
    CL_CHECK(cl_mem_alloc(c, (b->recv_elems + GUARD) * es, &b->recv));
    CL_CHECK(cl_mem_alloc(c, b->scratch_bytes, &b->scratch));
    return CL_OK;
}

static void bufs_close(cl_comm *c, bufs *b)
{
    cl_mem_free(c, b->send);
    cl_mem_free(c, b->recv);
    cl_mem_free(c, b->scratch);
    free(b->counts);
}

/* The data's reduction for kinds that only move data: the max/min inputs
 * spread widely, so misplaced elements show. */
static cl_op data_op(const test *t) { return cl_coll_reduces(t->e->kind) ? t->op : CL_MAX; }

/* --- one call ------------------------------------------------------------------------------ */

static cl_result fill(cl_comm *c, const test *t, bufs *b, uint64_t seed)
{
    int r = cl_comm_rank(c);
    size_t off, len, es = cl_dtype_size(t->t);
    cl_coll_block(t->count, cl_comm_size(c), r, &off, &len);
    cl_op op = data_op(t);
    switch (t->e->kind) {
    case CL_COLL_ALLGATHER: CL_CHECK(cl_fill(c, b->send, len, t->t, op, seed, r, off)); break;
    case CL_COLL_BROADCAST:
        if (r == t->root)
            CL_CHECK(cl_fill(c, b->send, t->count, t->t, op, seed, r, 0));
        else
            CL_CHECK(cl_poison(c, b->send, t->count * es, t->t));
        break;
    default: CL_CHECK(cl_fill(c, b->send, b->send_elems, t->t, op, seed, r, 0));
    }
    return cl_poison(c, b->recv, (b->recv_elems + GUARD) * es, t->t);
}

/* Wrong elements of this rank's output, writes past its end, changes to its input. */
static cl_result check(cl_comm *c, const test *t, bufs *b, uint64_t seed, double v[3])
{
    int p = cl_comm_size(c), r = cl_comm_rank(c);
    size_t es = cl_dtype_size(t->t), wrong = 0, n, off, len;
    char *out = b->recv;
    cl_op op = data_op(t);
    switch (t->e->kind) {
    case CL_COLL_ALLREDUCE:
        CL_CHECK(cl_count_wrong(c, out, t->count, t->t, op, seed, 0, p, 0, &wrong));
        break;
    case CL_COLL_REDUCE:
        if (r == t->root)
            CL_CHECK(cl_count_wrong(c, out, t->count, t->t, op, seed, 0, p, 0, &wrong));
        break;
    case CL_COLL_REDUCESCATTER:
        cl_coll_block(t->count, p, r, &off, &len);
        CL_CHECK(cl_count_wrong(c, out, len, t->t, op, seed, 0, p, off, &wrong));
        break;
    case CL_COLL_ALLGATHER:
        for (int i = 0; i < p; i++) {
            cl_coll_block(t->count, p, i, &off, &len);
            CL_CHECK(cl_count_wrong(c, out + off * es, len, t->t, op, seed, i, i + 1, off, &n));
            wrong += n;
        }
        break;
    case CL_COLL_BROADCAST:
        CL_CHECK(cl_count_wrong(c, out, t->count, t->t, op, seed, t->root, t->root + 1, 0, &wrong));
        break;
    case CL_COLL_ALLTOALL:
        for (int i = 0; i < p; i++) {
            CL_CHECK(cl_count_wrong(c, out + (size_t)i * b->block * es, b->block, t->t, op, seed, i,
                                    i + 1, (size_t)r * b->block, &n));
            wrong += n;
        }
        break;
    case CL_COLL_ALLTOALLV: {
        size_t *rc = b->counts + 2 * p, *rd = b->counts + 3 * p;
        for (int i = 0; i < p; i++) {
            size_t first = 0; /* where rank i's block for me starts in its send buffer */
            for (int k = 0; k < r; k++)
                first += v_count(b->layout, i, k, b->avg);
            CL_CHECK(
                cl_count_wrong(c, out + rd[i] * es, rc[i], t->t, op, seed, i, i + 1, first, &n));
            wrong += n;
        }
        break;
    }
    default: break;
    }
    v[0] = (double)wrong;
    CL_CHECK(cl_count_unpoisoned(c, out + b->recv_elems * es, GUARD, t->t, &n));
    v[1] = (double)n;
    n = 0;
    if (t->e->kind == CL_COLL_ALLGATHER) {
        cl_coll_block(t->count, p, r, &off, &len);
        CL_CHECK(cl_count_wrong(c, b->send, len, t->t, op, seed, r, r + 1, off, &n));
    } else if (t->e->kind != CL_COLL_BROADCAST || r == t->root) {
        CL_CHECK(cl_count_wrong(c, b->send, b->send_elems, t->t, op, seed, r, r + 1, 0, &n));
    }
    v[2] = (double)n;
    return CL_OK;
}

/* The student's call: the argument block (with ALLTOALLV's counts after it,
 * pointing into the block where the student's program will see it). */
static cl_result student_call(cl_comm *c, const test *t, bufs *b, cl_call_result *res)
{
    int p = cl_comm_size(c);
    size_t extra = t->e->kind == CL_COLL_ALLTOALLV ? 4 * (size_t)p * sizeof(size_t) : 0;
    size_t bytes = sizeof(cl_coll_args) + extra;
    char *block = calloc(1, bytes);
    char *home = cl_student_args_home(c);
    if (!block)
        return CL_ERR_NOMEM;
    cl_coll_args *a = (cl_coll_args *)block;
    *a = (cl_coll_args){.sendbuf = b->send,
                        .recvbuf = b->recv,
                        .count = t->count,
                        .dtype = t->t,
                        .op = t->op,
                        .root = t->root,
                        .scratch = b->scratch,
                        .scratch_bytes = b->scratch_bytes};
    if (extra && home) {
        memcpy(block + sizeof *a, b->counts, extra);
        const size_t *at = (const size_t *)(home + sizeof *a);
        a->sendcounts = at;
        a->sdispls = at + p;
        a->recvcounts = at + 2 * p;
        a->rdispls = at + 3 * p;
    }
    unsigned allow = CL_ALLOW_COLLECTIVE | (t->e->pattern ? 0 : CL_CALL_UNTRACED);
    cl_result rc = cl_student_run(c, t->e->name, block, bytes, allow, res);
    free(block);
    return rc;
}

/* The library's collective, timed on this rank's clock after a barrier. */
static cl_result library_call(cl_comm *c, const test *t, bufs *b, double *seconds)
{
    int p = cl_comm_size(c);
    cl_coll_args a = {.sendbuf = b->send,
                      .recvbuf = b->recv,
                      .count = t->count,
                      .dtype = t->t,
                      .op = t->op,
                      .root = t->root,
                      .scratch = b->scratch,
                      .scratch_bytes = b->scratch_bytes};
    if (b->counts) {
        a.sendcounts = b->counts;
        a.sdispls = b->counts + p;
        a.recvcounts = b->counts + 2 * p;
        a.rdispls = b->counts + 3 * p;
    }
    CL_CHECK(cl_barrier(c));
    double t0 = cl_comm_time(c);
    CL_CHECK(cl_library_coll(c, t->e->kind, &a));
    *seconds = cl_comm_time(c) - t0;
    return CL_OK;
}

/* What every rank saw in one call, summed or maximised over the ranks. */
enum { A_STATUS, A_FORBIDDEN, A_PATTERN, A_WRONG, A_OVERRUN, A_CHANGED, A_N };

static char first_error[400], first_forbidden[48], first_pattern[200];

static cl_result agree_call(cl_comm *c, int64_t v[A_N], double *seconds, outcome *out)
{
    int64_t mx[3] = {v[A_STATUS], v[A_FORBIDDEN], v[A_PATTERN]};
    int64_t sum[3] = {v[A_WRONG], v[A_OVERRUN], v[A_CHANGED]};
    CL_CHECK(cl_agree(c, CL_MAX, mx, 3));
    CL_CHECK(cl_agree(c, CL_SUM, sum, 3));
    CL_CHECK(cl_agree_max(c, seconds, 1));
    out->wrong += (size_t)sum[0];
    out->overrun += (size_t)sum[1];
    out->changed += (size_t)sum[2];
    if (mx[0] && out->status == CL_OK) {
        out->status = (cl_result)mx[0];
        snprintf(out->error, sizeof out->error, "%s",
                 first_error[0] ? first_error : "failed on another rank");
    }
    if (mx[1] && !out->forbidden[0])
        snprintf(out->forbidden, sizeof out->forbidden, "%s",
                 first_forbidden[0] ? first_forbidden : "(on another rank)");
    if (mx[2] && !out->pattern[0])
        snprintf(out->pattern, sizeof out->pattern, "%s",
                 first_pattern[0] ? first_pattern : "(on another rank)");
    return CL_OK;
}

/* One checked call of the student's collective; *seconds its time (max over ranks). */
static cl_result one_call(cl_run *run, cl_comm *c, const test *t, bufs *b, outcome *out,
                          double *seconds)
{
    uint64_t seed;
    int64_t v[A_N] = {0};
    double chk[3] = {0};
    cl_call_result res;
    CL_CHECK(cl_fresh_seed(run, c, &seed));
    CL_CHECK(fill(c, t, b, seed));
    CL_CHECK(cl_barrier(c));
    CL_CHECK(student_call(c, t, b, &res));
    *seconds = res.seconds;
    if (res.status != CL_OK) {
        v[A_STATUS] = res.status;
        if (!first_error[0])
            snprintf(first_error, sizeof first_error, "rank %d: %s", cl_comm_rank(c), res.error);
    }
    if (res.forbidden[0]) {
        v[A_FORBIDDEN] = 1;
        if (!first_forbidden[0])
            snprintf(first_forbidden, sizeof first_forbidden, "%s", res.forbidden);
    }
    if (res.status == CL_OK) {
        CL_CHECK(check(c, t, b, seed, chk));
        v[A_WRONG] = (int64_t)chk[0], v[A_OVERRUN] = (int64_t)chk[1],
        v[A_CHANGED] = (int64_t)chk[2];
        char why[200] = "";
        int ntr;
        const cl_trace_event *tr = cl_student_trace(c, &ntr);
        cl_coll_args a = {.count = t->count, .dtype = t->t, .op = t->op, .root = t->root};
        if (t->e->pattern && !t->e->pattern(c, &a, tr, ntr, why, sizeof why)) {
            v[A_PATTERN] = 1;
            if (!first_pattern[0])
                snprintf(first_pattern, sizeof first_pattern, "rank %d: %s", cl_comm_rank(c), why);
        }
    }
    return agree_call(c, v, seconds, out);
}

static cl_result run_test(cl_run *run, cl_comm *c, test *t, outcome *out)
{
    bufs b;
    uint64_t layout;
    memset(out, 0, sizeof *out);
    first_error[0] = first_forbidden[0] = first_pattern[0] = '\0';
    cl_result rc = cl_fresh_seed(run, c, &layout);
    if (rc == CL_OK)
        rc = bufs_open(c, t, layout, &b);
    /* Warm-up: one call of each, checked like every other. */
    double s = 0, bs;
    if (rc == CL_OK && t->base) {
        rc = library_call(c, t, &b, &bs);
        if (rc == CL_ERR_UNSUPPORTED) { /* no such call in this library: time the student alone */
            rc = CL_OK;
            t->base = 0;
        }
    }
    if (rc == CL_OK)
        rc = one_call(run, c, t, &b, out, &s);
    for (int k = 0; rc == CL_OK && out->status == CL_OK && k < t->samples; k++) {
        if (t->base) {
            double sum = 0;
            for (int i = 0; rc == CL_OK && i < t->iters; i++) {
                uint64_t seed;
                double w[3] = {0};
                rc = cl_fresh_seed(run, c, &seed);
                if (rc == CL_OK)
                    rc = fill(c, t, &b, seed);
                if (rc == CL_OK)
                    rc = library_call(c, t, &b, &bs);
                if (rc == CL_OK)
                    rc = cl_agree_max(c, &bs, 1);
                if (rc == CL_OK)
                    rc = check(c, t, &b, seed, w);
                out->base_wrong += (size_t)w[0];
                sum += bs;
            }
            out->bt[k] = sum / t->iters;
        }
        double sum = 0;
        for (int i = 0; rc == CL_OK && out->status == CL_OK && i < t->iters; i++) {
            rc = one_call(run, c, t, &b, out, &s);
            sum += s;
        }
        out->t[k] = sum / t->iters;
        out->n = k + 1;
    }
    if (rc == CL_OK) { /* the library's wrong elements, summed over ranks */
        int64_t bw = (int64_t)out->base_wrong;
        rc = cl_agree(c, CL_SUM, &bw, 1);
        out->base_wrong = (size_t)bw;
    }
    bufs_close(c, &b);
    return rc;
}

/* --- rows ------------------------------------------------------------------------------- */

static void result_columns(cl_row *row, const outcome *o)
{
    cl_col_str(row, "status", cl_result_str(o->status));
    cl_col_int(row, "#wrong", (long long)o->wrong);
    cl_col_int(row, "overrun", (long long)o->overrun);
    cl_col_int(row, "input_changed", (long long)o->changed);
    cl_col_str(row, "forbidden", o->forbidden[0] ? o->forbidden : "-");
    cl_col_str(row, "pattern", o->pattern[0] ? o->pattern : "ok");
    if (o->status != CL_OK)
        cl_col_str(row, "error", o->error);
}

static void test_columns(cl_row *row, const test *t)
{
    size_t es = cl_dtype_size(t->t);
    cl_col_str(row, "name", t->e->name);
    cl_col_int(row, "size", (long long)(t->count * es));
    cl_col_int(row, "count", (long long)t->count);
    cl_col_str(row, "type", cl_dtype_name(t->t));
    cl_col_str(row, "redop", cl_coll_reduces(t->e->kind) ? cl_op_name(t->op) : "none");
    cl_col_int(row, "root", cl_coll_rooted(t->e->kind) ? t->root : -1);
}

static int selected(const cl_run *run, const char *name)
{
    const char *s = run->o.colls;
    if (!s)
        return 1;
    size_t n = strlen(name);
    for (; *s;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len == n && strncmp(s, name, n) == 0)
            return 1;
        s += len + (e ? 1 : 0);
    }
    return 0;
}

/* --- verify ---------------------------------------------------------------------------- */

static cl_result verify_entry(cl_run *run, cl_comm *c, const cl_coll_entry *e)
{
    int p = cl_comm_size(c);
    int a2a = e->kind == CL_COLL_ALLTOALL;
    const size_t counts[] = {a2a ? (size_t)p : 1, (size_t)(a2a ? 7 * p : 2 * p - 1),
                             (size_t)(a2a ? 13 * p : 7 * p + 1), a2a ? (size_t)(512 * p) : 4099,
                             a2a ? (size_t)(8191 * p) : 65537};
    int red = cl_coll_reduces(e->kind), rooted = cl_coll_rooted(e->kind);
    for (int ci = 0; ci < 5; ci++) {
        if (ci > 0 && counts[ci] == counts[ci - 1])
            continue;
        int all = ci == 3;
        for (int ti = 0; ti < CL_DTYPE_COUNT; ti++)
            for (int oi = 0; oi < (red ? CL_OP_COUNT : 1); oi++) {
                cl_dtype t = (cl_dtype)ti;
                cl_op op = (cl_op)oi;
                int plain = t == CL_FLOAT32 && (op == CL_SUM || !red);
                if (!all && !plain && !(ci == 4 && t == CL_FLOAT64 && (op == CL_MAX || !red)))
                    continue;
                int roots[3] = {0, p - 1, p / 2}, nroots = rooted && all && t == CL_FLOAT32 ? 3 : 1;
                for (int ri = 0; ri < nroots; ri++) {
                    if (ri > 0 && (roots[ri] == roots[0] || roots[ri] == roots[ri - 1]))
                        continue;
                    test tt = {.e = e,
                               .count = counts[ci],
                               .t = t,
                               .op = op,
                               .root = roots[ri],
                               .samples = 1,
                               .iters = 1};
                    outcome *o = malloc(sizeof *o);
                    cl_result rc = o ? run_test(run, c, &tt, o) : CL_ERR_NOMEM;
                    cl_row *row = rc == CL_OK ? cl_row_begin(run, c) : NULL;
                    test_columns(row, &tt);
                    if (o)
                        result_columns(row, o);
                    cl_row_end(row);
                    int stop = o && o->status == CL_ERR_NOT_IMPLEMENTED;
                    free(o);
                    CL_CHECK(rc);
                    if (stop)
                        return CL_OK; /* one line says it; no need for twenty */
                }
            }
    }
    return CL_OK;
}

cl_result cl_coll_verify(cl_run *run, cl_comm *comm)
{
    int any = 0;
    for (const cl_coll_entry *e = entries(run); e && e->name; e++)
        if (selected(run, e->name)) {
            any = 1;
            CL_CHECK(verify_entry(run, comm, e));
        }
    if (!any) {
        cl_set_error("--coll %s names none of this lab's collectives", run->o.colls);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

/* --- bench and sweep ---------------------------------------------------------------------- */

static void timing_columns(cl_row *row, const test *t, const outcome *o, int p)
{
    double bytes = (double)(t->count * cl_dtype_size(t->t));
    double f = cl_coll_busbw_factor(t->e->kind, p);
    double us[MAX_SAMPLES], bw[MAX_SAMPLES], bus[MAX_SAMPLES];
    for (int i = 0; i < o->n; i++) {
        us[i] = o->t[i] * 1e6;
        bw[i] = o->t[i] > 0 ? bytes / o->t[i] / 1e9 : 0;
        bus[i] = bw[i] * f;
    }
    cl_col_nums(row, "time", us, (size_t)o->n, "%.2f");
    cl_col_nums(row, "algbw", bw, (size_t)o->n, "%.2f");
    cl_col_nums(row, "busbw", bus, (size_t)o->n, "%.2f");
    if (t->base) {
        for (int i = 0; i < o->n; i++) {
            us[i] = o->bt[i] * 1e6;
            bus[i] = o->bt[i] > 0 ? bytes / o->bt[i] / 1e9 * f : 0;
        }
        cl_col_nums(row, "base_time", us, (size_t)o->n, "%.2f");
        cl_col_nums(row, "base_busbw", bus, (size_t)o->n, "%.2f");
        cl_col_int(row, "base_wrong", (long long)o->base_wrong);
    }
}

static size_t count_of(const cl_coll_entry *e, size_t bytes, cl_dtype t, int p)
{
    size_t n = bytes / cl_dtype_size(t);
    if (e->kind == CL_COLL_ALLTOALL)
        n = n / (size_t)p * (size_t)p;
    return n ? n : e->kind == CL_COLL_ALLTOALL ? (size_t)p : 1;
}

/* Run one timed test and add its row. */
static cl_result measure(cl_run *run, cl_comm *comm, test *t)
{
    outcome *o = malloc(sizeof *o);
    if (!o)
        return CL_ERR_NOMEM;
    cl_result rc = run_test(run, comm, t, o);
    if (rc == CL_OK) {
        cl_row *row = cl_row_begin(run, comm);
        test_columns(row, t);
        timing_columns(row, t, o, cl_comm_size(comm));
        result_columns(row, o);
        cl_row_end(row);
    }
    free(o);
    return rc;
}

static void header(cl_run *run)
{
    cl_report_str(run, "units", "size in bytes, time in us, algbw and busbw in GB/s");
}

cl_result cl_coll_bench(cl_run *run, cl_comm *comm)
{
    const cl_coll_entry *e = NULL;
    for (const cl_coll_entry *x = entries(run); x && x->name; x++)
        if (run->o.colls && strcmp(run->o.colls, x->name) == 0)
            e = x;
    if (!e) {
        cl_set_error("bench needs --coll with one of this lab's collectives");
        return CL_ERR_INVALID;
    }
    header(run);
    test t = {.e = e,
              .count = count_of(e, run->o.bytes, run->o.dtype, cl_comm_size(comm)),
              .t = run->o.dtype,
              .op = run->o.op,
              .samples = run->o.repeats,
              .iters = run->o.iters,
              .base = e->baseline};
    return measure(run, comm, &t);
}

cl_result cl_coll_sweep(cl_run *run, cl_comm *comm)
{
    header(run);
    for (size_t bytes = run->o.min_bytes; bytes <= run->o.max_bytes;
         bytes *= (size_t)run->o.factor) {
        for (const cl_coll_entry *e = entries(run); e && e->name; e++) {
            if (!selected(run, e->name))
                continue;
            test t = {.e = e,
                      .count = count_of(e, bytes, run->o.dtype, cl_comm_size(comm)),
                      .t = run->o.dtype,
                      .op = run->o.op,
                      .samples = run->o.repeats,
                      .iters = run->o.iters,
                      .base = e->baseline};
            CL_CHECK(measure(run, comm, &t));
        }
        if (bytes > run->o.max_bytes / (size_t)run->o.factor)
            break;
    }
    return CL_OK;
}

int cl_trace_transfers(const cl_trace_event *ev, int n, int sends, int *peer, size_t *bytes,
                       int max)
{
    int k = 0;
    for (int i = 0; i < n && k < max; i++)
        if (ev[i].op == (sends ? CL_WOP_ISEND : CL_WOP_IRECV)) {
            peer[k] = ev[i].peer;
            bytes[k++] = ev[i].bytes;
        }
    return k;
}
