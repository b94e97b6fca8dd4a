/* harness_block.c: lab 23's block mode. On every rank, each repeat: the given
 * tensor-parallel block (tp.c), then the student's sequence-parallel one, forward and
 * backward, each call on fresh inputs from the double-precision reference
 * (harness_ref.c) and every output checked against it; the activation memory each keeps,
 * the bytes each sends and its time, all measured here, reported one row per block.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness_ref.h"

#define MAX_REPEATS 16

/* --- moving the reference's numbers in and out of buffers ---------------------------------- */

/* rows x cols of src (row stride `stride`, from column `col`) into buf as floats. */
static cl_result put(cl_comm *c, float *buf, const double *src, int rows, int cols, int stride,
                     int col)
{
    size_t n = (size_t)rows * cols;
    float *h = malloc(n * sizeof *h + 1);
    if (!h)
        return CL_ERR_NOMEM;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            h[(size_t)i * cols + j] = (float)src[(size_t)i * stride + col + j];
    cl_result rc = cl_mem_upload(c, buf, h, n * sizeof *h);
    free(h);
    return rc;
}

/* Elements of buf (rows x cols) farther from src's (row stride, first column) than the
 * tolerance: exact (`exact`: the float of each value) or 1e-3 of the value or of the
 * whole tensor's RMS. */
static cl_result far(cl_comm *c, const float *buf, const double *src, int rows, int cols,
                     int stride, int col, int exact, double rms, size_t *out)
{
    size_t n = (size_t)rows * cols;
    double *e = malloc(n * sizeof *e + 1);
    if (!e)
        return CL_ERR_NOMEM;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            double v = src[(size_t)i * stride + col + j];
            e[(size_t)i * cols + j] = exact ? (double)(float)v : v;
        }
    cl_result rc =
        cl_count_far(c, buf, e, n, CL_FLOAT32, exact ? 0 : 1e-3, exact ? 0 : 1e-3 * rms, out);
    free(e);
    return rc;
}

static double rms(const double *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i] * v[i];
    return n ? sqrt(s / (double)n) : 0;
}

/* --- the block -------------------------------------------------------------------------------- */

typedef struct shapes {
    int seq, batch, rows, h, f, t, rank, fl, mine;
    float p;
} shapes;

typedef struct buffers {
    float *x, *y, *dy, *dx, *gamma, *beta, *a, *b, *dgamma, *dbeta, *da, *db;
} buffers;

/* What one call pair (forward, backward) of one implementation showed on this rank. */
typedef struct sample {
    double fwd_s, bwd_s, saved, leaked, fwd_sent, bwd_sent, anon_kib;
    double macs[2];   /* the given matmul's multiply-adds in forward, backward */
    double wrong[6];  /* y, dx, da, db, dgamma, dbeta */
    double changed;   /* inputs and parameters written by the call */
    double failed[2]; /* ranks whose forward, backward returned a failure */
    char why[2][360]; /* this rank's first reason */
} sample;

static const char *const wrong_names[6] = {"wrong_y",  "wrong_dx",     "wrong_da",
                                           "wrong_db", "wrong_dgamma", "wrong_dbeta"};

typedef struct impl {
    const char *name, *fwd, *bwd;
    int sp;
} impl;

static const impl impls[2] = {{"tp", "tp_forward", "tp_backward", 0},
                              {"sp", "sp_forward", "sp_backward", 1}};

/* Call entry on every rank at once. A failure the student's function returns is
 * recorded (*failed: how many ranks had one, the same on every rank; why: this
 * rank's reason); only the harness's own failures, a crash or a timeout end the mode. */
static cl_result call(cl_comm *c, const char *entry, block_args *a, double *seconds, double *failed,
                      char *why, size_t why_len)
{
    cl_call_result res;
    CL_CHECK(cl_barrier(c)); /* every rank starts together: the time is the call's alone */
    cl_result rc = cl_student_run(c, entry, a, sizeof *a,
                                  CL_ALLOW_P2P | CL_ALLOW_LOCAL | CL_ALLOW_MEMORY, &res);
    if (rc != CL_OK && res.status != CL_ERR_CRASHED && res.status != CL_ERR_TIMEOUT)
        return rc;
    if (res.status == CL_ERR_CRASHED || res.status == CL_ERR_TIMEOUT) {
        cl_set_error("%s", res.error);
        return res.status;
    }
    *seconds = res.seconds;
    *failed = res.status != CL_OK;
    if (res.status != CL_OK && !why[0])
        snprintf(why, why_len, "%s: %s", entry, res.error);
    return cl_agree_sum(c, failed, 1);
}

