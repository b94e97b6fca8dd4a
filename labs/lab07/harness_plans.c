/* harness_plans.c: lab 07's plan, reference and cost modes: the student's plan for a case, the
 * index mapping's best layout and the harness's own best plan, and the cost of a plan given on
 * the command line, each costed by the model (harness_model.c) and reported in the same columns.
 */
#include <stdio.h>
#include <string.h>

#include "lab07_harness.h"

/* --- the report ------------------------------------------------------------------------------- */

static void col_mapping(cl_row *r, const char *key, const int *gpu, int n)
{
    char text[LAB07_MAX_RANKS * 4 + 1] = "";
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%s%d", i ? "," : "", gpu[i]);
    cl_col_str(r, key, text);
}

/* A plan's launch line (layout, order, CUDA_VISIBLE_DEVICES of each node) in a row. */
static void col_launch(cl_row *r, const char *prefix, const cl_sim_train_plan *p)
{
    char key[48], text[LAB07_MAX_NODES * (LAB07_VISIBLE_LEN + 1)] = "";
    int G = current_case.k.node.ngpus;
    size_t len = 0;
    snprintf(key, sizeof key, "%slayout", prefix);
    snprintf(text, sizeof text, "%d,%d,%d", p->tp, p->pp, p->dp);
    cl_col_str(r, key, text);
    snprintf(key, sizeof key, "%sorder", prefix);
    cl_col_str(r, key, p->order == CL_SIM_ORDER_TP_PP_DP ? "tp-pp-dp" : "tp-dp-pp");
    text[0] = '\0';
    for (int n = 0; n < current_case.k.nodes; n++)
        for (int i = 0; i < G; i++)
            len += (size_t)snprintf(text + len, sizeof text - len, "%s%d",
                                    i   ? ","
                                    : n ? ";"
                                        : "",
                                    p->gpu_of_rank[n * G + i] % G);
    snprintf(key, sizeof key, "%svisible", prefix);
    cl_col_str(r, key, text);
}

static void col_cost(cl_row *r, const char *prefix, const cl_sim_train_cost *c)
{
    char key[48];
#define NUM(name, value, fmt)                                                                      \
    do {                                                                                           \
        snprintf(key, sizeof key, "%s%s", prefix, name);                                           \
        cl_col_num(r, key, value, fmt);                                                            \
    } while (0)
    NUM("step_s", c->step_s, "%.4f");
    NUM("overhead_s", c->step_s - c->compute_s, "%.4f");
    if (prefix[0])
        return;
    NUM("compute_s", c->compute_s, "%.4f");
    NUM("bubble_s", c->bubble_s, "%.4f");
    NUM("tp_s", c->tp_s, "%.4f");
    NUM("dp_s", c->dp_s, "%.4f");
    NUM("pp_s", c->pp_s, "%.4f");
    NUM("tp_busbw", c->tp_busbw, "%.1f");
    NUM("dp_busbw", c->dp_busbw, "%.1f");
    NUM("pp_gbps", c->pp_gbps, "%.1f");
    NUM("mem_gb", c->mem_bytes / 1e9, "%.1f");
#undef NUM
    cl_col_int(r, "fits", c->fits);
}

/* --- modes ------------------------------------------------------------------------------------ */

cl_result plan_case(cl_case *c)
{
    static plan_args a;
    CL_CHECK(load_case(c));
    memset(&a, 0, sizeof a);
    a.k = current_case.k;
    cl_result rc = cl_case_call(c, "plan", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "calls", current_case.calls);
    if (rc != CL_OK)
        return rc;
    lab07_plan *p = &a.plan;
    p->p2p_level[sizeof p->p2p_level - 1] = '\0';
    cl_col_str(row, "p2p_level", p->p2p_level);
    cl_sim_train_plan sp;
    cl_sim_train_cost cost;
    int level;
    cl_result pr = parse_plan(p, &sp, &level);
    if (pr == CL_OK)
        pr = cost_of(&sp, level, &cost);
    cl_col_str(row, "plan_error", pr == CL_OK ? "" : cl_last_error());
    cl_clear_error();
    if (pr != CL_OK)
        return CL_OK; /* the student's function returned; the grader reads plan_error */
    col_launch(row, "", &sp);
    col_mapping(row, "gpu_of_rank", sp.gpu_of_rank, sp.tp * sp.pp * sp.dp);
    col_cost(row, "", &cost);
    return CL_OK;
}

