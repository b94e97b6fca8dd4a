/* harness_modes.c: lab 29's modes: predict (the student's step of a plan against the
 * harness's), plan (the student's plan, costed), reference (the harness's search for the
 * best plan) and cost (the harness's step of any plan).
 */
#include <stdio.h>
#include <string.h>

#include "lab29_harness.h"

/* --- modes --------------------------------------------------------------------------------- */

cl_result predict_case(cl_case *c)
{
    static predict_args a;
    CL_CHECK(load_case(c));
    memset(&a, 0, sizeof a);
    a.k = current_case.k;
    CL_CHECK(plan_from_case(c, &a.plan));
    lab29_step want;
    memset(&want, 0, sizeof want);
    /* A plan the whole job cannot run (tp, batch) still goes to the student, with a probe
     * of chapter 1's baseline: the student's function must refuse it. */
    cl_sim_train_plan sp;
    int level, valid = parse_plan(&a.plan, &sp, &level) == CL_OK;
    cl_clear_error();
    if (valid) {
        CL_CHECK(probe_of(&sp, level, &a.probe));
        full_step(a.plan.tp, &a.probe, &want);
    } else {
        a.probe = (lab29_probe){
            .tp_busbw = 80, .tp_alpha_s = ALPHAS[0], .dp_busbw = 6, .dp_alpha_s = ALPHAS[2]};
    }
    cl_result rc = cl_case_call(c, "predict", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "valid", valid);
    if (rc == CL_OK)
        col_step(row, "", &a.step, NULL);
    if (valid)
        col_step(row, "want_", &want, &a.probe);
    return rc;
}

cl_result plan_case(cl_case *c)
{
    static choose_args a;
    CL_CHECK(load_case(c));
    memset(&a, 0, sizeof a);
    a.k = current_case.k;
    cl_result rc = cl_case_call(c, "choose", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "calls", current_case.calls);
    CL_CHECK(baseline(row));
    if (rc != CL_OK)
        return rc;
    a.plan.visible[LAB29_VISIBLE_LEN - 1] = '\0';
    a.plan.p2p_level[sizeof a.plan.p2p_level - 1] = '\0';
    col_plan(row, "", &a.plan);
    lab29_probe pr;
    lab29_step s;
    cl_result pr_rc = cost_of(&a.plan, &pr, &s);
    cl_col_str(row, "plan_error", pr_rc == CL_OK ? "" : cl_last_error());
    cl_clear_error();
    if (pr_rc == CL_OK)
        col_step(row, "", &s, &pr);
    return CL_OK; /* the student's function returned; the grader reads plan_error */
}

cl_result reference_case(cl_case *c)
{
    CL_CHECK(load_case(c));
    double only = 0;
    CL_CHECK(cl_case_num_or(c, "only_tp", 0, &only));
    cl_sim_train *t;
    CL_CHECK(cl_sim_train_levels_model(&current_case.levels, CL_SIM_PATH_PXB, &t));
    lab29_plan best = {0};
    lab29_step bs = {0};
    lab29_probe bp = {0};
    int have = 0;
    for (int tp = 1; tp <= LAB29_GPUS; tp++) {
        if (LAB29_GPUS % tp || (only > 0 && tp != (int)only))
            continue;
        lab29_plan p = {.tp = tp, .visible = "0,1,2,3,4,5,6,7"};
        cl_sim_train_plan sp, found;
        cl_sim_train_cost fc;
        lab29_step s;
        lab29_probe pr;
        int level;
        if (parse_plan(&p, &sp, &level) != CL_OK) {
            cl_clear_error();
            continue;
        }
        full_step(tp, &(lab29_probe){0}, &s);
        if (!s.fits)
            continue;
        /* The search weighs the DP gradients as the whole job's ring does. */
        long dp = (long)current_case.k.job.nodes * LAB29_GPUS / tp;
        double w = sp.dp > 1 ? ((double)(dp - 1) / dp) / ((double)(sp.dp - 1) / sp.dp) : 1;
        cl_sim_train_model m = slice_model(&sp, w);
        CL_CHECK(cl_sim_train_best(t, &m, &sp, &found, &fc));
        for (int n = 0; n < SLICE; n++) { /* each server's mapping, on every server */
            size_t len = 0;
            for (int i = 0; i < LAB29_GPUS; i++)
                len +=
                    (size_t)snprintf(p.visible + len, sizeof p.visible - len, "%s%d", i ? "," : "",
                                     found.gpu_of_rank[n * LAB29_GPUS + i] % LAB29_GPUS);
            CL_CHECK(cost_of(&p, &pr, &s));
            if (s.fits && (!have || s.step_s < bs.step_s))
                best = p, bs = s, bp = pr, have = 1;
        }
    }
    if (!have) {
        cl_set_error("no layout fits in a GPU's memory");
        return CL_ERR_INVALID;
    }
    cl_row *row = cl_case_row(c);
    col_plan(row, "best_", &best);
    col_step(row, "best_", &bs, &bp);
    CL_CHECK(baseline(row));
    return CL_OK;
}

cl_result cost_case(cl_case *c)
{
    CL_CHECK(load_case(c));
    lab29_plan p;
    lab29_probe pr;
    lab29_step s;
    CL_CHECK(plan_from_case(c, &p));
    CL_CHECK(cost_of(&p, &pr, &s));
    cl_row *row = cl_case_row(c);
    col_plan(row, "", &p);
    col_step(row, "", &s, &pr);
    CL_CHECK(baseline(row));
    return CL_OK;
}
