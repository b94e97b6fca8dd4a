/* harness_plan.c: lab 21's plan mode. The job (the model, and the cluster of a simulated
 * system with its GPUs' facts) is built from the options; the student's plan (or --plan's)
 * is checked to be the same on every rank, its communicators built with the student's
 * lab21_init_parallel and compared with Megatron-LM's, and its step simulated on them
 * (harness_step.c); the best plan's step is found by the search and reported beside it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab21_harness.h"
#include "sim/sim_system.h"

/* --- plan: the decision -------------------------------------------------------------------- */

/* One GPU's dense bf16 peak (datasheets) and memory; the step assumes half the peak is
 * achieved (Narayanan et al., SC 2021: 52% of peak on 3072 A100s). */
static const struct gpu_facts {
    const char *system;
    double peak_tflops, mem_GB;
} gpus[] = {{"dgx-a100", 312, 80}, /* NVIDIA A100 Tensor Core GPU datasheet: SXM4 80GB */
            {"dgx-h100", 989, 80}, /* NVIDIA H100 Tensor Core GPU datasheet: H100 SXM */
            {NULL, 0, 0}};
#define ACHIEVED 0.5

static cl_result opt_int(cl_run *run, const char *name, int *out)
{
    char *end;
    const char *v = cl_opt(run, name);
    long x = strtol(v, &end, 10);
    if (!*v || *end || x < 1 || x > (1L << 30)) {
        cl_set_error("--%s %s: expected a positive whole number", name, v);
        return CL_ERR_INVALID;
    }
    *out = (int)x;
    return CL_OK;
}

static cl_result build_job(cl_run *run, cl_comm *world, lab21_job *j)
{
    cl_sim_system sys;
    memset(j, 0, sizeof *j);
    const char *name = cl_run_opts(run)->system;
    CL_CHECK(cl_sim_system_load(name ? name : "dgx-a100", &sys));
    lab21_model *m = &j->m;
    CL_CHECK(opt_int(run, "layers", &m->layers));
    CL_CHECK(opt_int(run, "hidden", &m->hidden));
    CL_CHECK(opt_int(run, "heads", &m->heads));
    CL_CHECK(opt_int(run, "seq", &m->seq));
    CL_CHECK(opt_int(run, "vocab", &m->vocab));
    CL_CHECK(opt_int(run, "batch", &m->global_batch));
    CL_CHECK(opt_int(run, "micro", &m->micro_batch));
    lab21_cluster *k = &j->c;
    int n = cl_comm_size(world);
    if (sys.node != CL_SIM_NODE_NVSWITCH || n % sys.gpus_per_node) {
        cl_set_error("plan needs an NVSwitch system and whole nodes (%d ranks on %s, %d GPUs "
                     "per node)",
                     n, sys.name, sys.gpus_per_node);
        return CL_ERR_UNSUPPORTED;
    }
    k->nodes = n / sys.gpus_per_node;
    k->gpus_per_node = sys.gpus_per_node;
    k->nics_per_node = sys.nics_per_node;
    k->nvlink_GBps = sys.nvlinks_per_gpu * sys.nvlink_gbps;
    k->nic_GBps = sys.nic_eff_gbps;
    k->hbm_GBps = sys.hbm_gbps;
    k->nvl_lat_us = sys.lat_ring_nvl[CL_PROTO_SIMPLE] + 2 * sys.nvswitch_hop_us;
    k->net_lat_us = sys.lat_ring_net[CL_PROTO_SIMPLE] + 2 * sys.fabric_hop_us;
    const struct gpu_facts *g = gpus;
    while (g->system && strcmp(g->system, sys.name) != 0)
        g++;
    const char *tf = cl_opt(run, "tflops"), *mem = cl_opt(run, "mem-gb");
    k->tflops = tf ? atof(tf) : g->peak_tflops * ACHIEVED;
    k->mem_GB = mem ? atof(mem) : g->mem_GB;
    if (!(k->tflops > 0) || !(k->mem_GB > 0)) {
        cl_set_error("no GPU facts for %s: give --tflops and --mem-gb", sys.name);
        return CL_ERR_UNSUPPORTED;
    }
    return CL_OK;
}

