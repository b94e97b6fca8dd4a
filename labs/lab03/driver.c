/* driver.c: lab 03's plug-in: the student's matrices, checked operation by operation.
 *
 *   lab03 metric kind=uni bytes=N seconds=S          (or --cases FILE)
 *   lab03 matrix --kind uni|bidir|latency [--bytes 1M] [--warmup 2] [--iters 4] [--repeats 5]
 *   lab03 bench  [--bytes 4M] [--rounds 5]           your matrix and the harness's, interleaved
 *   lab03 infer  --backend sim --system S --link-gbps G   three matrices, then your reading
 *
 * Every operation of a pair goes through LAB03_OP_BEGIN (xfer.c): the harness
 * fills that operation's send buffer with fresh data before the pair starts,
 * checks every receive buffer after it, and logs when each operation began.
 * With the rank's trace (when each transfer finished) it rebuilds the runs the
 * method prescribes and their median, and compares it with the matrix the
 * student's code wrote. With --noise on, the timing rank of every pair is
 * held up (a sleep, or virtual time on "sim") in the middle of some of the
 * timed runs, as a busy machine would: only a median survives that.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness/harness.h"
#include "lab03.h"
#include "xfer.h"

#ifndef MAXR
#define MAXR LAB03_MAX_RANKS
#endif

typedef struct metric_args {
    int32_t kind;
    uint64_t bytes;
    double seconds;
    double value; /* out */
} metric_args;

typedef struct matrix_args {
    int32_t kind;
    uint64_t bytes;
    lab03_method m;
    double matrix[MAXR * MAXR]; /* in/out, n x n row-major with n = ranks */
} matrix_args;

typedef struct infer_args {
    int32_t n;
    uint64_t bytes;
    double link_gbps;
    double uni[MAXR * MAXR], bidir[MAXR * MAXR], lat_us[MAXR * MAXR];
    int32_t link[MAXR * MAXR]; /* out */
} infer_args;

#ifdef CL_STUDENT_SIDE

static cl_result metric(cl_comm *c, void *args)
{
    (void)c;
    metric_args *a = args;
    a->value = lab03_metric((lab03_kind)a->kind, a->bytes, a->seconds);
    return CL_OK;
}

static cl_result matrix(cl_comm *c, void *args)
{
    matrix_args *a = args;
    return lab03_matrix(c, (lab03_kind)a->kind, a->bytes, &a->m, a->matrix);
}

static cl_result infer(cl_comm *c, void *args)
{
    (void)c;
    infer_args *a = args;
    return lab03_infer(a->n, a->uni, a->bidir, a->lat_us, a->bytes, a->link_gbps, a->link);
}

CL_STUDENT_ENTRIES({"metric", metric}, {"matrix", matrix}, {"infer", infer});

#else

#include "lab03_harness.h"

static const char *const kind_names[] = {"uni", "bidir", "latency"};

static cl_result lab_op(cl_run *run, cl_comm *c, int code, void *args, size_t bytes)
{
    (void)run;
    if (code != LAB03_OP_BEGIN || bytes != sizeof(lab03_begin) || cl_comm_rank(c) >= MAXR) {
        cl_set_error("lab03: unknown operation %d (%zu bytes)", code, bytes);
        return CL_ERR_INVALID;
    }
    return ops_begin(c, args);
}

/* Run the student's matrix of kind once, with fresh buffers, and gather findings. */
static cl_result student_matrix(cl_run *run, cl_comm *c, int kind, size_t bytes,
                                const lab03_method *m, int noise, findings *f, cl_call_result *res)
{
    matrix_args *a = calloc(1, sizeof *a);
    if (!a)
        return CL_ERR_NOMEM;
    a->kind = kind, a->bytes = bytes, a->m = *m;
    for (int k = 0; k < MAXR * MAXR; k++)
        a->matrix[k] = NAN;
    cl_result rc = ops_start(run, c, kind, bytes, m, noise);
    if (rc == CL_OK)
        rc = cl_student_run(c, "matrix", a, sizeof *a,
                            CL_ALLOW_P2P | CL_ALLOW_BARRIER | CL_ALLOW_LAB, res);
    char why[200] = "";
    if (rc == CL_OK)
        rc = ops_finish(c, a->matrix, f, why, sizeof why);
    if (rc == CL_OK && res->status == CL_OK && !res->forbidden[0] && why[0])
        snprintf(res->error, sizeof res->error, "%s", why);
    free(a);
    return rc;
}

