/* harness_sweep.c: lab 27's sweep mode: --repeats rounds in which the harness's reference
 * benchmark (harness_ref.c) and the student's lab27_sweep() take turns going first; the
 * student's report is printed as it came, the reference's rows carry the harness's times and
 * the elements it corrupted.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deadline.h"
#include "lab27_harness.h"
#include "lab27_wire.h"

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

cl_result sweep_mode(cl_run *run, cl_comm *c)
{
    const cl_opts *o = cl_run_opts(run);
    cl_coll_kind kind = CL_COLL_ALLREDUCE;
    if (o->colls && (cl_coll_parse(o->colls, &kind) != CL_OK ||
                     (kind != CL_COLL_ALLREDUCE && kind != CL_COLL_ALLGATHER))) {
        cl_set_error("--coll %s: lab 27 benchmarks allreduce or allgather", o->colls);
        return CL_ERR_INVALID;
    }
    lab27_config cfg = {.kind = kind,
                        .min_bytes = o->min_bytes,
                        .max_bytes = o->max_bytes,
                        .factor = o->factor,
                        .iters = o->iters};
    CL_CHECK(cl_opt_int(run, "warmup", 0, 1000, &cfg.warmup));
    int rounds = o->repeats;
    if (cfg.factor < 2 || cfg.min_bytes < 1024 || cfg.max_bytes < cfg.min_bytes ||
        cfg.max_bytes > ((size_t)64 << 20) || cfg.iters < 1 || rounds < 1 || rounds > 9) {
        cl_set_error("sweep: needs 1K <= -b <= -e <= 64M, -f >= 2, --iters >= 1, "
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
    cl_report_str(run, "collective", cl_coll_name(kind));
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
