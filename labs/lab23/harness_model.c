/* harness_model.c: lab 23's model mode: a case's model and plan handed to the student's
 * accounting of activation memory and step time, and the student's plan, reported. */
#include <math.h>
#include <string.h>

#include "harness_ref.h"

cl_result model_case(cl_case *c)
{
    model_args a;
    long long n;
    memset(&a, 0, sizeof a);
    CL_CHECK(cl_case_num(c, "seq", &a.m.seq));
    CL_CHECK(cl_case_num(c, "batch", &a.m.batch));
    CL_CHECK(cl_case_num(c, "hidden", &a.m.hidden));
    CL_CHECK(cl_case_num(c, "heads", &a.m.heads));
    CL_CHECK(cl_case_num(c, "layers", &a.m.layers));
    CL_CHECK(cl_case_int(c, "t", &n));
    a.m.t = (int)n;
    CL_CHECK(cl_case_num(c, "tflops", &a.m.flops));
    a.m.flops *= 1e12;
    CL_CHECK(cl_case_num(c, "busbw_gbps", &a.m.busbw));
    a.m.busbw *= 1e9;
    CL_CHECK(cl_case_num(c, "memory_gb", &a.m.memory));
    a.m.memory *= 1e9;
    CL_CHECK(cl_case_num(c, "states_gb", &a.m.states));
    a.m.states *= 1e9;
    if (a.m.t < 1 || a.m.layers < 1 || a.m.layers > 1000 || a.m.layers != floor(a.m.layers) ||
        !(a.m.flops > 0) || !(a.m.busbw > 0) || !(a.m.seq > 0) || !(a.m.hidden > 0)) {
        cl_set_error("t >= 1, whole layers from 1 to 1000, positive sizes and rates");
        return CL_ERR_INVALID;
    }
    CL_CHECK(cl_case_int(c, "sp", &n));
    a.p.sp = (int)n;
    CL_CHECK(cl_case_int(c, "granularity", &n));
    a.p.granularity = (int)n;
    CL_CHECK(cl_case_int(c, "full_layers", &n));
    a.p.full_layers = (int)n;
    cl_result rc = cl_case_call(c, "model", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    static const char *const names[2][2] = {{"tp_bytes", "tp_selective_bytes"},
                                            {"sp_bytes", "sp_selective_bytes"}};
    for (int sp = 0; sp <= 1; sp++)
        for (int g = 0; g <= 1; g++)
            cl_col_num(row, names[sp][g], a.layer_bytes[sp][g], "%.9g");
    cl_col_num(row, "memory_bytes", a.memory_bytes, "%.9g");
    cl_col_num(row, "step_s", a.step_s, "%.9g");
    cl_col_str(row, "plan_status", cl_result_str((cl_result)a.plan_status));
    cl_col_int(row, "plan_sp", a.plan.sp);
    cl_col_int(row, "plan_granularity", a.plan.granularity);
    cl_col_int(row, "plan_full_layers", a.plan.full_layers);
    return rc;
}