/* One forward and backward of `im` on fresh inputs, checked against the reference. */
static cl_result one_pair(cl_run *run, cl_comm *c, const shapes *s, const buffers *b,
                          const impl *im, double anon_base, sample *out)
{
    uint64_t seed;
    lab23_ref ref;
    cl_result rc = CL_OK;
    memset(out, 0, sizeof *out);
    CL_CHECK(cl_fresh_seed(run, c, &seed));
    CL_CHECK(lab23_ref_compute(&ref, s->rows, s->h, s->f, s->p, seed));
    int rows = im->sp ? s->mine : s->rows; /* the rows this implementation holds */
    int row0 = im->sp ? s->rank * s->mine : 0, h = s->h, fl = s->fl;
    const double *x0 = ref.x + (size_t)row0 * h, *dy0 = ref.dy + (size_t)row0 * h;
    CL_TRY(put(c, b->x, x0, rows, h, h, 0));
    CL_TRY(put(c, b->gamma, ref.gamma, 1, h, h, 0));
    CL_TRY(put(c, b->beta, ref.beta, 1, h, h, 0));
    CL_TRY(put(c, b->a, ref.a, h, fl, s->f, s->rank * fl));              /* columns of A */
    CL_TRY(put(c, b->b, ref.b + (size_t)s->rank * fl * h, fl, h, h, 0)); /* rows of B */
    CL_TRY(cl_poison(c, b->y, (size_t)rows * h * sizeof(float), CL_FLOAT32));
    block_args a = {.d = {.seq = s->seq,
                          .batch = s->batch,
                          .hidden = h,
                          .ffn = s->f,
                          .dropout = s->p,
                          .seed = ref.seed},
                    .w = {.gamma = b->gamma, .beta = b->beta, .a = b->a, .b = b->b},
                    .x = b->x,
                    .y = b->y};
    buffer_set before, now;
    buffers_now(c, &before);
    CL_TRY(call(c, im->fwd, &a, &out->fwd_s, &out->failed[0], out->why[0], sizeof out->why[0]));
    if (out->failed[0]) { /* nothing to check, and no backward without a forward */
        buffers_drop_new(c, &before);
        goto done;
    }
    out->fwd_sent = (double)cl_student_sent_bytes(c, NULL);
    out->macs[0] = a.macs;
    buffers_now(c, &now);
    int nsaved;
    buffers_new(&before, &now, &out->saved, &nsaved);
    double kib = anon_kib();
    out->anon_kib = kib >= 0 && anon_base >= 0 && kib > anon_base ? kib - anon_base : 0;
    size_t n, changed = 0;
    CL_TRY(far(c, b->y, ref.y + (size_t)row0 * h, rows, h, h, 0, 0,
               rms(ref.y, ref.rows * (size_t)h), &n));
    out->wrong[0] = (double)n;
    CL_TRY(far(c, b->x, x0, rows, h, h, 0, 1, 0, &n));
    changed += n;
    /* The next layer owns x and y now: backward has only what forward saved. */
    CL_TRY(cl_poison(c, b->x, (size_t)rows * h * sizeof(float), CL_FLOAT32));
    CL_TRY(cl_poison(c, b->y, (size_t)rows * h * sizeof(float), CL_FLOAT32));
    CL_TRY(put(c, b->dy, dy0, rows, h, h, 0));
    CL_TRY(cl_poison(c, b->dx, (size_t)rows * h * sizeof(float), CL_FLOAT32));
    CL_TRY(cl_poison(c, b->da, (size_t)h * fl * sizeof(float), CL_FLOAT32));
    CL_TRY(cl_poison(c, b->db, (size_t)h * fl * sizeof(float), CL_FLOAT32));
    CL_TRY(cl_poison(c, b->dgamma, (size_t)h * sizeof(float), CL_FLOAT32));
    CL_TRY(cl_poison(c, b->dbeta, (size_t)h * sizeof(float), CL_FLOAT32));
    a.x = NULL, a.y = NULL, a.dy = b->dy, a.dx = b->dx;
    a.g = (lab23_grads){.gamma = b->dgamma, .beta = b->dbeta, .a = b->da, .b = b->db};
    CL_TRY(call(c, im->bwd, &a, &out->bwd_s, &out->failed[1], out->why[1], sizeof out->why[1]));
    out->bwd_sent = (double)cl_student_sent_bytes(c, NULL);
    out->macs[1] = a.macs;
    buffers_now(c, &now);
    int nleft;
    buffers_new(&before, &now, &out->leaked, &nleft);
    buffers_drop_new(c, &before);
    size_t nw = (size_t)h * s->f;
    CL_TRY(far(c, b->dx, ref.dx + (size_t)row0 * h, rows, h, h, 0, 0,
               rms(ref.dx, ref.rows * (size_t)h), &n));
    out->wrong[1] = (double)n;
    CL_TRY(far(c, b->da, ref.da, h, fl, s->f, s->rank * fl, 0, rms(ref.da, nw), &n));
    out->wrong[2] = (double)n;
    CL_TRY(far(c, b->db, ref.db + (size_t)s->rank * fl * h, fl, h, h, 0, 0, rms(ref.db, nw), &n));
    out->wrong[3] = (double)n;
    CL_TRY(far(c, b->dgamma, ref.dgamma, 1, h, h, 0, 0, rms(ref.dgamma, (size_t)h), &n));
    out->wrong[4] = (double)n;
    CL_TRY(far(c, b->dbeta, ref.dbeta, 1, h, h, 0, 0, rms(ref.dbeta, (size_t)h), &n));
    out->wrong[5] = (double)n;
    CL_TRY(far(c, b->gamma, ref.gamma, 1, h, h, 0, 1, 0, &n));
    changed += n;
    CL_TRY(far(c, b->beta, ref.beta, 1, h, h, 0, 1, 0, &n));
    changed += n;
    CL_TRY(far(c, b->a, ref.a, h, fl, s->f, s->rank * fl, 1, 0, &n));
    changed += n;
    CL_TRY(far(c, b->b, ref.b + (size_t)s->rank * fl * h, fl, h, h, 0, 1, 0, &n));
    changed += n;
    CL_TRY(far(c, b->dy, dy0, rows, h, h, 0, 1, 0, &n));
    changed += n;
    out->changed = (double)changed;
done:
    lab23_ref_free(&ref);
    return rc;
}

