/* harness_model.c: lab 06's model mode: the student's cost formulas and selection for one
 * case (alpha= beta= gamma= p= bytes=).
 */
#include "lab06_harness.h"

cl_result model_case(cl_case *c)
{
    cost_args a = {0};
    long long p;
    CL_CHECK(cl_case_num(c, "alpha", &a.m.alpha_s));
    CL_CHECK(cl_case_num(c, "beta", &a.m.beta_s_per_byte));
    CL_CHECK(cl_case_num(c, "gamma", &a.m.gamma_s_per_byte));
    CL_CHECK(cl_case_int(c, "p", &p));
    CL_CHECK(cl_case_num(c, "bytes", &a.bytes));
    if (p < 1 || p > 1 << 20) {
        cl_set_error("p=%lld: ranks from 1 to 2^20", p);
        return CL_ERR_INVALID;
    }
    a.p = (int)p;
    a.selected = -1;
    cl_result rc = cl_case_call(c, "cost", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    cl_col_nums(row, "cost_s", a.cost, NALGO, "%.6g");
    cl_col_int(row, "selected", a.selected);
    return rc;
}
