/* harness_exchange.c: lab 09's stress and race modes: messages of every size both ways
 * through the student's rings, between two processes or between the two ends of one
 * ThreadSanitizer program, each message checked where it arrived.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab09_harness.h"

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

cl_result stress_mode(cl_run *run, cl_comm *c)
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

cl_result race_mode(cl_run *run, cl_comm *c)
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
