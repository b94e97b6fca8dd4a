/* harness_ops.c: lab 27's operations (lab_op), performed by the harness for the student's
 * calls and for the reference alike: the collective under test, the fills, the checks and
 * the elements the harness corrupts to test #wrong. */
#include <stdint.h>
#include <string.h>

#include "buffers.h"
#include "data.h"
#include "lab27_harness.h"
#include "lab27_wire.h"

#define MAX_RANKS 64

/* What the harness keeps per rank for the lab's operations. */
typedef struct rank_state {
    void *stage, *scratch; /* the in-place copy of the input; the library's work space */
    size_t stage_bytes, scratch_bytes;
    uint64_t fills; /* fills so far: the latest one's seed is seed_of(fills) */
    uint64_t colls; /* collective calls so far */
} rank_state;

static rank_state st[MAX_RANKS];
static uint64_t run_seed, corrupt_seed;

static uint64_t mix(uint64_t a, uint64_t b) { return cl_data_hash(a * 0x9E3779B97F4A7C15ull ^ b); }

static rank_state *state_of(cl_comm *c)
{
    int r = cl_comm_rank(c);
    if (r < 0 || r >= MAX_RANKS) {
        cl_set_error("lab 27 runs on at most %d ranks", MAX_RANKS);
        return NULL;
    }
    return &st[r];
}

/* Grow a per-rank buffer of the harness's to at least bytes. */
static cl_result reserve(cl_comm *c, void **buf, size_t *have, size_t bytes)
{
    if (*have >= bytes)
        return CL_OK;
    if (*buf)
        CL_CHECK(cl_mem_free(c, *buf));
    *buf = NULL;
    *have = 0;
    CL_CHECK(cl_mem_alloc(c, bytes, buf));
    *have = bytes;
    return CL_OK;
}

/* The rank's own buffer holds [p, p + bytes)? (the reason names the operation) */
static cl_result owned(cl_comm *c, const void *p, size_t bytes, const char *what)
{
    return cl_buffers_find(p, bytes, cl_comm_rank(c), what) ? CL_OK : CL_ERR_INVALID;
}

static size_t block_of(cl_coll_kind kind, size_t count, int p)
{
    return kind == CL_COLL_ALLGATHER ? count / (size_t)p : count;
}

/* The elements the harness corrupts after every call of (kind, count, in place): none in
 * about two rows of three; else k elements of one rank's output, the same on every call.
 * Drawn from a seed the student's program never sees. */

lab27_corruption lab27_corruption_of(cl_coll_kind kind, size_t count, int in_place, int p)
{
    lab27_corruption x = {0, 0, 0};
    uint64_t h = mix(mix(corrupt_seed, (uint64_t)kind * 2 + (uint64_t)in_place), count);
    if (h % 3 != 0 || count == 0)
        return x;
    x.k = 1 + (int)((h >> 8) % 5);
    if ((size_t)x.k > count)
        x.k = (int)count;
    x.victim = (int)((h >> 16) % (uint64_t)p);
    x.off = (size_t)((h >> 24) % (count - (size_t)x.k + 1));
    return x;
}

/* The collective under test on the rank's buffers (both the student's calls and the
 * reference's go through here). */
