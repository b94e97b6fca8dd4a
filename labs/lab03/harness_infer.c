/* harness_infer.c: lab 03's infer mode: reading a server from its matrices. The student's
 * uni, bidir and latency matrices, each checked as in the matrix mode, are handed to the
 * student's lab03_infer on rank 0, and each GPU's row of links is reported with them.
 */
#include <stdlib.h>

#include "lab03_harness.h"

cl_result infer_mode(cl_run *run, cl_comm *c)
{
    lab03_method m;
    int kind, noise, n = cl_comm_size(c);
    size_t bytes = cl_run_opts(run)->bytes;
    CL_CHECK(parse_method(run, &m, &kind, &noise));
    CL_CHECK(check_size(c, bytes, &m));
    double link_gbps; /* one NVLink's GB/s */
    CL_CHECK(cl_opt_num(run, "link-gbps", 0.001, 1e4, &link_gbps));
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
