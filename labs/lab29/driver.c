/* driver.c: lab 29's plug-in: chapter 1's 256-server case, simulated on two servers and
 * extrapolated to the whole job.
 *
 *   lab29 predict   CASE tp= visible= [p2p=]   the student's step of that plan, and the harness's
 *   lab29 plan      CASE                       the student's plan, its step and the baseline's
 *   lab29 reference CASE [only_tp=4]           the harness's best plan, and the baseline
 *   lab29 cost      CASE tp= visible= [p2p=]   the harness's step of any plan
 * CASE (every key optional; the defaults are chapter 1's job): topo= nodes= sm= nvlink= pci=
 * sys= net= mem_gib= tflops= params= layers= hidden= seq= micro_batch= global_batch= mfu=
 * budget=.
 *
 * The simulator (common/sim/sim_train.h: NCCL's channels of every group on the recorded
 * server, all groups of a kind at once, max-min sharing) runs on two servers joined by their
 * NICs; the whole job's step follows from its bandwidths and latencies by the handout's
 * formulas (full_step below), which the student writes too.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness.h"
#include "lab29_op.h"

typedef struct predict_args {
    lab29_case k;
    lab29_plan plan;
    lab29_probe probe;
    lab29_step step; /* out */
} predict_args;

typedef struct choose_args {
    lab29_case k;
    lab29_plan plan; /* out */
} choose_args;

#ifdef CL_STUDENT_SIDE

static cl_result predict(cl_comm *c, void *args)
{
    (void)c;
    predict_args *a = args;
    return lab29_predict(&a->k, &a->plan, &a->probe, &a->step);
}

static cl_result choose(cl_comm *c, void *args)
{
    choose_args *a = args;
    return lab29_choose(c, &a->k, &a->plan);
}

CL_STUDENT_ENTRIES({"predict", predict}, {"choose", choose});

#else

#include "sim/sim_launch.h"
#include "sim/sim_train_levels.h"

#define SLICE       2 /* servers the simulator runs */
#define DEFAULT_TOP "datasets/lab29/chapter1-hybrid-mesh-4nic.topo.txt"

static const double ALPHAS[] = {3.4e-6, 5.7e-6, 14.0e-6}; /* tuning.cc hwLat, Ring, Simple */

static struct {
    cl_sim_train_levels levels; /* two servers' models, by NCCL_P2P_LEVEL */
    lab29_case k;
    int calls;
} cur;

static cl_result load_case(cl_case *c)
{
    static const char *keys[] = {"nodes",       "sm",           "nvlink", "pci",    "sys",    "net",
                                 "mem_gib",     "tflops",       "params", "layers", "hidden", "seq",
                                 "micro_batch", "global_batch", "mfu",    "budget"};
    static const double fallback[] = {256,   70, 20,   12,   6, 12.5, 32,  125,
                                      6.7e9, 32, 4096, 2048, 1, 2048, 0.4, 100};
    double v[16];
    const char *path;
    if (cl_case_str(c, "topo", &path) != CL_OK) {
        cl_clear_error();
        path = DEFAULT_TOP;
    }
    for (int i = 0; i < 16; i++)
        CL_CHECK(cl_case_num_or(c, keys[i], fallback[i], &v[i]));
    if (v[0] < SLICE || v[0] > 16384 || v[9] < 1 || v[10] < 1 || v[11] < 1 || v[12] < 1 ||
        v[13] < 1 || !(v[8] > 0) || !(v[7] > 0) || !(v[14] > 0) || v[15] < 1) {
        cl_set_error("nodes=%g: %d to 16384 servers; sizes and batches at least 1, params, "
                     "tflops and mfu positive",
                     v[0], SLICE);
        return CL_ERR_INVALID;
    }
    cl_sim_topo_params params = {
        .nvlink_gbps = v[2], .pci_gbps = v[3], .sys_gbps = v[4], .nodes = SLICE, .net_gbps = v[5]};
    CL_CHECK(cl_sim_train_levels_load(&cur.levels, path, &params, (int)v[1]));
    const cl_topo *topo = &cur.levels.topo;
    lab29_case *k = &cur.k;
    memset(k, 0, sizeof *k);
    int G = 0, nics = 0;
    for (int d = 0; d < topo->ndevices; d++) {
        int gpu = topo->dev[d].kind == CL_DEV_GPU;
        if (gpu && d != G) {
            cl_set_error("%s: GPUs must come first", path);
            return CL_ERR_INVALID;
        }
        G += gpu;
        nics += topo->dev[d].kind == CL_DEV_NIC;
    }
    if (G != LAB29_GPUS || nics < 1 || nics > LAB29_MAX_NICS) {
        cl_set_error("%s: %d GPUs and %d NICs; this lab takes servers of %d GPUs with 1 to %d "
                     "NICs",
                     path, G, nics, LAB29_GPUS, LAB29_MAX_NICS);
        return CL_ERR_INVALID;
    }
    k->node.ngpus = G;
    k->node.nnics = nics;
    for (int a = 0; a < G; a++) {
        for (int b = 0; b < G; b++)
            k->node.gpu[a][b] = topo->link[a][b];
        for (int d = 0, n = 0; d < topo->ndevices; d++)
            if (topo->dev[d].kind == CL_DEV_NIC)
                k->node.nic[a][n++] = topo->link[a][d];
    }
    k->node.nvlink_gbps = v[2];
    k->node.pcie_gbps = v[3];
    k->node.sys_gbps = v[4];
    k->node.net_gbps = v[5];
    k->node.gpu_mem_bytes = v[6] * 1073741824.0;
    lab29_job *j = &k->job;
    *j = (lab29_job){.nodes = (int)v[0],
                     .params = v[8],
                     .layers = (int)v[9],
                     .hidden = (int)v[10],
                     .seq_len = (int)v[11],
                     .micro_batch = (int)v[12],
                     .global_batch = (int)v[13],
                     .bytes = 2};
    /* 6 x parameters x tokens of work (Kaplan et al. 2020), at mfu of the GPUs' peak */
    j->compute_s = 6.0 * j->params * j->global_batch * j->seq_len /
                   ((double)j->nodes * G * v[7] * 1e12 * v[14]);
    k->budget = (int)v[15];
    cur.calls = 0;
    return CL_OK;
}

