/* driver.c: lab 27's plug-in: the student's nccl-tests-style benchmark, the harness's own
 * reference benchmark in the same run, and the before/after record of one change.
 *
 *   lab27 sweep [--coll allreduce|allgather] [-b 1K] [-e 16M] [-f 4] [--warmup 5]
 *               [--iters 20] [--repeats 1] [--backend cpu|gpu|sim]
 *   lab27 compare before=B1,B2,... after=A1,A2,...     (or --cases FILE)
 *
 * sweep runs, --repeats times, the harness's reference benchmark and then the student's
 * lab27_sweep() on every rank. The student's report (nccl-tests' table) is printed as it
 * came and goes to the JSON whole; the reference's rows carry the harness's times and the
 * number of elements the harness corrupted in each row (what #wrong must say). The
 * collective under test, the fills and the checks are the lab's operations (lab_op): the
 * student's code asks, the harness performs them on buffers it has checked are the
 * rank's own.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness.h"
#include "lab27.h"
#include "lab27_wire.h"

#define TEXT_CAP    (40 * 1024)
#define MAX_SAMPLES 64

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct sweep_args {
    lab27_config cfg;
    char text[TEXT_CAP]; /* out: rank 0's report */
} sweep_args;

typedef struct compare_args {
    int n;
    double before[MAX_SAMPLES], after[MAX_SAMPLES];
    lab27_effect e; /* out */
} compare_args;

#ifdef CL_STUDENT_SIDE

static cl_result e_sweep(cl_comm *c, void *args)
{
    sweep_args *a = args;
    a->text[0] = '\0';
    return lab27_sweep(c, &a->cfg, a->text, sizeof a->text);
}

static cl_result e_compare(cl_comm *c, void *args)
{
    (void)c;
    compare_args *a = args;
    return lab27_compare(a->before, a->after, a->n, &a->e);
}

CL_STUDENT_ENTRIES({"sweep", e_sweep}, {"compare", e_compare});

#else

#include "buffers.h"
#include "data.h"
#include "deadline.h"

#define MAX_RANKS 64