cl_result lab27_coll_op(cl_comm *c, cl_coll_kind kind, const void *send, void *recv, size_t count)
{
    rank_state *s = state_of(c);
    if (!s)
        return CL_ERR_INVALID;
    int p = cl_comm_size(c), r = cl_comm_rank(c);
    if ((kind != CL_COLL_ALLREDUCE && kind != CL_COLL_ALLGATHER) || count == 0 ||
        (kind == CL_COLL_ALLGATHER && count % (size_t)p != 0)) {
        cl_set_error("lab27_coll: kind %d with count %zu (AllGather: a multiple of %d ranks)", kind,
                     count, p);
        return CL_ERR_INVALID;
    }
    size_t block = block_of(kind, count, p), es = sizeof(float);
    CL_CHECK(owned(c, recv, count * es, "lab27_coll's recvbuf"));
    CL_CHECK(owned(c, send, block * es, "lab27_coll's sendbuf"));
    const char *in_place_at =
        (const char *)recv + (kind == CL_COLL_ALLGATHER ? (size_t)r * block * es : 0);
    int in_place = (const char *)send == in_place_at;
    if (!in_place && (const char *)send < (const char *)recv + count * es &&
        (const char *)send + block * es > (const char *)recv) {
        cl_set_error("lab27_coll: sendbuf overlaps recvbuf without being the in-place position");
        return CL_ERR_INVALID;
    }
    if (in_place) { /* the library wants distinct buffers: the input goes through a copy */
        CL_CHECK(reserve(c, &s->stage, &s->stage_bytes, block * es));
        CL_CHECK(cl_copy_local(c, s->stage, send, block * es));
        send = s->stage;
    }
    size_t need = 2 * (count / (size_t)p + 1) * es;
    CL_CHECK(reserve(c, &s->scratch, &s->scratch_bytes, need > 4096 ? need : 4096));
    cl_coll_args a = {.sendbuf = send,
                      .recvbuf = recv,
                      .count = count,
                      .dtype = CL_FLOAT32,
                      .op = CL_SUM,
                      .root = 0,
                      .scratch = s->scratch,
                      .scratch_bytes = s->scratch_bytes};
    s->colls++;
    CL_CHECK(cl_library_coll(c, kind, &a));
    lab27_corruption x = lab27_corruption_of(kind, count, in_place, p);
    if (x.k && x.victim == r)
        CL_CHECK(cl_poison(c, (char *)recv + x.off * es, (size_t)x.k * es, CL_FLOAT32));
    return CL_OK;
}

cl_result lab27_fill_op(cl_comm *c, void *buf, size_t count, size_t first)
{
    rank_state *s = state_of(c);
    if (!s)
        return CL_ERR_INVALID;
    CL_CHECK(owned(c, buf, count * sizeof(float), "lab27_fill"));
    s->fills++;
    return cl_fill(c, buf, count, CL_FLOAT32, CL_SUM, mix(run_seed, s->fills), cl_comm_rank(c),
                   first);
}

cl_result lab27_check_op(cl_comm *c, const void *buf, size_t count, int lo, int hi, size_t first,
                         long long *wrong)
{
    rank_state *s = state_of(c);
    if (!s)
        return CL_ERR_INVALID;
    if (lo < 0 || hi > cl_comm_size(c) || lo >= hi) {
        cl_set_error("lab27_check: ranks %d..%d of %d", lo, hi - 1, cl_comm_size(c));
        return CL_ERR_INVALID;
    }
    if (!s->fills) {
        cl_set_error("lab27_check before any lab27_fill");
        return CL_ERR_INVALID;
    }
    CL_CHECK(owned(c, buf, count * sizeof(float), "lab27_check"));
    size_t w = 0;
    CL_CHECK(cl_count_wrong(c, buf, count, CL_FLOAT32, CL_SUM, mix(run_seed, s->fills), lo, hi,
                            first, &w));
    *wrong = (long long)w;
    return CL_OK;
}

cl_result lab27_lab_op(cl_run *run, cl_comm *c, int code, void *args, size_t bytes)
{
    (void)run;
    lab27_op_args *a = args;
    if (bytes != sizeof *a) {
        cl_set_error("lab 27's operations take a lab27_op_args");
        return CL_ERR_INVALID;
    }
    switch (code) {
    case LAB27_OP_COLL: return lab27_coll_op(c, a->kind, a->sendbuf, a->recvbuf, a->count);
    case LAB27_OP_FILL: return lab27_fill_op(c, a->recvbuf, a->count, a->first);
    case LAB27_OP_CHECK:
        return lab27_check_op(c, a->sendbuf, a->count, a->lo, a->hi, a->first, &a->wrong);
    default: cl_set_error("lab 27 has no operation %d", code); return CL_ERR_INVALID;
    }
}

void lab27_ops_begin(uint64_t seed)
{
    run_seed = mix(seed, 1);
    corrupt_seed = mix(seed, 2);
}

uint64_t lab27_colls(cl_comm *c)
{
    rank_state *s = state_of(c);
    return s ? s->colls : 0;
}

void lab27_ops_end(cl_comm *c)
{
    rank_state *s = state_of(c);
    if (!s)
        return;
    if (s->stage)
        cl_mem_free(c, s->stage);
    if (s->scratch)
        cl_mem_free(c, s->scratch);
    memset(s, 0, sizeof *s);
}