/* --- plans ------------------------------------------------------------------------------- */

/* The ranks' GPUs on the two servers and the P2P level of plan p. */
static cl_result parse_plan(const lab29_plan *p, cl_sim_train_plan *out, int *level)
{
    const lab29_job *j = &cur.k.job;
    int G = LAB29_GPUS;
    memset(out, 0, sizeof *out);
    if (p->tp < 1 || p->tp > G || G % p->tp) {
        cl_set_error("tp=%d: a divisor of the %d GPUs of a server", p->tp, G);
        return CL_ERR_INVALID;
    }
    long dp = (long)j->nodes * G / p->tp;
    if (j->global_batch % (dp * j->micro_batch)) {
        cl_set_error("tp=%d: a global batch of %d sequences does not split into micro-batches "
                     "of %d over dp = %ld",
                     p->tp, j->global_batch, j->micro_batch, dp);
        return CL_ERR_INVALID;
    }
    *out = (cl_sim_train_plan){
        .tp = p->tp, .pp = 1, .dp = SLICE * G / p->tp, .order = CL_SIM_ORDER_TP_DP_PP};
    int gpu[LAB29_GPUS];
    CL_CHECK(cl_sim_launch_visible(p->visible, LAB29_VISIBLE_LEN, G, "", gpu));
    for (int n = 0; n < SLICE; n++) /* the same mapping on every server */
        for (int i = 0; i < G; i++)
            out->gpu_of_rank[n * G + i] = n * G + gpu[i];
    return cl_sim_launch_p2p_level(p->p2p_level, sizeof p->p2p_level, level);
}

/* The two servers' model of a plan: the whole job's micro-batches, and DP gradients weighted
 * by w (the reference search weighs them as the whole job's DP ring does). */
static cl_sim_train_model slice_model(const cl_sim_train_plan *p, double w)
{
    const lab29_job *j = &cur.k.job;
    int mb = j->global_batch / (j->nodes * LAB29_GPUS / p->tp * j->micro_batch);
    return (cl_sim_train_model){.params = j->params * w,
                                .layers = j->layers,
                                .hidden = j->hidden,
                                .seq_len = j->seq_len,
                                .micro_batch = j->micro_batch,
                                .global_batch = p->dp * j->micro_batch * mb,
                                .bytes = j->bytes,
                                .compute_s = j->compute_s,
                                .gpu_mem_bytes = INFINITY};
}

/* NCCL's latency of one ring step that makes time = 2(k-1) alpha + 2(k-1)/k S / busbw. */
static double alpha_from(double time, int k, double bytes, double busbw)
{
    if (k < 2 || !(busbw > 0))
        return 0;
    double a = (time - 2.0 * (k - 1) / k * bytes / (busbw * 1e9)) / (2.0 * (k - 1)), best = 0;
    for (size_t i = 0; i < sizeof ALPHAS / sizeof ALPHAS[0]; i++)
        if (i == 0 || fabs(ALPHAS[i] - a) < fabs(best - a))
            best = ALPHAS[i];
    return best;
}

