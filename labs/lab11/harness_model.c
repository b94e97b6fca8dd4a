/* harness_model.c: lab 11's model mode: a machine and a plan read from the case, the
 * student's AllReduce time, step time and plan for it, one row per case.
 */
#include <stdlib.h>
#include <string.h>

#include "lab11_harness.h"

/* "v" or "v1,v2,..." into n values (one value: all n the same). */
static cl_result values(cl_case *c, const char *key, double *out, int n)
{
    const char *text;
    CL_CHECK(cl_case_str(c, key, &text));
    int k = 0;
    for (const char *p = text; *p && k < n; k++) {
        char *end;
        out[k] = strtod(p, &end);
        if (end == p || (*end && *end != ',')) {
            cl_set_error("%s: expected numbers separated by commas at '%.20s'", key, p);
            return CL_ERR_INVALID;
        }
        p = *end ? end + 1 : end;
    }
    if (k == 1)
        for (int i = 1; i < n; i++)
            out[i] = out[0];
    else if (k != n) {
        cl_set_error("%s: %d values for %d layers", key, k, n);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

cl_result model_case(cl_case *c)
{
    model_args a;
    long long n;
    double v;
    memset(&a, 0, sizeof a);
    CL_CHECK(cl_case_int(c, "layers", &n));
    if (n < 1 || n > LAB11_MAX_LAYERS) {
        cl_set_error("layers=%lld (1 to %d)", n, LAB11_MAX_LAYERS);
        return CL_ERR_INVALID;
    }
    a.m.layers = (int)n;
    CL_CHECK(values(c, "layer_s", a.m.layer_s, a.m.layers));
    CL_CHECK(values(c, "layer_bytes", a.m.layer_bytes, a.m.layers));
    CL_CHECK(cl_case_int(c, "ranks", &n));
    a.m.ranks = (int)n;
    CL_CHECK(cl_case_int(c, "sms", &n));
    a.m.sms = (int)n;
    CL_CHECK(cl_case_int(c, "max_channels", &n));
    a.m.max_channels = (int)n;
    CL_CHECK(cl_case_num(c, "alpha_s", &a.m.alpha_s));
    CL_CHECK(cl_case_num(c, "link_gbps", &v));
    a.m.link_Bps = v * 1e9;
    CL_CHECK(cl_case_num(c, "slot_bytes", &a.m.slot_bytes));
    CL_CHECK(cl_case_int(c, "channels", &n));
    a.p.channels = a.channels = (int)n;
    CL_CHECK(cl_case_num(c, "bucket_bytes", &a.p.bucket_bytes));
    CL_CHECK(cl_case_int(c, "parts", &n));
    a.p.parts = (int)n;
    CL_CHECK(cl_case_num(c, "bytes", &a.bytes));
    cl_result rc = cl_case_call(c, "model", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    cl_col_num(row, "allreduce_s", a.allreduce_s, "%.9g");
    cl_col_num(row, "step_s", a.step_s, "%.9g");
    cl_col_str(row, "plan_status", cl_result_str((cl_result)a.plan_status));
    cl_col_int(row, "plan_channels", a.plan.channels);
    cl_col_num(row, "plan_bucket_bytes", a.plan.bucket_bytes, "%.9g");
    cl_col_int(row, "plan_parts", a.plan.parts);
    return rc;
}