static void report_job(cl_run *run, const lab21_job *j)
{
    cl_report_int(run, "nodes", j->c.nodes);
    cl_report_int(run, "gpus_per_node", j->c.gpus_per_node);
    cl_report_num(run, "nvlink_GBps", j->c.nvlink_GBps);
    cl_report_num(run, "nic_GBps", j->c.nic_GBps);
    cl_report_num(run, "tflops", j->c.tflops);
    cl_report_num(run, "mem_GB", j->c.mem_GB);
    cl_report_int(run, "layers", j->m.layers);
    cl_report_int(run, "hidden", j->m.hidden);
    cl_report_int(run, "heads", j->m.heads);
    cl_report_int(run, "seq", j->m.seq);
    cl_report_int(run, "vocab", j->m.vocab);
    cl_report_int(run, "global_batch", j->m.global_batch);
    cl_report_int(run, "micro_batch", j->m.micro_batch);
}

static void cost_cols(cl_row *row, const char *prefix, const lab21_plan *p, const lab21_cost *c)
{
    char key[48], plan[96];
    snprintf(plan, sizeof plan, "tp=%d cp=%d pp=%d dp=%d order=%s", p->tp, p->cp, p->pp, p->dp,
             p->order);
#define COL(name, v)                                                                               \
    snprintf(key, sizeof key, "%s%s", prefix, name), cl_col_num(row, key, v, "%.6g")
    snprintf(key, sizeof key, "%splan", prefix);
    cl_col_str(row, key, plan);
    COL("step_s", c->step_s);
    COL("layer_s", c->layer_s);
    COL("tp_s", c->tp_s);
    COL("cp_s", c->cp_s);
    COL("pp_s", c->pp_s);
    COL("dp_s", c->dp_s);
    COL("mem_GB", c->mem_GB);
#undef COL
}

/* Every rank must have the same plan. */
static cl_result same_plan(cl_comm *world, const lab21_plan *p, int *same)
{
    uint64_t h = cl_data_hash_bytes(p, sizeof *p);
    int64_t v[2] = {(int64_t)(h >> 1), -(int64_t)(h >> 1)};
    CL_CHECK(cl_agree(world, CL_MAX, v, 2));
    *same = v[0] == -v[1];
    return CL_OK;
}

/* The student's plan on the student's communicators: its cost (c->valid 0 with
 * the reason when it is not a plan, or its groups are not Megatron-LM's). */
static cl_result student_groups(cl_comm *world, const lab21_parallel *par, check_mem *m,
                                lab21_cost *c)
{
    CL_CHECK(lab21_ref_layout(cl_comm_size(world), par, &m->ref));
    cl_result status;
    char why[320];
    CL_CHECK(student_init(world, par, &status, why, sizeof why));
    if (status != CL_OK) {
        snprintf(c->why, sizeof c->why, "your lab21_init_parallel failed: %.100s", why);
        c->valid = 0;
        return CL_OK;
    }
    int kinds[4] = {LAB21_TP, LAB21_CP, LAB21_PP, LAB21_DP_CP}, bad = 0;
    for (int i = 0; i < 4; i++) {
        CL_CHECK(gather_kind(world, kinds[i], m->first, m->place));
        bad += mismatches(&m->ref, kinds[i], m->first, m->place, cl_comm_size(world));
    }
    if (bad) {
        snprintf(c->why, sizeof c->why, "%d rank(s) are in groups that are not Megatron-LM's", bad);
        c->valid = 0;
    }
    return CL_OK;
}

static cl_result student_step(cl_comm *world, const lab21_job *j, const lab21_plan *p, void *buf,
                              lab21_cost *c)
{
    lab21_cost_model(j, p, c);
    if (!c->valid)
        return CL_OK;
    lab21_parallel par = {.tp = p->tp, .cp = p->cp, .pp = p->pp, .ep = 1, .etp = p->tp};
    memcpy(par.order, p->order, sizeof par.order);
    check_mem *m = malloc(sizeof *m);
    if (!m)
        return CL_ERR_NOMEM;
    cl_result rc = student_groups(world, &par, m, c);
    free(m);
    CL_CHECK(rc);
    if (!c->valid)
        return CL_OK;
    int w = cl_comm_rank(world);
    lab21_step_comms s = {seen[w].comm[LAB21_TP], seen[w].comm[LAB21_CP], seen[w].comm[LAB21_PP],
                          seen[w].comm[LAB21_DP_CP]};
    return lab21_simulate(world, j, p, &s, buf, c);
}