static cl_result probe_of(const cl_sim_train_plan *sp, int level, lab29_probe *out)
{
    const lab29_job *j = &cur.k.job;
    cl_sim_train *t;
    cl_sim_train_cost c;
    CL_CHECK(cl_sim_train_levels_model(&cur.levels, level, &t));
    cl_sim_train_model m = slice_model(sp, 1);
    CL_CHECK(cl_sim_train_cost_of(t, &m, sp, &c));
    double act = (double)j->seq_len * j->micro_batch * j->hidden * j->bytes;
    double tp_time = sp->tp > 1 ? c.tp_s / (4.0 * j->layers * c.micro_batches) : 0;
    memset(out, 0, sizeof *out);
    out->tp_busbw = c.tp_busbw;
    out->tp_alpha_s = alpha_from(tp_time, sp->tp, act, c.tp_busbw);
    out->dp_busbw = c.dp_busbw;
    out->dp_alpha_s = alpha_from(c.dp_s, sp->dp, m.params * m.bytes / sp->tp, c.dp_busbw);
    return CL_OK;
}

static double ring_time(long k, double bytes, double alpha, double busbw)
{
    return k < 2 ? 0 : 2.0 * (k - 1) * alpha + 2.0 * (k - 1) / k * bytes / (busbw * 1e9);
}

/* The whole job's step of a plan with tensor parallelism tp from its probe (the handout's
 * table; lab29_predict() computes the same). */
static void full_step(int tp, const lab29_probe *pr, lab29_step *out)
{
    const lab29_job *j = &cur.k.job;
    long dp = (long)j->nodes * LAB29_GPUS / tp;
    int mb = (int)(j->global_batch / (dp * j->micro_batch));
    double act = (double)j->seq_len * j->micro_batch * j->hidden * j->bytes;
    memset(out, 0, sizeof *out);
    out->micro_batches = mb;
    out->compute_s = j->compute_s;
    out->tp_s = 4.0 * j->layers * mb * ring_time(tp, act, pr->tp_alpha_s, pr->tp_busbw);
    out->dp_s = ring_time(dp, j->params * j->bytes / tp, pr->dp_alpha_s, pr->dp_busbw);
    out->step_s = out->compute_s + out->tp_s + out->dp_s;
    out->mem_bytes = 16.0 * j->params / tp +
                     34.0 * j->seq_len * j->micro_batch * (double)j->hidden * j->layers / tp;
    out->fits = out->mem_bytes <= cur.k.node.gpu_mem_bytes;
}

static cl_result cost_of(const lab29_plan *p, lab29_probe *pr, lab29_step *out)
{
    cl_sim_train_plan sp;
    int level;
    CL_CHECK(parse_plan(p, &sp, &level));
    CL_CHECK(probe_of(&sp, level, pr));
    full_step(p->tp, pr, out);
    return CL_OK;
}

static cl_result lab_op(cl_run *run, cl_comm *comm, int code, void *args, size_t bytes)
{
    (void)run, (void)comm;
    if (code != LAB29_OP_PROBE || bytes != sizeof(lab29_probe_args)) {
        cl_set_error("lab29 has no operation %d of %zu bytes", code, bytes);
        return CL_ERR_INVALID;
    }
    lab29_probe_args *a = args;
    if (cur.calls >= cur.k.budget) {
        cl_set_error("lab29_probe_plan: this case's budget of %d calls is spent", cur.k.budget);
        return CL_ERR_INVALID;
    }
    cl_sim_train_plan sp;
    int level;
    CL_CHECK(parse_plan(&a->plan, &sp, &level));
    CL_CHECK(probe_of(&sp, level, &a->probe));
    cur.calls++;
    a->probe.calls_left = cur.k.budget - cur.calls;
    return CL_OK;
}

/* --- the report ---------------------------------------------------------------------------- */

static void col_plan(cl_row *r, const char *prefix, const lab29_plan *p)
{
    char key[48], vis[LAB29_VISIBLE_LEN + 1], lv[9];
    memcpy(vis, p->visible, LAB29_VISIBLE_LEN);
    vis[LAB29_VISIBLE_LEN] = '\0';
    memcpy(lv, p->p2p_level, 8);
    lv[8] = '\0';
    snprintf(key, sizeof key, "%stp", prefix);
    cl_col_int(r, key, p->tp);
    snprintf(key, sizeof key, "%sdp", prefix);
    cl_col_int(r, key, (long long)cur.k.job.nodes * LAB29_GPUS / (p->tp > 0 ? p->tp : 1));
    snprintf(key, sizeof key, "%svisible", prefix);
    cl_col_str(r, key, vis);
    snprintf(key, sizeof key, "%sp2p_level", prefix);
    cl_col_str(r, key, lv);
}

