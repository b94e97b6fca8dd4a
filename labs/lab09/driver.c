/* driver.c: lab 09's plug-in: the student's rings in shared memory, stressed, raced, timed.
 *
 *   lab09 stress    [--nslots 4] [--chunk 4104] [--messages 3000]          (2 ranks)
 *   lab09 race      --student build/labs/lab09/lab09-student-tsan          (1 rank)
 *   lab09 allreduce                                                       (1-64 ranks)
 *   lab09 bench     [--bytes 64M] [--repeats R] [--nslots K --chunk B]     (2 ranks)
 *
 * The rings live in the region every rank's student program shares
 * (cl_shared_region): ring k goes from rank k to rank k+1. The harness lays
 * them out and starts their counters just below 2^64, so that they wrap. The
 * payloads are fresh bytes in the sender's private buffer, which the
 * receiving program cannot see, and the harness checks every byte that
 * arrives. race runs the same exchange between two ends of one program built
 * with ThreadSanitizer (tsan.c), as fibers that take turns (fibers.c); a
 * report ends it with status 66. bench times rank 0 -> rank 1 through the
 * student's ring, in the geometry the student chose (lab09_geometry), against
 * MPI's send/receive and memcpy. The argument blocks are in exchange.h; the
 * student program's side of the exchanges in exchange.c.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exchange.h"
#include "harness/harness.h"

#ifdef CL_STUDENT_SIDE

static cl_result stress(cl_comm *c, void *args)
{
    (void)c;
    stress_args *a = args;
    lab09_ring tx, rx;
    return lab09_exchange(lab09_ring_of(&a->L, a->tx, &tx), lab09_ring_of(&a->L, a->rx, &rx),
                          a->sbuf, a->rbuf, a->n, a->ssize, a->rsize, a->pause_us);
}

static cl_result race(cl_comm *c, void *args)
{
    (void)c;
    return lab09_race_ends(args);
}

static cl_result transfer(cl_comm *c, void *args)
{
    (void)c;
    transfer_args *a = args;
    lab09_ring r;
    lab09_ring_of(&a->L, 0, &r);
    return a->send ? lab09_sendrecv(&r, a->buf, a->bytes, NULL, NULL, 0)
                   : lab09_sendrecv(NULL, NULL, 0, &r, a->buf, a->bytes);
}

static cl_result geometry(cl_comm *c, void *args)
{
    (void)c;
    geometry_args *a = args;
    lab09_geometry(a->budget, &a->nslots, &a->chunk);
    return CL_OK;
}

static cl_result allreduce(cl_comm *c, void *args)
{
    allreduce_args *a = args;
    int p = cl_comm_size(c), r = cl_comm_rank(c);
    lab09_ring right, left;
    lab09_comm lc = {.rank = r,
                     .size = p,
                     .to_right = lab09_ring_of(&a->L, r, &right),
                     .from_left = lab09_ring_of(&a->L, (r - 1 + p) % p, &left),
                     .scratch = a->scratch,
                     .scratch_bytes = a->scratch_bytes};
    return lab09_allreduce(&lc, a->buf, a->count, a->t, a->op);
}

CL_STUDENT_ENTRIES({"stress", stress}, {"race", race}, {"transfer", transfer},
                   {"geometry", geometry}, {"allreduce", allreduce});

#else

/* --- payloads ------------------------------------------------------------------------------ */

/* Position i of owner's stream of seed is byte i % 8 of one hash per 8
 * positions: cl_fill_bytes() hashes every byte, too slow for a benchmark that
 * refills its buffers before every transfer. Host memory: "cpu" only. */
static uint64_t word_at(uint64_t seed, int owner, size_t w)
{
    return cl_data_hash(seed ^ ((uint64_t)owner << 56) ^ (w * 0x9e3779b97f4a7c15ull));
}