cl_result reference_case(cl_case *c)
{
    CL_CHECK(load_case(c));
    cl_sim_train *t;
    CL_CHECK(cl_sim_train_levels_model(&current_case.levels, CL_SIM_PATH_PXB, &t));
    cl_sim_train_plan only = {0}, best, naive, p;
    cl_sim_train_cost bc, nc, pc;
    const char *layout;
    int restricted = cl_case_str(c, "layout", &layout) == CL_OK;
    double naive_only; /* a relabelled copy: its best is its base's, relabelled */
    cl_clear_error();
    CL_CHECK(cl_case_num_or(c, "naive_only", 0, &naive_only));
    if (restricted && sscanf(layout, "%d,%d,%d", &only.tp, &only.pp, &only.dp) != 3) {
        cl_set_error("layout=%s: expected TP,PP,DP", layout);
        return CL_ERR_INVALID;
    }
    /* The index mapping (CUDA_VISIBLE_DEVICES unset) in Megatron's default rank order,
     * with its best layout: what a user gets who chooses only the layout. */
    int N = current_case.k.node.ngpus * current_case.k.nodes, have = 0;
    for (int tp = 1; tp <= N; tp++)
        for (int pp = 1; tp * pp <= N && N % tp == 0; pp++) {
            if (N % (tp * pp))
                continue;
            p = (cl_sim_train_plan){.tp = tp, .pp = pp, .dp = N / (tp * pp)};
            if (restricted && (only.tp != p.tp || only.pp != p.pp || only.dp != p.dp))
                continue;
            for (int r = 0; r < N; r++)
                p.gpu_of_rank[r] = r;
            if (cl_sim_train_cost_of(t, &current_case.model, &p, &pc) != CL_OK) {
                cl_clear_error();
                continue;
            }
            if (pc.fits && (!have || pc.step_s < nc.step_s)) {
                naive = p, nc = pc;
                have = 1;
            }
        }
    if (!naive_only)
        CL_CHECK(cl_sim_train_best(t, &current_case.model, restricted ? &only : NULL, &best, &bc));
    cl_row *row = cl_case_row(c);
    if (!naive_only) {
        col_launch(row, "best_", &best);
        col_mapping(row, "best_gpu_of_rank", best.gpu_of_rank, N);
        col_cost(row, "best_", &bc);
    }
    col_launch(row, "naive_", &naive);
    col_cost(row, "naive_", &nc);
    cl_col_int(row, "evaluations", cl_sim_train_evaluations(t));
    /* The node as read (commlab topo --json's form), for relabelled copies. */
    const char *out;
    if (cl_case_str(c, "topo_json", &out) == CL_OK) {
        FILE *f = fopen(out, "w");
        cl_result wr = f ? cl_topo_write_json(&current_case.levels.topo, f) : CL_ERR_IO;
        if ((f && fclose(f) != 0) || wr != CL_OK) {
            cl_set_error("cannot write %s", out);
            return CL_ERR_IO;
        }
    }
    cl_clear_error();
    return CL_OK;
}

cl_result cost_case(cl_case *c)
{
    CL_CHECK(load_case(c));
    lab07_plan p;
    memset(&p, 0, sizeof p);
    double tp, pp, dp;
    const char *order = "tp-dp-pp", *vis, *lv = "";
    CL_CHECK(cl_case_num(c, "tp", &tp));
    CL_CHECK(cl_case_num(c, "pp", &pp));
    CL_CHECK(cl_case_num(c, "dp", &dp));
    CL_CHECK(cl_case_str(c, "visible", &vis));
    if (cl_case_str(c, "order", &order) != CL_OK)
        order = "tp-dp-pp";
    if (cl_case_str(c, "p2p", &lv) != CL_OK)
        lv = "";
    cl_clear_error();
    p.tp = (int)tp, p.pp = (int)pp, p.dp = (int)dp;
    p.tp_pp_dp = strcmp(order, "tp-pp-dp") == 0;
    if (!p.tp_pp_dp && strcmp(order, "tp-dp-pp") != 0) {
        cl_set_error("order=%s: tp-dp-pp or tp-pp-dp", order);
        return CL_ERR_INVALID;
    }
    snprintf(p.p2p_level, sizeof p.p2p_level, "%s", lv);
    char text[LAB07_MAX_NODES * (LAB07_VISIBLE_LEN + 1)];
    snprintf(text, sizeof text, "%s", vis);
    int n = 0;
    for (char *s = strtok(text, ";"); s && n < LAB07_MAX_NODES; s = strtok(NULL, ";"))
        snprintf(p.visible[n++], LAB07_VISIBLE_LEN, "%s", s);
    cl_sim_train_plan sp;
    cl_sim_train_cost cost;
    int level;
    CL_CHECK(parse_plan(&p, &sp, &level));
    CL_CHECK(cost_of(&sp, level, &cost));
    cl_row *row = cl_case_row(c);
    col_launch(row, "", &sp);
    col_cost(row, "", &cost);
    return CL_OK;
}