/* What the harness keeps per rank for the lab's operations. */
typedef struct rank_state {
    void *stage, *scratch; /* the in-place copy of the input; the library's work space */
    size_t stage_bytes, scratch_bytes;
    uint64_t fills; /* fills so far: the latest one's seed is seed_of(fills) */
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

static size_t block_of(int kind, size_t count, int p)
{
    return kind == LAB27_ALLGATHER ? count / (size_t)p : count;
}

/* The elements the harness corrupts after every call of (kind, count, in place): none in
 * about two rows of three; else k elements of one rank's output, the same on every call.
 * Drawn from a seed the student's program never sees. */
typedef struct corruption {
    int k, victim;
    size_t off;
} corruption;

static corruption corruption_of(int kind, size_t count, int in_place, int p)
{
    corruption x = {0, 0, 0};
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
static cl_result do_coll(cl_comm *c, int kind, const void *send, void *recv, size_t count)
{
    rank_state *s = state_of(c);
    if (!s)
        return CL_ERR_INVALID;
    int p = cl_comm_size(c), r = cl_comm_rank(c);
    if ((kind != LAB27_ALLREDUCE && kind != LAB27_ALLGATHER) || count == 0 ||
        (kind == LAB27_ALLGATHER && count % (size_t)p != 0)) {
        cl_set_error("lab27_coll: kind %d with count %zu (AllGather: a multiple of %d ranks)", kind,
                     count, p);
        return CL_ERR_INVALID;
    }
    size_t block = block_of(kind, count, p), es = sizeof(float);
    CL_CHECK(owned(c, recv, count * es, "lab27_coll's recvbuf"));
    CL_CHECK(owned(c, send, block * es, "lab27_coll's sendbuf"));
    const char *in_place_at =
        (const char *)recv + (kind == LAB27_ALLGATHER ? (size_t)r * block * es : 0);
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
    CL_CHECK(
        cl_library_coll(c, kind == LAB27_ALLREDUCE ? CL_COLL_ALLREDUCE : CL_COLL_ALLGATHER, &a));
    corruption x = corruption_of(kind, count, in_place, p);
    if (x.k && x.victim == r)
        CL_CHECK(cl_poison(c, (char *)recv + x.off * es, (size_t)x.k * es, CL_FLOAT32));
    return CL_OK;
}

static cl_result do_fill(cl_comm *c, void *buf, size_t count, size_t first)
{
    rank_state *s = state_of(c);
    if (!s)
        return CL_ERR_INVALID;
    CL_CHECK(owned(c, buf, count * sizeof(float), "lab27_fill"));
    s->fills++;
    return cl_fill(c, buf, count, CL_FLOAT32, CL_SUM, mix(run_seed, s->fills), cl_comm_rank(c),
                   first);
}

static cl_result do_check(cl_comm *c, const void *buf, size_t count, int lo, int hi, size_t first,
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

static cl_result lab_op(cl_run *run, cl_comm *c, int code, void *args, size_t bytes)
{
    (void)run;
    lab27_op_args *a = args;
    if (bytes != sizeof *a) {
        cl_set_error("lab 27's operations take a lab27_op_args");
        return CL_ERR_INVALID;
    }
    switch (code) {
    case LAB27_OP_COLL: return do_coll(c, a->kind, a->sendbuf, a->recvbuf, a->count);
    case LAB27_OP_FILL: return do_fill(c, a->recvbuf, a->count, a->first);
    case LAB27_OP_CHECK:
        return do_check(c, a->sendbuf, a->count, a->lo, a->hi, a->first, &a->wrong);
    default: cl_set_error("lab 27 has no operation %d", code); return CL_ERR_INVALID;
    }
}

/* --- the reference benchmark (nccl-tests' TimeTest and BenchTime, as the handout states) --- */

typedef struct ref_row {
    size_t size, count, sendcount, recvcount;
    double us[2];
    long long wrong[2], corrupted[2];
} ref_row;

/* Seconds per call of iters calls after warmup untimed ones and a barrier; averaged over
 * the ranks (nccl-tests' -a 1). */
static cl_result timed(cl_comm *c, int kind, const void *send, void *recv, size_t count, int warmup,
                       int iters, double *us)
{
    for (int i = 0; i < warmup; i++)
        CL_CHECK(do_coll(c, kind, send, recv, count));
    CL_CHECK(cl_barrier(c));
    double t0 = cl_comm_time(c);
    for (int i = 0; i < iters; i++)
        CL_CHECK(do_coll(c, kind, send, recv, count));
    /* picoseconds, whole numbers, for an exact sum over the ranks */
    double ps[1] = {(cl_comm_time(c) - t0) / iters * 1e12};
    CL_CHECK(cl_agree_sum(c, ps, 1));
    *us = ps[0] / 1e6 / cl_comm_size(c);
    return CL_OK;
}

static cl_result ref_bench(cl_comm *c, int kind, size_t bytes, int warmup, int iters, char *send,
                           char *recv, ref_row *row)
{
    int p = cl_comm_size(c), r = cl_comm_rank(c);
    size_t count = bytes / sizeof(float), block;
    if (kind == LAB27_ALLGATHER)
        count = (count / (size_t)p) & ~(size_t)3; /* nccl-tests: a 16-byte multiple per rank */
    block = count;
    size_t total = kind == LAB27_ALLGATHER ? block * (size_t)p : count;
    row->count = block;
    row->sendcount = block;
    row->recvcount = total;
    row->size = total * sizeof(float);
    for (int ip = 0; ip < 2; ip++) {
        char *in = ip ? recv + (kind == LAB27_ALLGATHER ? (size_t)r * block * 4 : 0) : send;
        CL_CHECK(timed(c, kind, in, recv, total, warmup, iters, &row->us[ip]));
        /* the check: fresh inputs, one call, every element of every rank's output */
        CL_CHECK(do_fill(c, in, block, kind == LAB27_ALLGATHER ? (size_t)r * block : 0));
        CL_CHECK(do_coll(c, kind, in, recv, total));
        long long w = 0, x;
        if (kind == LAB27_ALLREDUCE)
            CL_CHECK(do_check(c, recv, total, 0, p, 0, &w));
        else
            for (int j = 0; j < p; j++) {
                CL_CHECK(do_check(c, recv + (size_t)j * block * 4, block, j, j + 1,
                                  (size_t)j * block, &x));
                w += x;
            }
        double v[1] = {(double)w};
        CL_CHECK(cl_agree_sum(c, v, 1));
        row->wrong[ip] = (long long)v[0];
        row->corrupted[ip] = corruption_of(kind, total, ip, p).k;
    }
    return CL_OK;
}

static int kind_of(const char *name)
{
    if (!name || strcmp(name, "allreduce") == 0)
        return LAB27_ALLREDUCE;
    if (strcmp(name, "allgather") == 0)
        return LAB27_ALLGATHER;
    return -1;
}

/* nccl-tests' warm-up (every size from the smallest, doubling), then each size measured. */
static cl_result ref_sweep(cl_comm *c, const lab27_config *cfg, ref_row ref[][9], int k)
{
    int p = cl_comm_size(c);
    char *send = NULL, *recv = NULL;
    cl_result rc = CL_OK;
    CL_TRY(cl_mem_alloc(c, cfg->max_bytes, (void **)&send));
    CL_TRY(cl_mem_alloc(c, cfg->max_bytes, (void **)&recv));
    for (size_t w = cfg->min_bytes; w <= cfg->max_bytes; w *= 2) {
        size_t n = w / 4;
        if (cfg->kind == LAB27_ALLGATHER)
            n = ((n / (size_t)p) & ~(size_t)3) * (size_t)p;
        for (int j = 0; j < cfg->warmup && n; j++)
            CL_TRY(do_coll(c, cfg->kind, send, recv, n));
    }
    int i = 0;
    for (size_t b = cfg->min_bytes; b <= cfg->max_bytes; b *= (size_t)cfg->factor, i++)
        CL_TRY(ref_bench(c, cfg->kind, b, 1, cfg->iters, send, recv, &ref[i][k]));
done:
    if (send)
        cl_mem_free(c, send);
    if (recv)
        cl_mem_free(c, recv);
    return rc;
}

/* The student's lab27_sweep() on every rank; rank 0 prints its report and keeps it. */
static cl_result student_sweep(cl_run *run, cl_comm *c, const lab27_config *cfg, sweep_args *a,
                               int k)
{
    cl_deadline_doing("the student's lab27_sweep");
    memset(a, 0, sizeof *a);
    a->cfg = *cfg;
    cl_call_result res;
    CL_CHECK(cl_student_run(c, "sweep", a, sizeof *a,
                            CL_ALLOW_LAB | CL_ALLOW_BARRIER | CL_ALLOW_AGREE | CL_ALLOW_MEMORY |
                                CL_ALLOW_LOCAL | CL_CALL_UNTRACED,
                            &res));
    a->text[sizeof a->text - 1] = '\0';
    int64_t failed[1] = {res.status == CL_OK ? 0 : 1};
    CL_CHECK(cl_agree(c, CL_SUM, failed, 1));
    cl_row *row = cl_row_begin(run, c);
    if (row) { /* the report as the student's program wrote it */
        fputs(a->text, stdout);
        fflush(stdout);
    }
    cl_col_str(row, "name", "student");
    cl_col_int(row, "round", k + 1);
    cl_col_call(row, &res);
    cl_col_int(row, "ranks_failed", (long long)failed[0]);
    cl_col_str(row, "table", a->text);
    cl_row_end(row);
    return CL_OK;
}

static cl_result sweep(cl_run *run, cl_comm *c)
{
    const cl_opts *o = cl_run_opts(run);
    int kind = kind_of(o->colls);
    if (kind < 0) {
        cl_set_error("--coll %s: lab 27 benchmarks allreduce or allgather", o->colls);
        return CL_ERR_INVALID;
    }
    lab27_config cfg = {.kind = kind,
                        .min_bytes = o->min_bytes,
                        .max_bytes = o->max_bytes,
                        .factor = o->factor,
                        .warmup = atoi(cl_opt(run, "warmup")),
                        .iters = o->iters};
    int rounds = o->repeats;
    if (cfg.factor < 2 || cfg.min_bytes < 1024 || cfg.max_bytes < cfg.min_bytes ||
        cfg.max_bytes > ((size_t)64 << 20) || cfg.warmup < 0 || cfg.iters < 1 || rounds < 1 ||
        rounds > 9) {
        cl_set_error("sweep: needs 1K <= -b <= -e <= 64M, -f >= 2, --warmup >= 0, --iters >= 1, "
                     "1 <= --repeats <= 9");
        return CL_ERR_INVALID;
    }
    uint64_t seed;
    CL_CHECK(cl_fresh_seed(run, c, &seed));
    run_seed = mix(seed, 1);
    corrupt_seed = mix(seed, 2);
    int nsizes = 0;
    for (size_t b = cfg.min_bytes; b <= cfg.max_bytes; b *= (size_t)cfg.factor)
        nsizes++;
    if (nsizes > 32) {
        cl_set_error("sweep: %d sizes (at most 32)", nsizes);
        return CL_ERR_INVALID;
    }
    cl_report_str(run, "collective", kind == LAB27_ALLREDUCE ? "allreduce" : "allgather");
    cl_report_int(run, "ranks", cl_comm_size(c));
    cl_report_int(run, "warmup", cfg.warmup);
    cl_report_int(run, "iters", cfg.iters);
    cl_report_str(run, "units", "size in bytes, time in us (the harness's reference)");
    static ref_row ref[32][9];         /* every rank writes the same agreed values */
    sweep_args *a = malloc(sizeof *a); /* 40 KiB: not on a simulated rank's stack */
    cl_result rc = a ? CL_OK : CL_ERR_NOMEM;
    if (!a)
        return rc;
    for (int k = 0; k < rounds; k++) {
        /* the reference and the student's benchmark take turns going first */
        for (int turn = 0; turn < 2; turn++) {
            if ((turn == 0) == (k % 2 == 0))
                CL_TRY(ref_sweep(c, &cfg, ref, k));
            else
                CL_TRY(student_sweep(run, c, &cfg, a, k));
        }
    }
    for (int i = 0; i < nsizes; i++) {
        cl_row *row = cl_row_begin(run, c);
        cl_col_str(row, "name", "reference");
        cl_col_int(row, "size", (long long)ref[i][0].size);
        cl_col_int(row, "count", (long long)ref[i][0].count);
        double us[2][9];
        for (int k = 0; k < rounds; k++)
            us[0][k] = ref[i][k].us[0], us[1][k] = ref[i][k].us[1];
        cl_col_nums(row, "time", us[0], (size_t)rounds, "%.2f");
        cl_col_nums(row, "time_ip", us[1], (size_t)rounds, "%.2f");
        cl_col_int(row, "wrong", ref[i][0].wrong[0]);
        cl_col_int(row, "wrong_ip", ref[i][0].wrong[1]);
        cl_col_int(row, "corrupted", ref[i][0].corrupted[0]);
        cl_col_int(row, "corrupted_ip", ref[i][0].corrupted[1]);
        cl_row_end(row);
    }
done:
    free(a);
    for (int r = 0; r < MAX_RANKS; r++)
        if (r == cl_comm_rank(c)) {
            if (st[r].stage)
                cl_mem_free(c, st[r].stage);
            if (st[r].scratch)
                cl_mem_free(c, st[r].scratch);
            memset(&st[r], 0, sizeof st[r]);
        }
    return rc;
}

/* --- the before/after record ----------------------------------------------------------------- */

static cl_result samples(cl_case *c, const char *key, double *v, int *n)
{
    const char *text;
    CL_CHECK(cl_case_str(c, key, &text));
    int k = 0;
    for (const char *p = text; *p; k++) {
        char *end;
        if (k == MAX_SAMPLES) {
            cl_set_error("%s: more than %d samples", key, MAX_SAMPLES);
            return CL_ERR_INVALID;
        }
        v[k] = strtod(p, &end);
        if (end == p || (*end && *end != ',') || !(v[k] > 0)) {
            cl_set_error("%s: expected positive numbers separated by commas at '%.20s'", key, p);
            return CL_ERR_INVALID;
        }
        p = *end ? end + 1 : end;
    }
    *n = k;
    return CL_OK;
}

static cl_result compare_case(cl_case *c)
{
    static compare_args a;
    memset(&a, 0, sizeof a);
    int nb = 0, na = 0;
    CL_CHECK(samples(c, "before", a.before, &nb));
    CL_CHECK(samples(c, "after", a.after, &na));
    if (nb != na || nb < 1) {
        cl_set_error("before has %d samples, after %d: the samples are pairs", nb, na);
        return CL_ERR_INVALID;
    }
    a.n = nb;
    cl_result rc = cl_case_call(c, "compare", &a, sizeof a);
    cl_row *r = cl_case_row(c);
    cl_col_num(r, "median_before", a.e.median_before, "%.6g");
    cl_col_num(r, "median_after", a.e.median_after, "%.6g");
    cl_col_num(r, "effect", a.e.effect, "%.6g");
    cl_col_num(r, "lo", a.e.lo, "%.6g");
    cl_col_num(r, "hi", a.e.hi, "%.6g");
    cl_col_int(r, "verdict", a.e.verdict);
    return rc;
}

const cl_lab cl_lab_def = {
    .name = "lab27",
    .title = "基准测试方法论: an nccl-tests-style harness and the before/after record",
    .modes = (const cl_mode[]){{.name = "sweep",
                                .help = "your benchmark and the harness's reference, same run",
                                .ranks = sweep},
                               {.name = "compare",
                                .help = "your record of one change: before=.. after=..",
                                .cases = compare_case},
                               {0}},
    .options = (const cl_option[]){{.name = "warmup",
                                    .help = "untimed calls before each measurement (default 5)",
                                    .fallback = "5"},
                                   {0}},
    .lab_op = lab_op,
    .arena_bytes = (size_t)256 << 20,
};

#endif
