/* harness_assign.c: lab 24's assign mode: each case's sizes, order and caps handed to the
 * student's bucket assignment, and the buckets it returns written out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness_lab24.h"

/* A comma-separated list of up to max numbers. */
/* Buckets as text: "3,2|1,0" (parameters of bucket 0, then of bucket 1, ...). */
static void buckets_text(const lab24_buckets *b, int params, char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    if (b->n < 1 || b->n > params || b->start[0] != 0 || b->start[b->n] != params) {
        snprintf(out, len, "invalid");
        return;
    }
    for (int k = 0; k < b->n && at + 16 < len; k++)
        for (int j = b->start[k]; j < b->start[k + 1] && at + 16 < len; j++) {
            if (j < 0 || j >= params) {
                snprintf(out, len, "invalid");
                return;
            }
            at += (size_t)snprintf(out + at, len - at, "%s%d",
                                   j == b->start[k] ? (k ? "|" : "") : ",", b->param[j]);
        }
}

cl_result assign_case(cl_case *c)
{
    static plan_args a;
    static double v[LAB24_MAX_PARAMS];
    static char text[LAB24_MAX_PARAMS * 8];
    int n, k;
    double x;
    memset(&a, 0, sizeof a);
    CL_CHECK(cl_case_nums(c, "sizes", a.m.bytes, LAB24_MAX_PARAMS, &n));
    CL_CHECK(cl_case_nums(c, "order", v, LAB24_MAX_PARAMS, &k));
    if (k != n) {
        cl_set_error("order: %d values for %d parameters", k, n);
        return CL_ERR_INVALID;
    }
    a.m.params = n;
    for (int i = 0; i < n; i++)
        a.m.order[i] = (int)v[i];
    CL_CHECK(cl_case_num(c, "first_cap", &a.caps.first_cap));
    CL_CHECK(cl_case_num(c, "cap", &a.caps.cap));
    CL_CHECK(cl_case_num(c, "last_small", &x));
    a.caps.last_small = x != 0;
    cl_result rc = cl_case_call(c, "assign", &a, sizeof a);
    buckets_text(&a.b, n, text, sizeof text);
    cl_col_int(cl_case_row(c), "buckets", a.b.n);
    cl_col_str(cl_case_row(c), "assignment", rc == CL_OK ? text : "");
    return rc;
}