static cl_result read_shapes(cl_run *run, cl_comm *c, shapes *s)
{
    memset(s, 0, sizeof *s);
    CL_CHECK(cl_opt_int(run, "seq", 1, 4096, &s->seq));
    CL_CHECK(cl_opt_int(run, "batch", 1, 64, &s->batch));
    CL_CHECK(cl_opt_int(run, "hidden", 1, 4096, &s->h));
    CL_CHECK(cl_opt_int(run, "ffn", 1, 16384, &s->f));
    double p;
    CL_CHECK(cl_opt_num(run, "dropout", 0, 1, &p));
    s->t = cl_comm_size(c), s->rank = cl_comm_rank(c);
    s->rows = s->seq * s->batch;
    if (!(p >= 0 && p < 1) || s->seq % s->t || s->f % s->t || (double)s->rows * s->f > 64e6) {
        cl_set_error("--seq %d and --ffn %d must be multiples of the %d ranks, --dropout in "
                     "[0, 1), and seq x batch x ffn at most 64M",
                     s->seq, s->f, s->t);
        return CL_ERR_INVALID;
    }
    s->p = (float)p;
    s->fl = s->f / s->t, s->mine = s->rows / s->t;
    return CL_OK;
}

/* The first reason of this rank's samples, or a pointer to the other ranks. */
static const char *reason(const sample *sm, int n, int k)
{
    double failed = 0;
    for (int i = 0; i < n; i++) {
        if (sm[i].why[k][0])
            return sm[i].why[k];
        failed += sm[i].failed[k];
    }
    return failed ? "failed on another rank (its stderr says why)" : "";
}

static void report_impl(cl_run *run, cl_comm *c, const impl *im, const sample *sm, int reps,
                        const sample *warm)
{
    double fwd[MAX_REPEATS], bwd[MAX_REPEATS], step[MAX_REPEATS],
        saved = 0, leaked = 0, fsent = 0, bsent = 0, anon = 0, changed = 0, wrong[6] = {0},
        macs[2] = {0};
    for (int i = 0; i < reps; i++) {
        fwd[i] = sm[i].fwd_s, bwd[i] = sm[i].bwd_s, step[i] = sm[i].fwd_s + sm[i].bwd_s;
        saved = fmax(saved, sm[i].saved), leaked = fmax(leaked, sm[i].leaked);
        fsent = fmax(fsent, sm[i].fwd_sent), bsent = fmax(bsent, sm[i].bwd_sent);
        anon = fmax(anon, sm[i].anon_kib), changed += sm[i].changed;
        macs[0] = fmax(macs[0], sm[i].macs[0]), macs[1] = fmax(macs[1], sm[i].macs[1]);
        for (int k = 0; k < 6; k++)
            wrong[k] += sm[i].wrong[k];
    }
    cl_row *row = cl_row_begin(run, c);
    cl_col_str(row, "impl", im->name);
    cl_col_nums(row, "fwd_s", fwd, (size_t)reps, "%.6f");
    cl_col_nums(row, "bwd_s", bwd, (size_t)reps, "%.6f");
    cl_col_nums(row, "step_s", step, (size_t)reps, "%.6f");
    cl_col_int(row, "saved_bytes", (long long)saved);
    cl_col_int(row, "fwd_sent_bytes", (long long)fsent);
    cl_col_int(row, "bwd_sent_bytes", (long long)bsent);
    cl_col_int(row, "fwd_macs", (long long)macs[0]);
    cl_col_int(row, "bwd_macs", (long long)macs[1]);
    for (int k = 0; k < 6; k++)
        cl_col_int(row, wrong_names[k], (long long)wrong[k]);
    cl_col_int(row, "input_changed", (long long)changed);
    cl_col_int(row, "leaked_bytes", (long long)leaked);
    cl_col_num(row, "own_memory_kib", anon, "%.0f");
    double failed[2] = {warm->failed[0], warm->failed[1]};
    for (int i = 0; i < reps; i++)
        failed[0] += sm[i].failed[0], failed[1] += sm[i].failed[1];
    const char *fwhy = warm->why[0][0] ? warm->why[0] : reason(sm, reps, 0);
    const char *bwhy = warm->why[1][0] ? warm->why[1] : reason(sm, reps, 1);
    cl_col_int(row, "fwd_failed", (long long)failed[0]);
    cl_col_int(row, "bwd_failed", (long long)failed[1]);
    cl_col_str(row, "fwd_error", failed[0] && !fwhy[0] ? reason(warm, 1, 0) : fwhy);
    cl_col_str(row, "bwd_error", failed[1] && !bwhy[0] ? reason(warm, 1, 1) : bwhy);
    cl_row_end(row);
}