#define EPS 1e-7 /* s: what the agreement of start times may round away */

/* How many other pairs were being measured while pair p was. */
static int overlaps(const findings *f, int n, int p)
{
    int k = 0;
    for (int q = 0; q < n * n; q++)
        if (q != p && f->visits[q] > 0 && f->visits[p] > 0 && f->start[q] < f->end[p] - EPS &&
            f->start[p] < f->end[q] - EPS)
            k++;
    return k;
}

static cl_result parse_method(cl_run *run, lab03_method *m, int *kind, int *noise)
{
    const cl_opts *o = cl_run_opts(run);
    const char *k = cl_opt(run, "kind"), *nz = cl_opt(run, "noise");
    char *end;
    long w = strtol(cl_opt(run, "warmup"), &end, 10);
    if (*end || w < 0 || w > 1000) {
        cl_set_error("--warmup wants 0..1000, not '%s'", cl_opt(run, "warmup"));
        return CL_ERR_INVALID;
    }
    *m = (lab03_method){.warmup = (int)w, .iters = o->iters, .repeats = o->repeats};
    if (m->repeats > LAB03_MAX_REPEATS) {
        cl_set_error("--repeats: at most %d", LAB03_MAX_REPEATS);
        return CL_ERR_INVALID;
    }
    *kind = -1;
    for (int i = 0; i < 3; i++)
        if (strcmp(k, kind_names[i]) == 0)
            *kind = i;
    if (*kind < 0 || (strcmp(nz, "on") && strcmp(nz, "off"))) {
        cl_set_error("--kind is uni, bidir or latency and --noise on or off");
        return CL_ERR_INVALID;
    }
    *noise = strcmp(nz, "on") == 0;
    return CL_OK;
}