static void fill(unsigned char *buf, size_t n, uint64_t seed, int owner, size_t first)
{
    for (size_t i = 0; i < n;) {
        size_t pos = first + i;
        uint64_t v = word_at(seed, owner, pos / 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (pos % 8 == 0 && n - i >= 8) {
            memcpy(buf + i, &v, 8);
            i += 8;
            continue;
        }
#endif
        for (size_t k = pos % 8; k < 8 && i < n; k++)
            buf[i++] = (unsigned char)(v >> (8 * k));
    }
}

static size_t count_wrong(const unsigned char *buf, size_t n, uint64_t seed, int owner,
                          size_t first)
{
    size_t wrong = 0;
    for (size_t i = 0; i < n;) {
        size_t pos = first + i;
        uint64_t v = word_at(seed, owner, pos / 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (pos % 8 == 0 && n - i >= 8 && memcmp(buf + i, &v, 8) == 0) {
            i += 8;
            continue;
        }
#endif
        for (size_t k = pos % 8; k < 8 && i < n; k++)
            wrong += buf[i++] != (unsigned char)(v >> (8 * k));
    }
    return wrong;
}

/* --- the rings ---------------------------------------------------------------------------- */

static layout rings; /* this process's, once laid out */

static cl_result rings_check(uint64_t nslots, size_t chunk, size_t budget)
{
    if (nslots < 1 || (nslots & (nslots - 1)) || nslots > 4096 || chunk < 1 || chunk > budget ||
        lab09_ring_bytes(nslots, chunk) > budget) {
        cl_set_error("a ring of %llu slots of %zu B: the slots must be a power of two up to "
                     "4096, and the ring (%zu B) at most %zu B",
                     (unsigned long long)nslots, chunk,
                     nslots <= 4096 && chunk <= budget ? lab09_ring_bytes(nslots, chunk) : 0,
                     budget);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

/* Every ring empty, its counters at start. */
static void rings_reset(int nrings, uint64_t start)
{
    for (int k = 0; k < nrings; k++) {
        lab09_ctrl *ctl = (lab09_ctrl *)(rings.base + (size_t)k * rings.ring_bytes);
        atomic_store_explicit(&ctl->head, start, memory_order_relaxed);
        atomic_store_explicit(&ctl->tail, start, memory_order_relaxed);
    }
    atomic_thread_fence(memory_order_seq_cst);
}

/* nrings rings of at most `budget` bytes in the region the ranks share, in
 * the shape nslots x chunk, their counters at start; every rank calls it. */
static cl_result rings_open(cl_comm *c, int nrings, size_t budget, uint64_t nslots, size_t chunk,
                            uint64_t start)
{
    void *base;
    CL_CHECK(rings_check(nslots, chunk, budget));
    CL_CHECK(cl_shared_region(c, budget * (size_t)nrings, &base));
    rings = (layout){.base = base, .nslots = nslots, .chunk = chunk, .ring_bytes = budget};
    if (cl_comm_rank(c) == 0)
        rings_reset(nrings, start);
    return cl_barrier(c);
}

static uint64_t opt_u64(cl_run *run, const char *name, uint64_t fallback)
{
    const char *v = cl_opt(run, name);
    return v && *v ? strtoull(v, NULL, 0) : fallback;
}

/* --- messages ----------------------------------------------------------------------------- */

/* The size of a message: 0, tiny, chunk - 1, chunk, chunk + 1, whole chunks
 * and anything up to 6 chunks, from the hash h. */
static uint32_t msg_size(uint64_t h, size_t chunk)
{
    uint64_t x = h >> 8;
    switch (h % 8) {
    case 0: return x % 3 == 0 ? 0 : (uint32_t)(1 + x % 15);
    case 1: return (uint32_t)(chunk - 1);
    case 2: return (uint32_t)chunk;
    case 3: return (uint32_t)(chunk + 1);
    case 4: return (uint32_t)(chunk * (1 + x % 5));
    default: return (uint32_t)(x % (6 * chunk + 1));
    }
}

static size_t span(const uint32_t *size, int n)
{
    size_t s = 0;
    for (int k = 0; k < n; k++)
        s += size[k] + GAP;
    return s;
}

/* What arrived, message by message. */
typedef struct tally {
    int64_t messages, torn, misplaced, overrun, bytes;
    char first[200];
} tally;

/* Check the messages in buf: message k after message k-1 and GAP guard bytes
 * (from guard_seed, which nothing may overwrite). */
static void check_messages(const unsigned char *buf, const uint32_t *size, int n, uint64_t seed,
                           int owner, uint64_t guard_seed, const char *who, tally *t)
{
    size_t off = 0;
    for (int k = 0; k < n; k++) {
        size_t wrong = count_wrong(buf + off, size[k], seed, owner, off);
        int misplaced = 0; /* another message, whole? */
        size_t other = 0;
        for (int j = 0; wrong && j < n && !misplaced; j++) {
            misplaced = j != k && size[j] == size[k] &&
                        count_wrong(buf + off, size[k], seed, owner, other) == 0;
            other += size[j] + GAP;
        }
        size_t over = count_wrong(buf + off + size[k], GAP, guard_seed, owner, off + size[k]);
        t->messages++;
        t->torn += wrong && !misplaced;
        t->misplaced += misplaced;
        t->overrun += over != 0;
        t->bytes += size[k];
        if ((wrong || over) && !t->first[0])
            snprintf(t->first, sizeof t->first, "%s message %d (%u B): %zu wrong bytes%s%s", who, k,
                     size[k], wrong, misplaced ? " (it holds another message)" : "",
                     over ? ", bytes written past its end" : "");
        off += size[k] + GAP;
    }
}

static void tally_columns(cl_row *row, const tally *t, const cl_call_result *res)
{
    cl_col_int(row, "messages", t->messages);
    cl_col_int(row, "torn", t->torn);
    cl_col_int(row, "lost_or_reordered", t->misplaced);
    cl_col_int(row, "overrun", t->overrun);
    cl_col_int(row, "bytes", t->bytes);
    cl_col_call(row, res);
    if (t->first[0])
        cl_col_str(row, "first_bad", t->first);
}

static void geometry_header(cl_run *run, int64_t expected)
{
    cl_report_int(run, "nslots", (long long)rings.nslots);
    cl_report_int(run, "chunk", (long long)rings.chunk);
    cl_report_int(run, "expected_messages", (long long)expected);
}

/* --- stress: both ranks send and receive at once, messages of every size --------------------- */

static cl_result stress_mode(cl_run *run, cl_comm *c)
{
    int rank = cl_comm_rank(c), n = (int)opt_u64(run, "messages", 3000);
    uint64_t nslots = opt_u64(run, "nslots", 4), chunk = opt_u64(run, "chunk", 1000);
    if (cl_comm_size(c) != 2 || n < 1 || n > MAX_MSGS) {
        cl_set_error("stress runs on 2 ranks with 1 to %d messages", MAX_MSGS);
        return CL_ERR_INVALID;
    }
    CL_CHECK(rings_open(c, 2, lab09_ring_bytes(nslots ? nslots : 1, chunk ? chunk : 1), nslots,
                        chunk, UINT64_MAX - 37));
    stress_args *a = calloc(1, sizeof *a);
    uint64_t seed, guard, sizes;
    if (!a)
        return CL_ERR_NOMEM;
    CL_CHECK(cl_fresh_seed(run, c, &seed));
    CL_CHECK(cl_fresh_seed(run, c, &guard));
    CL_CHECK(cl_fresh_seed(run, c, &sizes));
    *a = (stress_args){.L = rings, .tx = rank, .rx = 1 - rank, .n = n};
    for (int k = 0; k < n; k++) {
        uint64_t mine = cl_data_hash(sizes + 2 * (uint64_t)k + (uint64_t)rank);
        uint64_t theirs = cl_data_hash(sizes + 2 * (uint64_t)k + 1 - (uint64_t)rank);
        uint64_t wait = cl_data_hash(mine ^ 0x5a5a5a5aull);
        a->ssize[k] = msg_size(mine, rings.chunk);
        a->rsize[k] = msg_size(theirs, rings.chunk);
        a->pause_us[k] = wait % 4 == 0 ? (uint16_t)((wait >> 8) % 40) : 0;
    }
    size_t sbytes = span(a->ssize, n), rbytes = span(a->rsize, n);
    CL_CHECK(cl_mem_alloc(c, sbytes, (void **)&a->sbuf));
    CL_CHECK(cl_mem_alloc(c, rbytes, (void **)&a->rbuf));
    fill(a->sbuf, sbytes, seed, rank, 0);
    fill(a->rbuf, rbytes, guard, 1 - rank, 0);
    cl_call_result res;
    CL_CHECK(cl_barrier(c));
    CL_CHECK(cl_student_run(c, "stress", a, sizeof *a, 0, &res));
    tally t = {0};
    char who[32];
    snprintf(who, sizeof who, "rank %d's", 1 - rank);
    if (res.status == CL_OK)
        check_messages(a->rbuf, a->rsize, n, seed, 1 - rank, guard, who, &t);
    double v[5] = {(double)t.messages, (double)t.torn, (double)t.misplaced, (double)t.overrun,
                   (double)t.bytes};
    int64_t failed = res.status != CL_OK;
    CL_CHECK(cl_agree(c, CL_MAX, &failed, 1));
    CL_CHECK(cl_agree_sum(c, v, 5));
    /* The first bad message rank 0 found, else rank 1's. */
    if (rank == 1) {
        CL_CHECK(cl_send(c, t.first, sizeof t.first, 0));
    } else {
        char theirs[sizeof t.first];
        CL_CHECK(cl_recv(c, theirs, sizeof theirs, 1));
        if (!t.first[0])
            memcpy(t.first, theirs, sizeof theirs);
    }
    tally all = {(int64_t)v[0], (int64_t)v[1], (int64_t)v[2], (int64_t)v[3], (int64_t)v[4], ""};
    memcpy(all.first, t.first, sizeof t.first);
    if (failed && res.status == CL_OK) {
        res.status = CL_ERR_INVALID;
        snprintf(res.error, sizeof res.error, "the exchange failed on the other rank");
    }
    geometry_header(run, 2LL * n);
    cl_row *row = cl_row_begin(run, c);
    tally_columns(row, &all, &res);
    cl_row_end(row);
    CL_CHECK(cl_mem_free(c, a->sbuf));
    CL_CHECK(cl_mem_free(c, a->rbuf));
    free(a);
    return CL_OK;
}

/* --- race: the same exchange between two ends of one program, under ThreadSanitizer
 * ----------------------- */

static cl_result race_mode(cl_run *run, cl_comm *c)
{
    int n = (int)opt_u64(run, "messages", 3000);
    uint64_t nslots = opt_u64(run, "nslots", 4), chunk = opt_u64(run, "chunk", 200);
    if (cl_comm_size(c) != 1 || n < 1 || n > MAX_MSGS) {
        cl_set_error("race runs on 1 rank (two ends) with 1 to %d messages", MAX_MSGS);
        return CL_ERR_INVALID;
    }
    /* One program: the rings are in its arena. */
    size_t one = lab09_ring_bytes(nslots ? nslots : 1, chunk ? chunk : 1);
    CL_CHECK(rings_check(nslots, chunk, one));
    rings = (layout){.nslots = nslots, .chunk = chunk, .ring_bytes = one};
    CL_CHECK(cl_mem_alloc(c, 2 * one, (void **)&rings.base));
    rings_reset(2, UINT64_MAX - 5);
    race_args *a = calloc(1, sizeof *a);
    uint64_t seed, guard, sizes;
    if (!a)
        return CL_ERR_NOMEM;
    CL_CHECK(cl_fresh_seed(run, c, &seed));
    CL_CHECK(cl_fresh_seed(run, c, &guard));
    CL_CHECK(cl_fresh_seed(run, c, &sizes));
    *a = (race_args){.L = rings, .n = n};
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < n; k++)
            a->size[i][k] = msg_size(cl_data_hash(sizes + 2 * (uint64_t)k + (uint64_t)i), chunk);
    for (int i = 0; i < 2; i++) {
        size_t out = span(a->size[i], n), in = span(a->size[1 - i], n);
        CL_CHECK(cl_mem_alloc(c, out, (void **)&a->sbuf[i]));
        CL_CHECK(cl_mem_alloc(c, in, (void **)&a->rbuf[i]));
        fill(a->sbuf[i], out, seed, i, 0);
        fill(a->rbuf[i], in, guard, 1 - i, 0);
    }
    cl_call_result res;
    cl_result rc = cl_student_run(c, "race", a, sizeof *a, 0, &res);
    /* ThreadSanitizer ends the program with status 66 at its first report. */
    int reported = rc == CL_ERR_CRASHED && strstr(res.error, "exited with status 66");
    if (rc != CL_OK && !reported)
        return rc;
    tally t = {0};
    for (int i = 0; i < 2 && res.status == CL_OK; i++) {
        char who[32];
        snprintf(who, sizeof who, "end %d's", 1 - i);
        check_messages(a->rbuf[i], a->size[1 - i], n, seed, 1 - i, guard, who, &t);
    }
    geometry_header(run, 2LL * n);
    cl_row *row = cl_row_begin(run, c);
    cl_col_str(row, "race", reported ? "reported" : "none");
    tally_columns(row, &t, &res);
    cl_row_end(row);
    if (!reported) { /* else the program, and the arena's owner with it, is gone */
        for (int i = 0; i < 2; i++) {
            CL_CHECK(cl_mem_free(c, a->sbuf[i]));
            CL_CHECK(cl_mem_free(c, a->rbuf[i]));
        }
        CL_CHECK(cl_mem_free(c, rings.base));
    }
    free(a);
    return CL_OK;
}

/* --- allreduce: the student's AllReduce on the rings, every type and reduction ---------------- */

static cl_result allreduce_mode(cl_run *run, cl_comm *c)
{
    static const size_t counts[] = {0, 1, 3, 7, 1000, 12345, 100003};
    int p = cl_comm_size(c), r = cl_comm_rank(c);
    uint64_t nslots = opt_u64(run, "nslots", 4), chunk = opt_u64(run, "chunk", 4104);
    if (p > 64) {
        cl_set_error("at most 64 ranks");
        return CL_ERR_INVALID;
    }
    CL_CHECK(rings_open(c, p, lab09_ring_bytes(nslots ? nslots : 1, chunk ? chunk : 1), nslots,
                        chunk, UINT64_MAX - 11));
    size_t maxc = counts[sizeof counts / sizeof counts[0] - 1];
    allreduce_args a = {.L = rings, .scratch_bytes = (maxc / (size_t)p + 1) * 8};
    CL_CHECK(cl_mem_alloc(c, maxc * 8, &a.buf));
    CL_CHECK(cl_mem_alloc(c, a.scratch_bytes, &a.scratch));
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        for (int ti = 0; ti < CL_DTYPE_COUNT; ti++)
            for (int oi = 0; oi < CL_OP_COUNT; oi++) {
                if (counts[i] < 1000 && oi != (int)(i % CL_OP_COUNT))
                    continue; /* the short vectors once each, the long ones every way */
                uint64_t seed;
                size_t wrong = 0;
                cl_call_result res;
                a.count = counts[i], a.t = (cl_dtype)ti, a.op = (cl_op)oi;
                CL_CHECK(cl_fresh_seed(run, c, &seed));
                CL_CHECK(cl_fill(c, a.buf, a.count, a.t, a.op, seed, r, 0));
                CL_CHECK(cl_barrier(c));
                CL_CHECK(cl_student_run(c, "allreduce", &a, sizeof a, CL_ALLOW_LOCAL, &res));
                if (res.status == CL_OK)
                    CL_CHECK(cl_count_wrong(c, a.buf, a.count, a.t, a.op, seed, 0, p, 0, &wrong));
                int64_t v[2] = {(int64_t)wrong, res.status != CL_OK};
                CL_CHECK(cl_agree(c, CL_SUM, v, 2));
                if (v[1] && res.status == CL_OK) {
                    res.status = CL_ERR_INVALID;
                    snprintf(res.error, sizeof res.error, "failed on another rank");
                }
                cl_row *row = cl_row_begin(run, c);
                cl_col_int(row, "count", (long long)a.count);
                cl_col_str(row, "type", cl_dtype_name(a.t));
                cl_col_str(row, "redop", cl_op_name(a.op));
                cl_col_int(row, "#wrong", v[0]);
                cl_col_call(row, &res);
                cl_row_end(row);
            }
    CL_CHECK(cl_mem_free(c, a.buf));
    return cl_mem_free(c, a.scratch);
}

/* --- bench: rank 0 to rank 1 through the rings, against MPI and memcpy ------------------------ */

#define MAX_REPEATS 64
#define BUDGET      ((size_t)4 << 20) /* shared memory per ring: NCCL_BUFFSIZE's default */

/* The geometry: --nslots and --chunk, or the student's lab09_geometry(). */
static cl_result bench_geometry(cl_run *run, cl_comm *c, uint64_t *nslots, size_t *chunk)
{
    geometry_args g = {
        .budget = BUDGET, .nslots = opt_u64(run, "nslots", 0), .chunk = opt_u64(run, "chunk", 0)};
    int64_t v[2] = {0, 0};
    if (!g.nslots || !g.chunk) {
        cl_call_result res;
        CL_CHECK(cl_student_run(c, "geometry", &g, sizeof g, 0, &res));
        if (res.status != CL_OK) {
            cl_set_error("lab09_geometry: %s", res.error);
            return res.status;
        }
    }
    if (cl_comm_rank(c) == 0)
        v[0] = (int64_t)g.nslots, v[1] = (int64_t)g.chunk;
    CL_CHECK(cl_agree(c, CL_MAX, v, 2)); /* rank 0's answer */
    *nslots = (uint64_t)v[0], *chunk = (size_t)v[1];
    if (rings_check(*nslots, *chunk, BUDGET) != CL_OK) {
        char why[256];
        snprintf(why, sizeof why, "%s", cl_last_error());
        cl_set_error("lab09_geometry chose %s", why);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

/* One transfer of fresh bytes, timed by `how`: 0 the student's ring, 1 MPI's
 * send and receive, 2 memcpy on rank 0. *t: its time (max over the ranks);
 * *bad: wrong bytes at the receiver. */
static cl_result once(cl_run *run, cl_comm *c, int how, unsigned char *src, unsigned char *dst,
                      size_t n, double *t, int64_t *bad)
{
    int rank = cl_comm_rank(c);
    uint64_t seed;
    CL_CHECK(cl_fresh_seed(run, c, &seed));
    if (rank == 0)
        fill(src, n, seed, 0, 0);
    else
        fill(dst, n, seed, 1, 0); /* bytes that are not rank 0's */
    CL_CHECK(cl_barrier(c));
    *t = 0;
    if (how == 0) {
        transfer_args a = {.L = rings, .send = rank == 0, .buf = rank == 0 ? src : dst, .bytes = n};
        cl_call_result res;
        CL_CHECK(cl_student_run(c, "transfer", &a, sizeof a, 0, &res));
        if (res.status != CL_OK) {
            cl_set_error("your transfer on rank %d: %s", rank, res.error);
            return res.status;
        }
        *t = res.seconds;
    } else if (how == 1) {
        double t0 = cl_comm_time(c);
        CL_CHECK(rank == 0 ? cl_send(c, src, n, 1) : cl_recv(c, dst, n, 0));
        *t = cl_comm_time(c) - t0;
    } else if (rank == 0) {
        double t0 = cl_comm_time(c);
        memcpy(dst, src, n);
        __asm__ volatile("" ::"r"(dst) : "memory");
        *t = cl_comm_time(c) - t0;
    }
    if ((how < 2 && rank == 1) || (how == 2 && rank == 0))
        *bad += (int64_t)count_wrong(dst, n, seed, 0, 0);
    return cl_agree_max(c, t, 1);
}

static cl_result bench_mode(cl_run *run, cl_comm *c)
{
    const cl_opts *o = cl_run_opts(run);
    size_t n = o->bytes, chunk = 0;
    uint64_t nslots = 0;
    int reps = o->repeats > MAX_REPEATS ? MAX_REPEATS : o->repeats;
    if (cl_comm_size(c) != 2 || n < 1) {
        cl_set_error("bench runs on 2 ranks with --bytes of 1 or more");
        return CL_ERR_INVALID;
    }
    CL_CHECK(bench_geometry(run, c, &nslots, &chunk));
    CL_CHECK(rings_open(c, 1, BUDGET, nslots, chunk, 0));
    unsigned char *src, *dst;
    CL_CHECK(cl_mem_alloc(c, n, (void **)&src));
    CL_CHECK(cl_mem_alloc(c, n, (void **)&dst));
    /* A sample of each method is the fastest of `iters` transfers (another
     * process can only slow one down), the three methods taking turns, so that
     * the samples of one round pair up: at least 4, and about 5 ms of each at 10 GB/s. */
    int iters = (int)(50e6 / (double)n);
    iters = iters < 4 ? 4 : iters > 1000 ? 1000 : iters;
    double gbps[3][MAX_REPEATS];
    int64_t bad = 0;
    for (int k = -1; k < reps; k++) { /* k = -1: a warm-up, checked, not kept */
        double best[3] = {1e300, 1e300, 1e300}, t;
        for (int i = 0; i < iters; i++)
            for (int j = 0; j < 3; j++) {
                int how = (j + i + 3) % 3;
                CL_CHECK(once(run, c, how, src, dst, n, &t, &bad));
                if (t < best[how])
                    best[how] = t;
            }
        for (int how = 0; k >= 0 && how < 3; how++)
            gbps[how][k] = (double)n / best[how] / 1e9;
    }
    CL_CHECK(cl_agree(c, CL_SUM, &bad, 1));
    cl_report_str(run, "units", "bytes, bandwidths in GB/s");
    cl_row *row = cl_row_begin(run, c);
    cl_col_int(row, "bytes", (long long)n);
    cl_col_int(row, "iters", iters);
    cl_col_int(row, "nslots", (long long)nslots);
    cl_col_int(row, "chunk", (long long)chunk);
    cl_col_nums(row, "ring_gbps", gbps[0], (size_t)reps, "%.2f");
    cl_col_nums(row, "mpi_gbps", gbps[1], (size_t)reps, "%.2f");
    cl_col_nums(row, "memcpy_gbps", gbps[2], (size_t)reps, "%.2f");
    cl_col_int(row, "corrupt_bytes", bad);
    cl_row_end(row);
    CL_CHECK(cl_mem_free(c, src));
    return cl_mem_free(c, dst);
}

const cl_lab cl_lab_def = {
    .name = "lab09",
    .title = "共享内存通信: a lock-free SPSC chunked ring and an AllReduce on it",
    .modes =
        (const cl_mode[]){
            {.name = "stress",
             .help = "2 ranks send each other messages of every size at once",
             .ranks = stress_mode,
             .min_ranks = 2,
             .backends = "cpu"},
            {.name = "race",
             .help = "the same between two ends of one program (the ThreadSanitizer build)",
             .ranks = race_mode,
             .backends = "cpu"},
            {.name = "allreduce",
             .help = "your AllReduce on the rings: 7 counts, 4 types, 4 ops",
             .ranks = allreduce_mode,
             .backends = "cpu"},
            {.name = "bench",
             .help = "rank 0 to rank 1 at --bytes: your ring, MPI, memcpy",
             .ranks = bench_mode,
             .min_ranks = 2,
             .backends = "cpu"},
            {0}},
    .options =
        (const cl_option[]){
            {.name = "nslots", .help = "slots per ring (stress, race, allreduce: 4; bench: yours)"},
            {.name = "chunk",
             .help = "bytes per slot (stress 1000, race 200, allreduce 4104; "
                     "bench: yours)"},
            {.name = "messages", .help = "stress and race: messages each way (3000)"},
            {0}},
};

#endif
