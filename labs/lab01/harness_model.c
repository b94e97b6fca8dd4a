/* harness_model.c: lab 01's cases of the alpha-beta model: the student's fit of given
 * points, the ring AllReduce time, and a training step's estimate for a given layout (and
 * for the layout the student chooses), each case's inputs read and its outputs reported.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lab01_harness.h"

/* --- the model's cases ------------------------------------------------------------------ */

cl_result fit_case(cl_case *c)
{
    const char *text;
    CL_CHECK(cl_case_str(c, "points", &text));
    fit_args a = {0};
    for (const char *p = text; *p && a.n < MAX_POINTS; a.n++) {
        char *end;
        a.bytes[a.n] = strtod(p, &end);
        if (*end != ':') {
            cl_set_error("points: expected BYTES:SECONDS,... at '%s'", p);
            return CL_ERR_INVALID;
        }
        a.seconds[a.n] = strtod(end + 1, &end);
        if (*end != ',' && *end != '\0') {
            cl_set_error("points: expected BYTES:SECONDS,... at '%s'", end);
            return CL_ERR_INVALID;
        }
        p = *end == ',' ? end + 1 : end;
    }
    cl_result rc = cl_case_call(c, "fit", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    cl_col_num(row, "alpha_s", a.alpha_s, "%.6g");
    cl_col_num(row, "beta_s_per_byte", a.beta_s_per_byte, "%.6g");
    return rc;
}

cl_result ring_case(cl_case *c)
{
    ring_args a;
    memset(&a, 0, sizeof a);
    long long p;
    CL_CHECK(cl_case_int(c, "p", &p));
    CL_CHECK(cl_case_num(c, "bytes", &a.bytes));
    CL_CHECK(cl_case_num(c, "alpha_s", &a.link.alpha_s));
    CL_CHECK(cl_case_num(c, "bandwidth_Bps", &a.link.bandwidth_Bps));
    if (p < 1 || p > 1 << 20) {
        cl_set_error("p=%lld is not a rank count", p);
        return CL_ERR_INVALID;
    }
    a.p = (int)p;
    cl_result rc = cl_case_call(c, "ring", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    cl_col_num(row, "alpha_s", a.out.alpha_s, "%.6g");
    cl_col_num(row, "beta_s", a.out.beta_s, "%.6g");
    cl_col_num(row, "time_s", a.out.alpha_s + a.out.beta_s, "%.6g");
    return rc;
}

/* The parameters of a step: name, where it goes, and whether it is an int. */
#define W(f, i)                                                                                    \
    {                                                                                              \
#f, offsetof(step_args, w.f), i, 0                                                         \
    }
#define C(k, f, i)                                                                                 \
    {                                                                                              \
        k, offsetof(step_args, c.f), i, 0                                                          \
    }
#define L(f)                                                                                       \
    {                                                                                              \
#f, offsetof(step_args, l.f), 1, 1                                                         \
    }
static const struct {
    const char *key;
    size_t off;
    int is_int, layout; /* layout: given to "estimate", chosen by "plan" */
} params[] = {
    W(params, 0),
    W(bytes_per_element, 0),
    W(layers, 1),
    W(hidden, 1),
    W(seq_len, 1),
    W(global_batch, 1),
    W(micro_batch, 1),
    W(gpu_flops, 0),
    C("nodes", nodes, 1),
    C("gpus_per_node", gpus_per_node, 1),
    C("mem_bytes", mem_bytes, 0),
    C("intra_alpha_s", intra.alpha_s, 0),
    C("intra_bandwidth_Bps", intra.bandwidth_Bps, 0),
    C("inter_alpha_s", inter.alpha_s, 0),
    C("inter_bandwidth_Bps", inter.bandwidth_Bps, 0),
    L(tp),
    L(pp),
    L(dp),
};

static int power_of_two(long long v) { return v > 0 && (v & (v - 1)) == 0; }

/* Read the case into a (the layout too when with_layout); a reason for bad input. */
static cl_result read_step(cl_case *c, step_args *a, int with_layout)
{
    memset(a, 0, sizeof *a);
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
        if (params[i].layout && !with_layout)
            continue;
        char *dst = (char *)a + params[i].off;
        if (params[i].is_int) {
            long long v;
            CL_CHECK(cl_case_int(c, params[i].key, &v));
            if (v < 1 || v > 1 << 24) {
                cl_set_error("%s=%lld is out of range", params[i].key, v);
                return CL_ERR_INVALID;
            }
            *(int *)dst = (int)v;
        } else {
            double v;
            CL_CHECK(cl_case_num(c, params[i].key, &v));
            if (!(v > 0)) {
                cl_set_error("%s=%g must be positive", params[i].key, v);
                return CL_ERR_INVALID;
            }
            *(double *)dst = v;
        }
    }
    if (!power_of_two(a->c.nodes) || !power_of_two(a->c.gpus_per_node)) {
        cl_set_error("nodes and gpus_per_node must be powers of two");
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

static void step_columns(cl_row *row, const step_args *a)
{
    const lab01_estimate *e = &a->out;
    cl_col_int(row, "m", e->micro_batches);
    cl_col_num(row, "compute_s", e->compute_s, "%.4g");
    cl_col_num(row, "bubble_s", e->bubble_s, "%.4g");
    cl_col_num(row, "tp_alpha_s", e->tp.alpha_s, "%.4g");
    cl_col_num(row, "tp_beta_s", e->tp.beta_s, "%.4g");
    cl_col_num(row, "dp_alpha_s", e->dp.alpha_s, "%.4g");
    cl_col_num(row, "dp_beta_s", e->dp.beta_s, "%.4g");
    cl_col_num(row, "pp_alpha_s", e->pp.alpha_s, "%.4g");
    cl_col_num(row, "pp_beta_s", e->pp.beta_s, "%.4g");
    cl_col_num(row, "comm_s", e->comm_s, "%.4g");
    cl_col_num(row, "step_s", e->step_s, "%.4g");
    cl_col_num(row, "share", e->share, "%.4f");
}

cl_result estimate_case(cl_case *c)
{
    step_args a;
    CL_CHECK(read_step(c, &a, 1));
    cl_result rc = cl_case_call(c, "estimate", &a, sizeof a);
    step_columns(cl_case_row(c), &a);
    return rc;
}

cl_result plan_case(cl_case *c)
{
    step_args a;
    CL_CHECK(read_step(c, &a, 0));
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "gpus", (long long)a.c.nodes * a.c.gpus_per_node);
    cl_result rc = cl_case_call(c, "plan", &a, sizeof a);
    cl_col_int(row, "tp", a.l.tp);
    cl_col_int(row, "pp", a.l.pp);
    cl_col_int(row, "dp", a.l.dp);
    step_columns(row, &a);
    return rc;
}
