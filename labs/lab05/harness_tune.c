/* harness_tune.c: lab 05's harness side: the chain's message pattern, the tune mode, and the
 * tables that name them (the suite's collectives, the lab's modes).
 *
 * tune scores the student's decision, lab05_broadcast_chunk(). The harness
 * measures every hop of the chain (ping-pongs of two sizes, a two-point fit),
 * asks for a chunk size at each message size, runs the student's Broadcast
 * with it (checked like every call: data, overrun, input, message pattern) and
 * compares its time with the best the harness finds by running the library's
 * chain over a fine grid of chunk counts ("sim", deterministic), or with the
 * library's Broadcast interleaved ("cpu"). The student's program never sees
 * the measurement, the sweep or the library's chunk rule.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab05_harness.h"

#define GUARD       64 /* poisoned elements after the output */
#define PROBE_SMALL 8  /* bytes of the latency probe */
#define PROBE_LARGE ((size_t)4 << 20)
#define GRID_STEP   1.1892 /* 2^(1/4): the harness's grid of chunk counts */
#define MAX_SAMPLES 64

/* --- the chain's message pattern ------------------------------------------------------- */

/* A rank receives only from the rank before it on the chain and sends only to
 * the one after it, no message is longer than a chunk, and the whole message
 * crosses each hop once (empty messages do not count). 1 when the trace fits,
 * else 0 with the reason. */
static int chain_fits(const cl_comm *c, const cl_coll_args *a, size_t chunk_bytes,
                      const cl_trace_event *ev, int n, char *why, size_t len)
{
    int p = cl_comm_size(c), r = cl_comm_rank(c), pos = (r - a->root + p) % p;
    size_t es = cl_dtype_size(a->dtype), total = a->count * es;
    size_t limit = (chunk_bytes / es ? chunk_bytes / es : 1) * es, moved[2] = {0, 0};
    for (int i = 0; i < n; i++) {
        int send = ev[i].op == CL_WOP_ISEND;
        if ((!send && ev[i].op != CL_WOP_IRECV) || ev[i].bytes == 0)
            continue;
        int peer = send ? (pos < p - 1 ? (r + 1) % p : -1) : (pos > 0 ? (r - 1 + p) % p : -1);
        if (ev[i].peer != peer) {
            snprintf(why, len, "%s rank %d: not along the chain %d -> %d -> ...",
                     send ? "sends to" : "receives from", ev[i].peer, a->root, (a->root + 1) % p);
            return 0;
        }
        if (ev[i].bytes > limit) {
            snprintf(why, len, "a message of %zu bytes, longer than the chunk (%zu bytes)",
                     ev[i].bytes, limit);
            return 0;
        }
        moved[send] += ev[i].bytes;
    }
    if ((pos > 0 && moved[0] != total) || (pos < p - 1 && moved[1] != total)) {
        snprintf(why, len, "%s %zu of the %zu bytes",
                 pos > 0 && moved[0] != total ? "received" : "forwarded",
                 pos > 0 && moved[0] != total ? moved[0] : moved[1], total);
        return 0;
    }
    return 1;
}

/* The chain's pattern for the suite's Broadcast calls (cl_coll_entry.pattern). */
static int lab05_suite_pattern(const cl_comm *c, const cl_coll_args *a, const cl_trace_event *ev,
                               int n, char *why, size_t len)
{
    return chain_fits(c, a, lab05_suite_chunk(a->count * cl_dtype_size(a->dtype)), ev, n, why, len);
}

/* --- the chain's hops, measured by the harness ------------------------------------------ */

/* One-way time of `bytes` from rank `from` to from+1 (mod p): ping-pongs, the
 * median of several samples off the simulator (its times are exact); the same
 * on every rank. */
static cl_result hop_time(cl_comm *c, void *buf, int from, size_t bytes, double *t)
{
    int p = cl_comm_size(c), r = cl_comm_rank(c), to = (from + 1) % p;
    int sim = cl_comm_on_sim(c), reps = sim ? 1 : 5, iters = sim ? 1 : bytes > 65536 ? 10 : 100;
    double s[5];
    for (int k = 0; k < reps; k++) {
        CL_CHECK(cl_barrier(c));
        double t0 = cl_comm_time(c);
        for (int i = 0; i < iters; i++) {
            if (r == from) {
                CL_CHECK(cl_send(c, buf, bytes, to));
                CL_CHECK(cl_recv(c, buf, bytes, to));
            } else if (r == to) {
                CL_CHECK(cl_recv(c, buf, bytes, from));
                CL_CHECK(cl_send(c, buf, bytes, from));
            }
        }
        s[k] = r == from ? (cl_comm_time(c) - t0) / (2.0 * iters) : 0;
        CL_CHECK(cl_agree_max(c, &s[k], 1));
    }
    *t = cl_median(s, (size_t)reps);
    return CL_OK;
}

