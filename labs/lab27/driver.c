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

/* The lab's own entry: the reference's timed loop (harness_ref.c), timed by the harness. */
static cl_result e_ref_loop(cl_comm *c, void *args)
{
    const lab27_loop_args *a = args;
    for (int i = 0; i < a->iters; i++)
        CL_CHECK(lab27_coll(c, a->kind, a->sendbuf, a->recvbuf, a->count));
    return CL_OK;
}

CL_STUDENT_ENTRIES({"sweep", e_sweep}, {"compare", e_compare}, {"ref_loop", e_ref_loop});

#else

#include "deadline.h"
#include "lab27_harness.h"

static int kind_of(const char *name)
{
    if (!name || strcmp(name, "allreduce") == 0)
        return LAB27_ALLREDUCE;
    if (strcmp(name, "allgather") == 0)
        return LAB27_ALLGATHER;
    return -1;
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
    lab27_ops_begin(seed);
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
    static lab27_ref_row ref[32][9];   /* every rank writes the same agreed values */
    sweep_args *a = malloc(sizeof *a); /* 40 KiB: not on a simulated rank's stack */
    cl_result rc = a ? CL_OK : CL_ERR_NOMEM;
    if (!a)
        return rc;
    for (int k = 0; k < rounds; k++) {
        /* the reference and the student's benchmark take turns going first */
        for (int turn = 0; turn < 2; turn++) {
            if ((turn == 0) == (k % 2 == 0))
                CL_TRY(lab27_ref_sweep(c, &cfg, ref, k));
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
    lab27_ops_end(c);
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
    .lab_op = lab27_lab_op,
    .arena_bytes = (size_t)256 << 20,
};

#endif
