/* harness_compare.c: lab 27's compare mode, the before/after record of one change: the
 * case's paired samples parsed and handed to the student's lab27_compare(), its effect and
 * verdict reported.
 */
#include <stdlib.h>
#include <string.h>

#include "lab27_harness.h"
#include "lab27_wire.h"

static cl_result samples(cl_case *c, const char *key, double *v, int *n)
{
    CL_CHECK(cl_case_nums(c, key, v, MAX_SAMPLES, n));
    for (int k = 0; k < *n; k++)
        if (!(v[k] > 0)) {
            cl_set_error("%s=: sample %d is %g; times are positive", key, k + 1, v[k]);
            return CL_ERR_INVALID;
        }
    return CL_OK;
}

cl_result compare_case(cl_case *c)
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