cl_result block_mode(cl_run *run, cl_comm *c)
{
    shapes s;
    buffers b;
    int reps = cl_run_opts(run)->repeats > MAX_REPEATS ? MAX_REPEATS : cl_run_opts(run)->repeats;
    CL_CHECK(read_shapes(run, c, &s));
    size_t nx = (size_t)s.rows * s.h, nw = (size_t)s.h * s.fl;
    memset(&b, 0, sizeof b);
    float **all[] = {&b.x, &b.y, &b.dy,     &b.dx,    &b.gamma, &b.beta,
                     &b.a, &b.b, &b.dgamma, &b.dbeta, &b.da,    &b.db};
    size_t count[] = {nx, nx, nx,          nx,          (size_t)s.h, (size_t)s.h,
                      nw, nw, (size_t)s.h, (size_t)s.h, nw,          nw};
    cl_result rc = CL_OK;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        CL_TRY(cl_mem_alloc(c, count[i] * sizeof(float), (void **)all[i]));
    cl_report_int(run, "ranks", s.t);
    cl_report_int(run, "rows", s.rows);
    cl_report_int(run, "hidden", s.h);
    cl_report_int(run, "ffn", s.f);
    cl_report_num(run, "dropout", s.p);
    static sample sm[2][MAX_REPEATS + 1];
    double base = anon_kib(); /* the program's own memory before any block ran */
    /* Pair 0 warms up (first touches of fresh memory); it is checked, not timed. */
    for (int i = 0; i <= reps; i++)
        for (int k = 0; k < 2; k++) {
            const impl *im = &impls[i % 2 ? 1 - k : k]; /* alternate which goes first */
            sample *out = &sm[im - impls][i];
            CL_TRY(one_pair(run, c, &s, &b, im, base, out));
            double mx[7] = {out->fwd_s,    out->bwd_s,    out->saved, out->fwd_sent,
                            out->bwd_sent, out->anon_kib, out->leaked};
            double sum[7] = {out->wrong[0], out->wrong[1], out->wrong[2], out->wrong[3],
                             out->wrong[4], out->wrong[5], out->changed};
            CL_TRY(cl_agree_max(c, mx, 7));
            CL_TRY(cl_agree_sum(c, sum, 7));
            out->fwd_s = mx[0], out->bwd_s = mx[1], out->saved = mx[2], out->fwd_sent = mx[3];
            out->bwd_sent = mx[4], out->anon_kib = mx[5], out->leaked = mx[6];
            for (int w = 0; w < 6; w++)
                out->wrong[w] = sum[w];
            out->changed = sum[6];
        }
    for (int k = 0; k < 2; k++) {
        for (int w = 0; w < 6; w++) /* the warm-up's checks count too */
            sm[k][1].wrong[w] += sm[k][0].wrong[w];
        sm[k][1].changed += sm[k][0].changed;
        sm[k][1].saved = fmax(sm[k][1].saved, sm[k][0].saved);
        sm[k][1].leaked = fmax(sm[k][1].leaked, sm[k][0].leaked);
        sm[k][1].anon_kib = fmax(sm[k][1].anon_kib, sm[k][0].anon_kib);
        report_impl(run, c, &impls[k], sm[k] + 1, reps, &sm[k][0]);
    }
done:
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (*all[i])
            cl_mem_free(c, *all[i]);
    return rc;
}