/* Every hop i -> i+1 (mod p): a two-point fit of its one-way times. */
static cl_result measure_chain(cl_comm *c, lab05_chain *chain)
{
    int p = cl_comm_size(c);
    void *buf;
    if (p > LAB05_MAX_HOPS) {
        cl_set_error("tune runs on at most %d ranks (LAB05_MAX_HOPS), not %d", LAB05_MAX_HOPS, p);
        return CL_ERR_INVALID;
    }
    CL_CHECK(cl_mem_alloc(c, PROBE_LARGE, &buf));
    memset(chain, 0, sizeof *chain);
    chain->p = p;
    cl_result rc = CL_OK;
    for (int i = 0; i < p && rc == CL_OK; i++) {
        double small, large;
        if (p == 2 && i == 1) { /* the same pair the other way round */
            chain->hop[1] = chain->hop[0];
            break;
        }
        rc = hop_time(c, buf, i, PROBE_SMALL, &small);
        if (rc == CL_OK)
            rc = hop_time(c, buf, i, PROBE_LARGE, &large);
        if (rc != CL_OK)
            break;
        if (!(large > small)) {
            cl_set_error("hop %d -> %d: no bandwidth measured (%g s for %d B, %g s for %zu B)", i,
                         (i + 1) % p, small, PROBE_SMALL, large, PROBE_LARGE);
            rc = CL_ERR_IO;
            break;
        }
        double bw = (double)(PROBE_LARGE - PROBE_SMALL) / (large - small);
        chain->hop[i] =
            (lab05_link){.alpha_s = fmax(small - PROBE_SMALL / bw, 0), .bytes_per_s = bw};
    }
    cl_mem_free(c, buf);
    return rc;
}

/* --- one Broadcast: the student's or the library's, checked ----------------------------- */

typedef struct bcast {
    void *send, *recv;
    size_t count;
    cl_dtype t;
    int root;
    uint64_t seed;
} bcast;

static cl_result fill(cl_comm *c, cl_run *run, bcast *b)
{
    size_t es = cl_dtype_size(b->t);
    CL_CHECK(cl_fresh_seed(run, c, &b->seed));
    if (cl_comm_rank(c) == b->root)
        CL_CHECK(cl_fill(c, b->send, b->count, b->t, CL_MAX, b->seed, b->root, 0));
    else
        CL_CHECK(cl_poison(c, b->send, b->count * es, b->t));
    return cl_poison(c, b->recv, (b->count + GUARD) * es, b->t);
}

/* v: wrong elements, elements past the end written, root's input changed. */
static cl_result check(cl_comm *c, const bcast *b, int64_t v[3])
{
    size_t es = cl_dtype_size(b->t), n[3] = {0, 0, 0};
    CL_CHECK(cl_count_wrong(c, b->recv, b->count, b->t, CL_MAX, b->seed, b->root, b->root + 1, 0,
                            &n[0]));
    CL_CHECK(cl_count_unpoisoned(c, (char *)b->recv + b->count * es, GUARD, b->t, &n[1]));
    if (cl_comm_rank(c) == b->root)
        CL_CHECK(cl_count_wrong(c, b->send, b->count, b->t, CL_MAX, b->seed, b->root, b->root + 1,
                                0, &n[2]));
    for (int i = 0; i < 3; i++)
        v[i] = (int64_t)n[i];
    return cl_agree(c, CL_SUM, v, 3);
}

/* The library's chain at chunk_bytes (0: the library's Broadcast, whatever it is). */
static cl_result library_bcast(cl_run *run, cl_comm *c, bcast *b, size_t chunk_bytes,
                               double *seconds, int64_t *wrong)
{
    cl_coll_args a = {
        .sendbuf = b->send, .recvbuf = b->recv, .count = b->count, .dtype = b->t, .root = b->root};
    int64_t v[3];
    CL_CHECK(fill(c, run, b));
    CL_CHECK(cl_barrier(c));
    double t0 = cl_comm_time(c);
    if (chunk_bytes)
        CL_CHECK(cl_p2p_chain_broadcast(c, &a, chunk_bytes));
    else
        CL_CHECK(cl_library_coll(c, CL_COLL_BROADCAST, &a));
    *seconds = cl_comm_time(c) - t0;
    CL_CHECK(cl_agree_max(c, seconds, 1));
    CL_CHECK(check(c, b, v));
    *wrong += v[0] + v[1] + v[2];
    return CL_OK;
}

/* What the student's calls did, the same on every rank (the texts are this
 * rank's, or say that another rank failed). */
typedef struct verdict {
    cl_result status;
    char error[400], forbidden[48], pattern[200];
    int64_t bad[3]; /* wrong, overrun, input changed */
    size_t chunk;   /* this rank's choice */
} verdict;

