/* harness_stripe.c: the modes that run the student's striped transfer: stripe (awkward
 * sizes, every byte checked) and stripeperf (against the rails' own rates, measured in the
 * same run, in paired rounds). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab17_harness.h"

#define MAX_ROUNDS 32

static void col_outcome(cl_row *row, const outcome *o)
{
    cl_col_str(row, "status", cl_result_str(o->status));
    cl_col_str(row, "error", o->status == CL_OK ? "" : o->error);
    cl_col_int(row, "wrong_bytes", (long long)o->wrong);
    cl_col_int(row, "posted_bytes", (long long)o->posted);
    cl_col_int(row, "transfers", (long long)o->ops);
}

cl_result stripe_mode(cl_run *run, cl_comm *comm)
{
    static const size_t sizes[] = {1, 4095, 65537, ((size_t)5 << 20) + 3};
    lab17_rails r;
    cl_result rc = rails_open(run, comm, &r);
    for (size_t i = 0; rc == CL_OK && i < sizeof sizes / sizeof sizes[0]; i++) {
        outcome o;
        rc = rails_student(run, comm, &r, sizes[i], &o);
        cl_row *row = rc == CL_OK ? cl_row_begin(run, comm) : NULL;
        cl_col_int(row, "bytes", (long long)sizes[i]);
        cl_col_int(row, "rails", r.k);
        col_outcome(row, &o);
        cl_col_num(row, "seconds", o.seconds, "%.6f");
        cl_row_end(row);
        if (o.status != CL_OK)
            break; /* a rail may be out of step now */
    }
    rails_close();
    return rc;
}

cl_result stripeperf_mode(cl_run *run, cl_comm *comm)
{
    const cl_opts *opts = cl_run_opts(run);
    size_t bytes = opts->bytes;
    int rounds;
    CL_CHECK(cl_opt_int(run, "rounds", 1, MAX_ROUNDS, &rounds));
    const char *base = cl_opt(run, "baseline");
    int each = strcmp(base, "each") == 0;
    if ((!each && strcmp(base, "one") != 0) || bytes == 0) {
        cl_set_error("--baseline one or each, --bytes > 0");
        return CL_ERR_INVALID;
    }
    lab17_rails r;
    CL_CHECK(rails_open(run, comm, &r));
    double mine[MAX_ROUNDS], ideal[MAX_ROUNDS], measured[LAB17_MAX_RAILS] = {0};
    double total = 0;
    for (int i = 0; i < r.k; i++)
        total += r.rate[i];
    outcome o = {0}, b;
    size_t wrong = 0, posted = 0, ops = 0;
    cl_result rc = CL_OK;
    /* Round -1 warms everything up. Each round measures the rails first (rail 0 alone
     * with the whole message, or each rail alone with its share), then yours. */
    for (long k = -1; rc == CL_OK && k < rounds; k++) {
        double sum = 0;
        for (int i = 0; rc == CL_OK && i < (each ? r.k : 1); i++) {
            size_t n = each ? (size_t)((double)bytes * r.rate[i] / total) : bytes;
            n = n ? n : 1;
            rc = rails_harness(run, comm, &r, n, 1u << i, &b);
            if (rc == CL_OK && (b.status != CL_OK || b.wrong)) {
                cl_set_error("the harness's own transfer on rail %d failed: %s", i, b.error);
                rc = CL_ERR_BACKEND;
            }
            if (rc == CL_OK)
                sum += measured[i] = (double)n / b.seconds;
        }
        double one = each ? sum : r.k * sum; /* the aggregate the rails can give */
        if (rc == CL_OK)
            rc = rails_student(run, comm, &r, bytes, &o);
        if (rc != CL_OK || o.status != CL_OK)
            break;
        if (k >= 0) {
            mine[k] = o.seconds, ideal[k] = (double)bytes / one;
            wrong += o.wrong, posted = o.posted, ops = o.ops;
        }
    }
    rails_close();
    CL_CHECK(rc);
    cl_report_int(run, "bytes", (long long)bytes);
    cl_report_str(run, "baseline", each ? "every rail alone, its share" : "rail 0 alone");
    cl_row *row = cl_row_begin(run, comm);
    cl_col_int(row, "bytes", (long long)bytes);
    cl_col_int(row, "rails", r.k);
    if (o.status != CL_OK) {
        col_outcome(row, &o);
        cl_row_end(row);
        return CL_OK; /* the row says what went wrong */
    }
    o.wrong = wrong, o.posted = posted, o.ops = ops;
    col_outcome(row, &o);
    cl_col_nums(row, "student_s", mine, (size_t)rounds, "%.4f");
    cl_col_nums(row, "ideal_s", ideal, (size_t)rounds, "%.4f");
    double rates[LAB17_MAX_RAILS];
    for (int i = 0; i < r.k; i++)
        rates[i] = measured[i] / 1e6;
    cl_col_nums(row, "rail_mbs", rates, (size_t)(each ? r.k : 1), "%.2f");
    cl_row_end(row);
    return CL_OK;
}
