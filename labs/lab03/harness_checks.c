/* harness_checks.c: lab 03's metric and matrix modes: the student's lab03_metric for one
 * case, and the student's matrix of one kind with what the harness found pair by pair (the
 * rebuilt median, the operations, the data, the runs held up, the pairs measured at once).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lab03_harness.h"

/* --- pure cases ------------------------------------------------------------------------------ */

cl_result metric_case(cl_case *c)
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

/* --- the student's matrix, pair by pair ------------------------------------------------------ */

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

cl_result matrix_mode(cl_run *run, cl_comm *c)
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