static void note(char *text, size_t len, int64_t flag, const char *mine)
{
    if (flag && !text[0])
        snprintf(text, len, "%s", mine[0] ? mine : "on another rank");
}

static cl_result student_bcast(cl_run *run, cl_comm *c, bcast *b, const lab05_chain *chain,
                               double *seconds, verdict *out)
{
    tune_args t = {.a = {.sendbuf = b->send,
                         .recvbuf = b->recv,
                         .count = b->count,
                         .dtype = b->t,
                         .root = b->root},
                   .chain = *chain};
    cl_call_result res;
    char error[400] = "", why[200] = "";
    int64_t v[3] = {0, 0, 0}, flags[3];
    CL_CHECK(fill(c, run, b));
    CL_CHECK(cl_barrier(c));
    CL_CHECK(cl_student_run(c, "tuned_broadcast", &t, sizeof t, CL_ALLOW_COLLECTIVE, &res));
    *seconds = res.seconds;
    if (res.status != CL_OK)
        snprintf(error, sizeof error, "rank %d: %s", cl_comm_rank(c), res.error);
    int n;
    const cl_trace_event *ev = cl_student_trace(c, &n);
    int fits = res.status != CL_OK || chain_fits(c, &t.a, t.chunk_bytes, ev, n, why, sizeof why);
    flags[0] = res.status, flags[1] = res.forbidden[0] != 0, flags[2] = !fits;
    CL_CHECK(cl_agree(c, CL_MAX, flags, 3));
    CL_CHECK(cl_agree_max(c, seconds, 1));
    if (flags[0] == CL_OK)
        CL_CHECK(check(c, b, v));
    if (flags[0] != CL_OK && out->status == CL_OK)
        out->status = (cl_result)flags[0];
    note(out->error, sizeof out->error, flags[0], error);
    note(out->forbidden, sizeof out->forbidden, flags[1], res.forbidden);
    note(out->pattern, sizeof out->pattern, flags[2], why);
    for (int i = 0; i < 3; i++)
        out->bad[i] += v[i];
    out->chunk = t.chunk_bytes;
    return CL_OK;
}

/* --- tune ------------------------------------------------------------------------------ */

/* The best chunk of the library's chain over a grid of chunk counts: every
 * count 1, 2, 3, ... growing by about 2^(1/4), until the time has clearly
 * passed its minimum. */
static cl_result sweep_chunks(cl_run *run, cl_comm *c, bcast *b, double *best, size_t *best_chunk,
                              double *whole, int64_t *wrong)
{
    size_t es = cl_dtype_size(b->t), last = 0;
    *best = INFINITY;
    for (double k = 1; k <= (double)b->count && k <= LAB05_MAX_CHUNKS; k *= GRID_STEP) {
        size_t elems = (b->count + (size_t)k - 1) / (size_t)k;
        if (elems == last)
            continue;
        last = elems;
        double s;
        CL_CHECK(library_bcast(run, c, b, elems * es, &s, wrong));
        if (k == 1)
            *whole = s;
        if (s < *best)
            *best = s, *best_chunk = elems * es;
        if (s > 1.5 * *best && elems * 8 < *best_chunk / es)
            break;
    }
    return CL_OK;
}