static cl_result check_size(cl_comm *c, size_t bytes, const lab03_method *m)
{
    size_t P = (size_t)(m->warmup + m->iters * m->repeats);
    if (cl_comm_size(c) > MAXR) {
        cl_set_error("at most %d ranks", MAXR);
        return CL_ERR_INVALID;
    }
    if (bytes == 0 || P * bytes > ((size_t)256 << 20)) {
        cl_set_error("%zu operations of %zu bytes need %zu MiB of buffers per rank (at most "
                     "512): fewer operations or smaller messages",
                     P, bytes, 2 * P * bytes >> 20);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

static void report_method(cl_run *run, int kind, size_t bytes, const lab03_method *m)
{
    cl_report_str(run, "kind", kind_names[kind]);
    cl_report_int(run, "bytes", (long long)bytes);
    cl_report_int(run, "warmup", m->warmup);
    cl_report_int(run, "iters", m->iters);
    cl_report_int(run, "repeats", m->repeats);
    cl_report_str(run, "units", kind == LAB03_LATENCY ? "us" : "GB/s");
}

static cl_result call_failed(const cl_call_result *res)
{
    if (res->status == CL_OK)
        return CL_OK;
    cl_set_error("%s%s%s", res->error, res->forbidden[0] ? "; forbidden: " : "", res->forbidden);
    return res->status;
}

static cl_result matrix_mode(cl_run *run, cl_comm *c)
{
    lab03_method m;
    int kind, noise, n = cl_comm_size(c);
    size_t bytes = cl_run_opts(run)->bytes;
    CL_CHECK(parse_method(run, &m, &kind, &noise));
    CL_CHECK(check_size(c, bytes, &m));
    findings *f = malloc(sizeof *f);
    if (!f)
        return CL_ERR_NOMEM;
    cl_call_result res;
    CL_CHECK(student_matrix(run, c, kind, bytes, &m, noise, f, &res));
    report_method(run, kind, bytes, &m);
    cl_report_int(run, "refused_ops", (long long)f->refused);
    cl_report_str(run, "call_status", cl_result_str(res.status));
    cl_report_str(run, "call_error", res.error);
    cl_report_str(run, "forbidden", res.forbidden);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (i == j)
                continue;
            int p = i * n + j;
            cl_row *row = cl_row_begin(run, c);
            cl_col_int(row, "i", i);
            cl_col_int(row, "j", j);
            cl_col_num(row, "value", f->writers[p] ? f->value[p] : NAN, "%.3f");
            cl_col_num(row, "reference", f->ref[p] > 0 ? f->ref[p] : NAN, "%.3f");
            cl_col_int(row, "writers", (long long)f->writers[p]);
            cl_col_int(row, "visits", (long long)f->visits[p]);
            cl_col_int(row, "ops_off", (long long)f->ops_off[p]);
            cl_col_int(row, "wrong_bytes", (long long)f->wrong[p]);
            cl_col_int(row, "slow_runs", (long long)f->slow[p]);
            cl_col_num(row, "spread", f->spread[p] > 0 ? f->spread[p] : NAN, "%.2f");
            cl_col_int(row, "overlaps", overlaps(f, n, p));
            cl_row_end(row);
        }
    free(f);
    return call_failed(&res);
}

/* --- the harness's own matrix: the reference of the performance check ----------------------------
 */

/* The operation of xfer.c, on the harness's communicator. */
static cl_result harness_op(cl_comm *c, int kind, int i, int j, size_t bytes, void *send,
                            void *recv)
{
    int me = cl_comm_rank(c), peer = me == i ? j : i;
    cl_request r[2];
    switch (kind) {
    case LAB03_UNI: return me == i ? cl_send(c, send, bytes, j) : cl_recv(c, recv, bytes, i);
    case LAB03_BIDIR:
        CL_CHECK(cl_irecv(c, recv, bytes, peer, &r[0]));
        CL_CHECK(cl_isend(c, send, bytes, peer, &r[1]));
        return cl_waitall(c, 2, r);
    default:
        if (me == i) {
            CL_CHECK(cl_send(c, send, bytes, j));
            return cl_recv(c, recv, bytes, j);
        }
        CL_CHECK(cl_recv(c, recv, bytes, i));
        return cl_send(c, send, bytes, i);
    }
}

/* The reference matrix: the handout's method, in the harness; data checked too. */
static cl_result harness_matrix(cl_run *run, cl_comm *c, int kind, size_t bytes,
                                const lab03_method *m, findings *f)
{
    int n = cl_comm_size(c), me = cl_comm_rank(c), P = m->warmup + m->iters * m->repeats;
    char *send, *recv;
    uint64_t seed;
    memset(f, 0, sizeof *f);
    CL_CHECK(cl_fresh_seed(run, c, &seed));
    CL_CHECK(cl_mem_alloc(c, (size_t)P * bytes, (void **)&send));
    CL_CHECK(cl_mem_alloc(c, (size_t)P * bytes, (void **)&recv));
    CL_CHECK(cl_poison(c, recv, (size_t)P * bytes, CL_INT32));
    for (int i = 0; i < n; i++)
        for (int j = kind == LAB03_UNI ? 0 : i + 1; j < n; j++) {
            if (i == j)
                continue;
            CL_CHECK(cl_barrier(c));
            if (me != i && me != j)
                continue;
            uint64_t ps = mix(seed, (uint64_t)(i * MAXR + j));
            for (int k = 0; k < P; k++)
                CL_CHECK(cl_fill_bytes(c, send + (size_t)k * bytes, bytes, op_seed(ps, k), me, 0));
            double per[LAB03_MAX_REPEATS];
            int k = 0;
            for (; k < m->warmup; k++)
                CL_CHECK(harness_op(c, kind, i, j, bytes, send + (size_t)k * bytes,
                                    recv + (size_t)k * bytes));
            for (int r = 0; r < m->repeats; r++) {
                double t0 = cl_comm_time(c);
                for (int q = 0; q < m->iters; q++, k++)
                    CL_CHECK(harness_op(c, kind, i, j, bytes, send + (size_t)k * bytes,
                                        recv + (size_t)k * bytes));
                per[r] = (cl_comm_time(c) - t0) / m->iters;
            }
            qsort(per, (size_t)m->repeats, sizeof *per, cmp_double);
            int R = m->repeats;
            double mid = R % 2 ? per[R / 2] : (per[R / 2 - 1] + per[R / 2]) / 2;
            if (me == i)
                f->ref[i * n + j] = ref_metric(kind, bytes, mid);
            if (kind != LAB03_UNI || me == j)
                for (int q = 0; q < P; q++) {
                    size_t wrong;
                    CL_CHECK(cl_count_wrong_bytes(c, recv + (size_t)q * bytes, bytes,
                                                  op_seed(ps, q), me == i ? j : i, 0, &wrong));
                    f->wrong[i * n + j] += (double)wrong;
                }
        }
    CL_CHECK(cl_barrier(c));
    CL_CHECK(cl_mem_free(c, send));
    CL_CHECK(cl_mem_free(c, recv));
    CL_CHECK(cl_agree_max(c, f->ref, n * n));
    return cl_agree_sum(c, f->wrong, n * n);
}

/* Rounds of (the student's matrix, the harness's matrix), alternating which goes
 * first; one paired sample per pair and round. */
static cl_result bench_mode(cl_run *run, cl_comm *c)
{
    lab03_method m;
    int kind, noise, n = cl_comm_size(c);
    size_t bytes = cl_run_opts(run)->bytes;
    CL_CHECK(parse_method(run, &m, &kind, &noise));
    CL_CHECK(check_size(c, bytes, &m));
    long rounds = strtol(cl_opt(run, "rounds"), NULL, 10);
    if (rounds < 1 || rounds > 64) {
        cl_set_error("--rounds wants 1..64");
        return CL_ERR_INVALID;
    }
    findings *f = malloc(sizeof *f), *h = malloc(sizeof *h);
    double(*mine)[64] = calloc((size_t)n * n, sizeof *mine);
    double(*rebuilt)[64] = calloc((size_t)n * n, sizeof *rebuilt);
    double(*ref)[64] = calloc((size_t)n * n, sizeof *ref);
    double *wrong = calloc((size_t)n * n, sizeof *wrong), *off = calloc((size_t)n * n, sizeof *off);
    if (!f || !h || !mine || !rebuilt || !ref || !wrong || !off)
        return CL_ERR_NOMEM;
    cl_call_result res = {0};
    for (long r = -1; r < rounds; r++) { /* round -1 warms both up */
        for (int side = 0; side < 2; side++) {
            if ((side == 0) == (r % 2 == 0)) {
                CL_CHECK(student_matrix(run, c, kind, bytes, &m, noise, f, &res));
                CL_CHECK(call_failed(&res));
            } else {
                CL_CHECK(harness_matrix(run, c, kind, bytes, &m, h));
            }
        }
        for (int p = 0; r >= 0 && p < n * n; p++) {
            mine[p][r] = f->writers[p] ? f->value[p] : 0;
            rebuilt[p][r] = f->ref[p];
            ref[p][r] = h->ref[p];
            wrong[p] += f->wrong[p] + h->wrong[p];
            off[p] += f->ops_off[p] + (f->visits[p] > 1);
        }
    }
    report_method(run, kind, bytes, &m);
    for (int i = 0; i < n; i++)
        for (int j = kind == LAB03_UNI ? 0 : i + 1; j < n; j++) {
            if (i == j)
                continue;
            int p = i * n + j;
            cl_row *row = cl_row_begin(run, c);
            cl_col_int(row, "i", i);
            cl_col_int(row, "j", j);
            cl_col_nums(row, "student", mine[p], (size_t)rounds, "%.3f");
            cl_col_nums(row, "rebuilt", rebuilt[p], (size_t)rounds, "%.3f");
            cl_col_nums(row, "reference", ref[p], (size_t)rounds, "%.3f");
            cl_col_int(row, "wrong_bytes", (long long)wrong[p]);
            cl_col_int(row, "ops_off", (long long)off[p]);
            cl_row_end(row);
        }
    free(f), free(h), free(mine), free(rebuilt), free(ref), free(wrong), free(off);
    return CL_OK;
}

/* --- reading a server from its matrices
 * ------------------------------------------------------------ */

static cl_result infer_mode(cl_run *run, cl_comm *c)
{
    lab03_method m;
    int kind, noise, n = cl_comm_size(c);
    size_t bytes = cl_run_opts(run)->bytes;
    CL_CHECK(parse_method(run, &m, &kind, &noise));
    CL_CHECK(check_size(c, bytes, &m));
    double link_gbps = strtod(cl_opt(run, "link-gbps"), NULL);
    if (!(link_gbps > 0)) {
        cl_set_error("--link-gbps: the bandwidth of one NVLink (GB/s), e.g. 20");
        return CL_ERR_INVALID;
    }
    infer_args *a = calloc(1, sizeof *a);
    findings *f = malloc(sizeof *f);
    if (!a || !f)
        return CL_ERR_NOMEM;
    a->n = n, a->bytes = bytes, a->link_gbps = link_gbps;
    double *dst[3] = {a->uni, a->bidir, a->lat_us};
    cl_call_result res;
    long long wrong = 0, off = 0, refused = 0;
    for (int k = 0; k < 3; k++) {
        CL_CHECK(student_matrix(run, c, k, k == LAB03_LATENCY ? 8 : bytes, &m, noise, f, &res));
        CL_CHECK(call_failed(&res));
        for (int p = 0; p < n * n; p++) {
            dst[k][p] = f->writers[p] ? f->value[p] : 0;
            wrong += (long long)f->wrong[p];
            off += (long long)f->ops_off[p];
        }
        refused += (long long)f->refused;
    }
    report_method(run, LAB03_UNI, bytes, &m);
    cl_report_num(run, "link_gbps", link_gbps);
    cl_report_int(run, "wrong_bytes", wrong);
    cl_report_int(run, "ops_off", off);
    cl_report_int(run, "refused_ops", refused);
    for (int p = 0; p < n * n; p++)
        a->link[p] = -99;
    res.status = CL_OK;
    if (cl_comm_rank(c) == 0)
        CL_CHECK(cl_student_run(c, "infer", a, sizeof *a, 0, &res));
    int64_t st = res.status;
    CL_CHECK(cl_agree(c, CL_MIN, &st, 1));
    cl_report_str(run, "infer_status", cl_result_str((cl_result)st));
    if (cl_comm_rank(c) == 0)
        cl_report_str(run, "infer_error", res.error);
    for (int i = 0; i < n; i++) {
        cl_row *row = cl_row_begin(run, c);
        long long links[MAXR];
        for (int j = 0; j < n; j++)
            links[j] = a->link[i * n + j];
        cl_col_int(row, "gpu", i);
        cl_col_ints(row, "link", links, (size_t)n);
        cl_col_nums(row, "uni_gbps", a->uni + i * n, (size_t)n, "%.2f");
        cl_col_nums(row, "bidir_gbps", a->bidir + i * n, (size_t)n, "%.2f");
        cl_col_nums(row, "latency_us", a->lat_us + i * n, (size_t)n, "%.2f");
        cl_row_end(row);
    }
    free(a), free(f);
    return CL_OK;
}

/* --- pure cases --------------------------------------------------------------------------------
 */

static cl_result metric_case(cl_case *c)
{
    const char *k;
    double bytes, seconds;
    CL_CHECK(cl_case_str(c, "kind", &k));
    CL_CHECK(cl_case_num(c, "bytes", &bytes));
    CL_CHECK(cl_case_num(c, "seconds", &seconds));
    metric_args a = {.kind = -1, .bytes = (uint64_t)bytes, .seconds = seconds};
    for (int i = 0; i < 3; i++)
        if (strcmp(k, kind_names[i]) == 0)
            a.kind = i;
    if (a.kind < 0 || !(bytes >= 0) || !(seconds > 0)) {
        cl_set_error("kind=uni|bidir|latency bytes=N>=0 seconds=S>0");
        return CL_ERR_INVALID;
    }
    cl_result rc = cl_case_call(c, "metric", &a, sizeof a);
    cl_col_num(cl_case_row(c), "value", a.value, "%.9g");
    return rc;
}

const cl_lab cl_lab_def = {
    .name = "lab03",
    .title = "带宽与时延测量: the bandwidth and latency matrix",
    .modes = (const cl_mode[]){{.name = "metric",
                                .help = "your lab03_metric of kind=K bytes=N seconds=S",
                                .cases = metric_case},
                               {.name = "matrix",
                                .help = "your matrix of --kind, every operation checked",
                                .ranks = matrix_mode,
                                .min_ranks = 2},
                               {.name = "bench",
                                .help = "your matrix and the harness's, --rounds times interleaved",
                                .ranks = bench_mode,
                                .min_ranks = 2},
                               {.name = "infer",
                                .help = "uni, bidir and latency matrices, then your lab03_infer",
                                .ranks = infer_mode,
                                .min_ranks = 2},
                               {0}},
    .options =
        (const cl_option[]){
            {.name = "kind", .help = "uni, bidir or latency", .fallback = "uni"},
            {.name = "warmup", .help = "operations before the timed runs", .fallback = "2"},
            {.name = "noise",
             .help = "on: hold up some timed runs, as a busy machine does",
             .fallback = "on"},
            {.name = "rounds", .help = "bench: paired samples", .fallback = "5"},
            {.name = "link-gbps",
             .help = "infer: GB/s of one NVLink of these GPUs",
             .fallback = "20"},
            {0}},
    .arena_bytes = (size_t)640 << 20,
    .lab_op = lab_op,
};

#endif