static void col_step(cl_row *r, const char *prefix, const lab29_step *s, const lab29_probe *pr)
{
    char key[48];
#define NUM(name, value, fmt)                                                                      \
    do {                                                                                           \
        snprintf(key, sizeof key, "%s%s", prefix, name);                                           \
        cl_col_num(r, key, value, fmt);                                                            \
    } while (0)
    NUM("step_s", s->step_s, "%.6g");
    NUM("overhead_s", s->step_s - s->compute_s, "%.6g");
    NUM("compute_s", s->compute_s, "%.6g");
    NUM("tp_s", s->tp_s, "%.6g");
    NUM("dp_s", s->dp_s, "%.6g");
    NUM("mem_gb", s->mem_bytes / 1e9, "%.6g");
    if (pr) {
        NUM("tp_busbw", pr->tp_busbw, "%.6g");
        NUM("tp_alpha_us", pr->tp_alpha_s * 1e6, "%.3g");
        NUM("dp_busbw", pr->dp_busbw, "%.6g");
        NUM("dp_alpha_us", pr->dp_alpha_s * 1e6, "%.3g");
    }
#undef NUM
    snprintf(key, sizeof key, "%sfits", prefix);
    cl_col_int(r, key, s->fits);
    snprintf(key, sizeof key, "%smicro_batches", prefix);
    cl_col_int(r, key, s->micro_batches);
}

/* The baseline of chapter 1: TP=8 over both NVLink domains, GPUs in index order, DP across. */
static cl_result baseline(cl_row *row)
{
    lab29_plan p = {.tp = LAB29_GPUS, .visible = "0,1,2,3,4,5,6,7"};
    lab29_probe pr;
    lab29_step s;
    CL_CHECK(cost_of(&p, &pr, &s));
    col_step(row, "base_", &s, &pr);
    return CL_OK;
}

static cl_result plan_from_case(cl_case *c, lab29_plan *p)
{
    double tp;
    const char *vis, *lv;
    memset(p, 0, sizeof *p);
    CL_CHECK(cl_case_num(c, "tp", &tp));
    CL_CHECK(cl_case_str(c, "visible", &vis));
    if (cl_case_str(c, "p2p", &lv) != CL_OK)
        lv = "";
    cl_clear_error();
    p->tp = (int)tp;
    snprintf(p->visible, sizeof p->visible, "%s", vis);
    snprintf(p->p2p_level, sizeof p->p2p_level, "%s", lv);
    return CL_OK;
}

/* --- modes --------------------------------------------------------------------------------- */

static cl_result predict_case(cl_case *c)
{
    static predict_args a;
    CL_CHECK(load_case(c));
    memset(&a, 0, sizeof a);
    a.k = cur.k;
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

static cl_result plan_case(cl_case *c)
{
    static choose_args a;
    CL_CHECK(load_case(c));
    memset(&a, 0, sizeof a);
    a.k = cur.k;
    cl_result rc = cl_case_call(c, "choose", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "calls", cur.calls);
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

static cl_result reference_case(cl_case *c)
{
    CL_CHECK(load_case(c));
    double only = 0;
    CL_CHECK(cl_case_num_or(c, "only_tp", 0, &only));
    cl_sim_train *t;
    CL_CHECK(cl_sim_train_levels_model(&cur.levels, CL_SIM_PATH_PXB, &t));
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
        long dp = (long)cur.k.job.nodes * LAB29_GPUS / tp;
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

static cl_result cost_case(cl_case *c)
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

const cl_lab cl_lab_def = {
    .name = "lab29",
    .title = "典型案例复盘: 第 1 章的 256 台服务器",
    .modes =
        (const cl_mode[]){
            {.name = "predict",
             .help = "your step of the plan tp= visible= [p2p=], and the harness's",
             .cases = predict_case},
            {.name = "plan",
             .help = "your plan for a case, its step and the baseline's",
             .cases = plan_case},
            {.name = "reference",
             .help = "the harness's best plan for a case [only_tp=], and the baseline",
             .cases = reference_case},
            {.name = "cost",
             .help = "the harness's step of the plan tp= visible= [p2p=] (no budget)",
             .cases = cost_case},
            {0}},
    .lab_op = lab_op,
};

#endif