static cl_result tune_size(cl_run *run, cl_comm *c, bcast *b, const lab05_chain *chain)
{
    const cl_opts *o = cl_run_opts(run);
    int sim = cl_comm_on_sim(c),
        n = sim ? 1 : (o->repeats < MAX_SAMPLES ? o->repeats : MAX_SAMPLES);
    double us[MAX_SAMPLES], bus[MAX_SAMPLES], bus_us[MAX_SAMPLES], base_bus[MAX_SAMPLES];
    double bytes = (double)(b->count * cl_dtype_size(b->t)), s, whole = 0;
    size_t best_chunk = 0;
    int64_t base_wrong = 0;
    verdict v = {.status = CL_OK};
    /* A checked warm-up off the simulator, then pairs: the baseline first. */
    if (!sim) {
        CL_CHECK(library_bcast(run, c, b, 0, &s, &base_wrong));
        CL_CHECK(student_bcast(run, c, b, chain, &s, &v));
    }
    for (int k = 0; k < n && v.status == CL_OK; k++) {
        if (sim)
            CL_CHECK(sweep_chunks(run, c, b, &bus_us[k], &best_chunk, &whole, &base_wrong));
        else
            CL_CHECK(library_bcast(run, c, b, 0, &bus_us[k], &base_wrong));
        CL_CHECK(student_bcast(run, c, b, chain, &us[k], &v));
    }
    if (v.status != CL_OK)
        n = 0;
    for (int k = 0; k < n; k++) {
        bus[k] = us[k] > 0 ? bytes / us[k] / 1e9 : 0;
        base_bus[k] = bus_us[k] > 0 ? bytes / bus_us[k] / 1e9 : 0;
        us[k] *= 1e6, bus_us[k] *= 1e6;
    }
    size_t es = cl_dtype_size(b->t), elems = v.chunk / es ? v.chunk / es : 1;
    cl_row *row = cl_row_begin(run, c);
    cl_col_str(row, "name", "broadcast");
    cl_col_int(row, "size", (long long)bytes);
    cl_col_int(row, "count", (long long)b->count);
    cl_col_str(row, "type", cl_dtype_name(b->t));
    cl_col_str(row, "redop", "none");
    cl_col_int(row, "root", b->root);
    cl_col_int(row, "chunk", (long long)v.chunk);
    cl_col_int(row, "nchunks", v.chunk ? (long long)((b->count + elems - 1) / elems) : 0);
    cl_col_nums(row, "time", us, (size_t)n, "%.2f");
    cl_col_nums(row, "busbw", bus, (size_t)n, "%.2f");
    if (sim) {
        cl_col_int(row, "base_chunk", (long long)best_chunk);
        cl_col_num(row, "unpipelined_time", whole * 1e6, "%.2f");
    }
    cl_col_nums(row, "base_time", bus_us, (size_t)n, "%.2f");
    cl_col_nums(row, "base_busbw", base_bus, (size_t)n, "%.2f");
    cl_col_int(row, "base_wrong", (long long)base_wrong);
    cl_col_str(row, "status", cl_result_str(v.status));
    cl_col_int(row, "#wrong", (long long)v.bad[0]);
    cl_col_int(row, "overrun", (long long)v.bad[1]);
    cl_col_int(row, "input_changed", (long long)v.bad[2]);
    cl_col_str(row, "forbidden", v.forbidden[0] ? v.forbidden : "-");
    cl_col_str(row, "pattern", v.pattern[0] ? v.pattern : "ok");
    if (v.status != CL_OK)
        cl_col_str(row, "error", v.error);
    cl_row_end(row);
    return CL_OK;
}

static cl_result lab05_tune(cl_run *run, cl_comm *c)
{
    const cl_opts *o = cl_run_opts(run);
    int p = cl_comm_size(c);
    lab05_chain chain;
    CL_CHECK(measure_chain(c, &chain));
    cl_report_str(run, "units", "size and chunk in bytes, time in us, busbw in GB/s");
    cl_report_str(run, "baseline",
                  cl_comm_on_sim(c) ? "the library's chain at the best chunk of a sweep"
                                    : "the library's Broadcast");
    for (int i = 0; i < p; i++) {
        char key[32], value[64];
        snprintf(key, sizeof key, "hop%d", i);
        snprintf(value, sizeof value, "%d -> %d: %.3f us, %.2f GB/s", i, (i + 1) % p,
                 chain.hop[i].alpha_s * 1e6, chain.hop[i].bytes_per_s / 1e9);
        cl_report_str(run, key, value);
    }
    size_t es = cl_dtype_size(o->dtype);
    for (size_t bytes = o->min_bytes; bytes <= o->max_bytes; bytes *= (size_t)o->factor) {
        uint64_t seed;
        CL_CHECK(cl_fresh_seed(run, c, &seed));
        bcast b = {.count = bytes / es ? bytes / es : 1, .t = o->dtype, .root = (int)(seed % p)};
        CL_CHECK(cl_mem_alloc(c, b.count * es, &b.send));
        cl_result rc = cl_mem_alloc(c, (b.count + GUARD) * es, &b.recv);
        if (rc == CL_OK)
            rc = tune_size(run, c, &b, &chain);
        cl_mem_free(c, b.send);
        if (b.recv)
            cl_mem_free(c, b.recv);
        CL_CHECK(rc);
        if (bytes > o->max_bytes / (size_t)o->factor)
            break;
    }
    return CL_OK;
}

/* --- the lab's tables ------------------------------------------------------------------- */

const cl_coll_entry lab05_collectives[] = {
    {.name = "reducescatter", .kind = CL_COLL_REDUCESCATTER},
    {.name = "allgather", .kind = CL_COLL_ALLGATHER},
    {.name = "allreduce", .kind = CL_COLL_ALLREDUCE, .baseline = 1},
    {.name = "broadcast", .kind = CL_COLL_BROADCAST, .baseline = 1, .pattern = lab05_suite_pattern},
    {0}};

const cl_mode lab05_modes[] = {
    {.name = "tune",
     .help = "your chunk size at each size from -b to -e, against the best",
     .ranks = lab05_tune,
     .min_ranks = 2,
     .backends = "cpu,sim"},
    {0}};