/* A plan given with --plan, on the harness's own communicators. */
static cl_result given_step(cl_comm *world, const lab21_job *j, const lab21_plan *p, void *buf,
                            lab21_cost *c)
{
    lab21_cost_model(j, p, c);
    if (!c->valid)
        return CL_OK;
    static lab21_layout ref; /* read before any split lets another rank reuse it */
    lab21_parallel par = {.tp = p->tp, .cp = p->cp, .pp = p->pp, .ep = 1, .etp = p->tp};
    memcpy(par.order, p->order, sizeof par.order);
    CL_CHECK(lab21_ref_layout(cl_comm_size(world), &par, &ref));
    int r = cl_comm_rank(world), kinds[4] = {LAB21_TP, LAB21_CP, LAB21_PP, LAB21_DP_CP};
    int size[4] = {p->tp, p->cp, p->pp, p->dp * p->cp}, color[4], key[4];
    for (int i = 0; i < 4; i++)
        color[i] = ref.color[kinds[i]][r], key[i] = ref.key[kinds[i]][r];
    cl_comm *cm[4] = {NULL, NULL, NULL, NULL};
    cl_result rc = CL_OK;
    for (int i = 0; i < 4 && rc == CL_OK; i++)
        rc = cl_comm_split(world, size[i] > 1 ? color[i] : -1, key[i], &cm[i]);
    lab21_step_comms s = {cm[0], cm[1], cm[2], cm[3]};
    if (rc == CL_OK)
        rc = lab21_simulate(world, j, p, &s, buf, c);
    for (int i = 0; i < 4; i++)
        if (cm[i])
            cl_comm_free(cm[i]);
    return rc;
}

cl_result plan_mode(cl_run *run, cl_comm *world)
{
    plan_args a;
    lab21_cost mine, best_cost;
    lab21_plan best;
    void *buf = NULL;
    cl_result rc = CL_OK;
    memset(&a, 0, sizeof a);
    memset(&mine, 0, sizeof mine);
    CL_CHECK(build_job(run, world, &a.j));
    report_job(run, &a.j);
    cl_row *row = cl_row_begin(run, world);
    const char *given = cl_opt(run, "plan");
    cl_call_result res = {.status = CL_OK};
    if (given) {
        snprintf(a.plan.order, sizeof a.plan.order, "tp-cp-ep-dp-pp");
        a.plan.tp = a.plan.cp = a.plan.pp = 1, a.plan.dp = 0;
        CL_CHECK(parse_config(given, NULL, &a.plan));
        if (a.plan.dp == 0 && a.plan.tp * a.plan.cp * a.plan.pp > 0)
            a.plan.dp = cl_comm_size(world) / (a.plan.tp * a.plan.cp * a.plan.pp);
    } else
        CL_CHECK(cl_student_run(world, "plan", &a, sizeof a, 0, &res));
    a.plan.order[LAB21_ORDER_LEN - 1] = '\0';
    int same = 1;
    CL_CHECK(same_plan(world, &a.plan, &same));
    CL_TRY(cl_mem_alloc(world, lab21_step_bytes(&a.j), &buf));
    if (res.status != CL_OK) {
        snprintf(mine.why, sizeof mine.why, "your lab21_plan_job failed: %.100s", res.error);
    } else if (!same) {
        snprintf(mine.why, sizeof mine.why, "your plan differs between ranks");
    } else if (given) {
        CL_TRY(given_step(world, &a.j, &a.plan, buf, &mine));
    } else {
        CL_TRY(student_step(world, &a.j, &a.plan, buf, &mine));
    }
    cl_col_str(row, "status", mine.valid ? "valid" : "invalid");
    if (!mine.valid)
        cl_col_str(row, "why", mine.why);
    cost_cols(row, "", &a.plan, &mine);
    cl_col_num(row, "micro_batches", mine.micro_batches, "%g");
    if (strcmp(cl_opt(run, "search"), "no") != 0) {
        int count;
        CL_TRY(lab21_search(world, &a.j, buf, &best, &best_cost, &count));
        cost_cols(row, "best_", &best, &best_cost);
        cl_col_int(row, "plans_tried", count);
    }
    cl_row_end(row);
done:
    if (buf)
        cl_mem_free(world, buf);
    return rc;
}
