/* driver.c: lab 07's plug-in: the student's plans, costed by the shared model of a training step.
 *
 *   lab07 plan      CASE       the student's plan for the case, and its cost
 *   lab07 reference CASE [layout=TP,PP,DP] [topo_json=OUT] [naive_only=1]   the index
 *                              mapping's best layout, the best plan the harness's own
 *                              search finds (not with naive_only) and the node as read
 *   lab07 cost      CASE tp= pp= dp= [order=tp-pp-dp] visible=3,6,..[;..] [p2p=NVL]
 *   lab07 split     tp= pp= dp= [order=]     the student's colours and keys of every rank
 *   lab07 visible   nodes= gpus= mapping=3,6,0,..   the student's CUDA_VISIBLE_DEVICES
 *   lab07 gpu       --tp N --pp N --dp N [--order O]   (gpu backend, under mpirun) TP
 *                              communicators from the student's colours, AllGather on them
 * CASE: topo=FILE [nodes=2] sm= nvlink= pci= sys= net= mem_gib= tflops= (a node type of
 * datasets/topologies/node-types.csv) params= layers= hidden= global_batch= [seq=2048]
 * [micro_batch=1] [budget=400] [mfu=0.4].
 *
 * The model (common/sim/sim_train.h over sim_channels.h, the channel model lab04 uses)
 * runs here; the student's planner asks it through lab07_step_time() (model.c), at most
 * `budget` times per case, and the harness costs the final plan itself.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness.h"
#include "lab07_op.h"

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct split_args {
    int tp, pp, dp, tp_pp_dp;
    int first, count;                 /* ranks first .. first + count - 1 */
    lab07_split out[LAB07_MAX_RANKS]; /* out */
    int status[LAB07_MAX_RANKS];      /* out: each rank's result */
} split_args;

typedef struct visible_args {
    int nodes, gpus_per_node;
    int gpu_of_rank[LAB07_MAX_RANKS];
    lab07_plan plan; /* out: visible */
} visible_args;

typedef struct plan_args {
    lab07_case k;
    lab07_plan plan; /* out */
} plan_args;

#ifdef CL_STUDENT_SIDE

static cl_result split(cl_comm *c, void *args)
{
    (void)c;
    split_args *a = args;
    cl_result rc = CL_OK;
    for (int i = 0; i < a->count && i < LAB07_MAX_RANKS; i++) {
        a->status[i] =
            lab07_split_colors(a->tp, a->pp, a->dp, a->tp_pp_dp, a->first + i, &a->out[i]);
        rc = rc == CL_OK ? (cl_result)a->status[i] : rc;
    }
    return rc;
}

static cl_result visible(cl_comm *c, void *args)
{
    (void)c;
    visible_args *a = args;
    return lab07_visible_devices(a->gpu_of_rank, a->nodes, a->gpus_per_node, &a->plan);
}

static cl_result plan(cl_comm *c, void *args)
{
    plan_args *a = args;
    return lab07_choose_plan(c, &a->k, &a->plan);
}

CL_STUDENT_ENTRIES({"split", split}, {"visible", visible}, {"plan", plan});

#else

#include "sim/sim_launch.h"
#include "sim/sim_train_levels.h"

/* --- the case ------------------------------------------------------------------------------- */

static struct {
    cl_sim_train_levels levels; /* the nodes' models, by NCCL_P2P_LEVEL */
    lab07_case k;
    cl_sim_train_model model;
    int calls;
} cur;

static cl_result load_case(cl_case *c)
{
    const char *path;
    double v[16];
    static const char *keys[] = {
        "nodes",  "sm",     "nvlink", "pci",          "sys", "net",         "mem_gib", "tflops",
        "params", "layers", "hidden", "global_batch", "seq", "micro_batch", "budget",  "mfu"};
    static const double fallback[] = {1,   NAN, NAN, NAN, NAN,  NAN, NAN, NAN,
                                      NAN, NAN, NAN, NAN, 2048, 1,   400, 0.4};
    CL_CHECK(cl_case_str(c, "topo", &path));
    for (int i = 0; i < 16; i++)
        CL_CHECK(cl_case_num_or(c, keys[i], fallback[i], &v[i]));
    cl_sim_topo_params params = {.nvlink_gbps = v[2],
                                 .pci_gbps = v[3],
                                 .sys_gbps = v[4],
                                 .nodes = (int)v[0],
                                 .net_gbps = v[5]};
    CL_CHECK(cl_sim_train_levels_load(&cur.levels, path, &params, (int)v[1]));
    const cl_topo *topo = &cur.levels.topo;
    lab07_case *k = &cur.k;
    memset(k, 0, sizeof *k);
    int G = 0, nics = 0;
    for (int d = 0; d < topo->ndevices; d++) {
        int gpu = topo->dev[d].kind == CL_DEV_GPU;
        if (gpu && (d != G || G == LAB07_MAX_GPUS)) {
            cl_set_error("%s: GPUs must come first, at most %d of them", path, LAB07_MAX_GPUS);
            return CL_ERR_INVALID;
        }
        G += gpu;
        nics += topo->dev[d].kind == CL_DEV_NIC;
    }
    if (G < 1 || nics > LAB07_MAX_NICS || v[0] < 1 || v[0] > LAB07_MAX_NODES) {
        cl_set_error("%s: %d GPUs, %d NICs, nodes=%g: this lab takes 1 to %d GPUs, at most %d "
                     "NICs and 1 to %d nodes",
                     path, G, nics, v[0], LAB07_MAX_GPUS, LAB07_MAX_NICS, LAB07_MAX_NODES);
        return CL_ERR_INVALID;
    }
    k->nodes = (int)v[0];
    k->node.ngpus = G;
    for (int a = 0; a < G; a++) {
        for (int b = 0; b < G; b++)
            k->node.gpu[a][b] = topo->link[a][b];
        for (int d = 0, n = 0; d < topo->ndevices; d++)
            if (topo->dev[d].kind == CL_DEV_NIC)
                k->node.nic[a][n++] = topo->link[a][d];
    }
    k->node.nnics = nics;
    k->node.sm = (int)v[1];
    k->node.nvlink_gbps = v[2];
    k->node.pcie_gbps = v[3];
    k->node.sys_gbps = v[4];
    k->node.net_gbps = v[5];
    k->node.gpu_mem_bytes = v[6] * 1073741824.0;
    int N = G * k->nodes;
    cl_sim_train_model *m = &cur.model;
    *m = (cl_sim_train_model){.params = v[8],
                              .layers = (int)v[9],
                              .hidden = (int)v[10],
                              .global_batch = (int)v[11],
                              .seq_len = (int)v[12],
                              .micro_batch = (int)v[13],
                              .bytes = 2,
                              .gpu_mem_bytes = k->node.gpu_mem_bytes};
    /* 6 x parameters x tokens of work (Kaplan et al.), at mfu of the GPUs' peak */
    m->compute_s = 6.0 * m->params * m->global_batch * m->seq_len / (N * v[7] * 1e12 * v[15]);
    k->model = (lab07_model){.params = m->params,
                             .layers = m->layers,
                             .hidden = m->hidden,
                             .seq_len = m->seq_len,
                             .micro_batch = m->micro_batch,
                             .global_batch = m->global_batch,
                             .bytes = m->bytes,
                             .compute_s = m->compute_s};
    k->budget = (int)v[14];
    cur.calls = 0;
    return CL_OK;
}

/* --- plans ------------------------------------------------------------------------------------ */

/* What the launch line of p means: the ranks' GPUs and the P2P level. */
static cl_result parse_plan(const lab07_plan *p, cl_sim_train_plan *out, int *level)
{
    int G = cur.k.node.ngpus, nodes = cur.k.nodes;
    memset(out, 0, sizeof *out);
    if (p->tp < 1 || p->pp < 1 || p->dp < 1 || p->tp * p->pp * p->dp != G * nodes) {
        cl_set_error("tp x pp x dp = %d x %d x %d is not the %d GPUs", p->tp, p->pp, p->dp,
                     G * nodes);
        return CL_ERR_INVALID;
    }
    if (p->tp_pp_dp != 0 && p->tp_pp_dp != 1) {
        cl_set_error("tp_pp_dp=%d: 0 or 1", p->tp_pp_dp);
        return CL_ERR_INVALID;
    }
    *out =
        (cl_sim_train_plan){.tp = p->tp,
                            .pp = p->pp,
                            .dp = p->dp,
                            .order = p->tp_pp_dp ? CL_SIM_ORDER_TP_PP_DP : CL_SIM_ORDER_TP_DP_PP};
    for (int n = 0; n < nodes; n++) {
        char where[32];
        int gpu[LAB07_MAX_GPUS];
        snprintf(where, sizeof where, " on node %d", n);
        CL_CHECK(cl_sim_launch_visible(p->visible[n], LAB07_VISIBLE_LEN, G, where, gpu));
        for (int i = 0; i < G; i++)
            out->gpu_of_rank[n * G + i] = n * G + gpu[i];
    }
    return cl_sim_launch_p2p_level(p->p2p_level, sizeof p->p2p_level, level);
}

static cl_result cost_of(const cl_sim_train_plan *p, int level, cl_sim_train_cost *c)
{
    cl_sim_train *t;
    CL_CHECK(cl_sim_train_levels_model(&cur.levels, level, &t));
    return cl_sim_train_cost_of(t, &cur.model, p, c);
}

static cl_result lab_op(cl_run *run, cl_comm *comm, int code, void *args, size_t bytes)
{
    (void)run, (void)comm;
    if (code != LAB07_OP_STEP || bytes != sizeof(lab07_step_args)) {
        cl_set_error("lab07 has no operation %d of %zu bytes", code, bytes);
        return CL_ERR_INVALID;
    }
    lab07_step_args *a = args;
    if (cur.calls >= cur.k.budget) {
        cl_set_error("lab07_step_time: this case's budget of %d calls is spent", cur.k.budget);
        return CL_ERR_INVALID;
    }
    cl_sim_train_plan p;
    cl_sim_train_cost c;
    int level;
    CL_CHECK(parse_plan(&a->plan, &p, &level));
    CL_CHECK(cost_of(&p, level, &c));
    cur.calls++;
    a->cost = (lab07_cost){.step_s = c.step_s,
                           .compute_s = c.compute_s,
                           .bubble_s = c.bubble_s,
                           .tp_s = c.tp_s,
                           .dp_s = c.dp_s,
                           .pp_s = c.pp_s,
                           .tp_busbw = c.tp_busbw,
                           .dp_busbw = c.dp_busbw,
                           .pp_gbps = c.pp_gbps,
                           .mem_bytes = c.mem_bytes,
                           .fits = c.fits,
                           .calls_left = cur.k.budget - cur.calls};
    return CL_OK;
}

/* --- the report --------------------------------------------------------------------------------
 */

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
    int G = cur.k.node.ngpus;
    size_t len = 0;
    snprintf(key, sizeof key, "%slayout", prefix);
    snprintf(text, sizeof text, "%d,%d,%d", p->tp, p->pp, p->dp);
    cl_col_str(r, key, text);
    snprintf(key, sizeof key, "%sorder", prefix);
    cl_col_str(r, key, p->order == CL_SIM_ORDER_TP_PP_DP ? "tp-pp-dp" : "tp-dp-pp");
    text[0] = '\0';
    for (int n = 0; n < cur.k.nodes; n++)
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

/* --- modes --------------------------------------------------------------------------------------
 */

static cl_result plan_case(cl_case *c)
{
    static plan_args a;
    CL_CHECK(load_case(c));
    memset(&a, 0, sizeof a);
    a.k = cur.k;
    cl_result rc = cl_case_call(c, "plan", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "calls", cur.calls);
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

static cl_result reference_case(cl_case *c)
{
    CL_CHECK(load_case(c));
    cl_sim_train *t;
    CL_CHECK(cl_sim_train_levels_model(&cur.levels, CL_SIM_PATH_PXB, &t));
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
    int N = cur.k.node.ngpus * cur.k.nodes, have = 0;
    for (int tp = 1; tp <= N; tp++)
        for (int pp = 1; tp * pp <= N && N % tp == 0; pp++) {
            if (N % (tp * pp))
                continue;
            p = (cl_sim_train_plan){.tp = tp, .pp = pp, .dp = N / (tp * pp)};
            if (restricted && (only.tp != p.tp || only.pp != p.pp || only.dp != p.dp))
                continue;
            for (int r = 0; r < N; r++)
                p.gpu_of_rank[r] = r;
            if (cl_sim_train_cost_of(t, &cur.model, &p, &pc) != CL_OK) {
                cl_clear_error();
                continue;
            }
            if (pc.fits && (!have || pc.step_s < nc.step_s)) {
                naive = p, nc = pc;
                have = 1;
            }
        }
    if (!naive_only)
        CL_CHECK(cl_sim_train_best(t, &cur.model, restricted ? &only : NULL, &best, &bc));
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
        cl_result wr = f ? cl_topo_write_json(&cur.levels.topo, f) : CL_ERR_IO;
        if ((f && fclose(f) != 0) || wr != CL_OK) {
            cl_set_error("cannot write %s", out);
            return CL_ERR_IO;
        }
    }
    cl_clear_error();
    return CL_OK;
}

static cl_result cost_case(cl_case *c)
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

static cl_result split_case(cl_case *c)
{
    static split_args a;
    double v[3];
    const char *order = "tp-dp-pp";
    CL_CHECK(cl_case_num(c, "tp", &v[0]));
    CL_CHECK(cl_case_num(c, "pp", &v[1]));
    CL_CHECK(cl_case_num(c, "dp", &v[2]));
    if (cl_case_str(c, "order", &order) != CL_OK)
        order = "tp-dp-pp";
    cl_clear_error();
    memset(&a, 0xff, sizeof a);
    a.tp = (int)v[0], a.pp = (int)v[1], a.dp = (int)v[2];
    a.tp_pp_dp = strcmp(order, "tp-pp-dp") == 0;
    long long n = (long long)a.tp * a.pp * a.dp;
    a.first = 0;
    a.count = n < 1 ? 1 : n > LAB07_MAX_RANKS ? LAB07_MAX_RANKS : (int)n;
    cl_result rc = cl_case_call(c, "split", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    long long x[6][LAB07_MAX_RANKS];
    for (int i = 0; i < a.count; i++) {
        const lab07_split *s = &a.out[i];
        long long vals[6] = {s->tp_color, s->tp_key,   s->dp_color,
                             s->dp_key,   s->pp_color, s->pp_key};
        for (int k = 0; k < 6; k++)
            x[k][i] = vals[k];
    }
    static const char *names[6] = {"tp_color", "tp_key",   "dp_color",
                                   "dp_key",   "pp_color", "pp_key"};
    for (int k = 0; k < 6 && rc == CL_OK; k++)
        cl_col_ints(row, names[k], x[k], (size_t)a.count);
    return rc;
}

static cl_result visible_case(cl_case *c)
{
    static visible_args a;
    double nodes, gpus;
    const char *text;
    CL_CHECK(cl_case_num(c, "nodes", &nodes));
    CL_CHECK(cl_case_num(c, "gpus", &gpus));
    CL_CHECK(cl_case_str(c, "mapping", &text));
    memset(&a, 0, sizeof a);
    a.nodes = (int)nodes, a.gpus_per_node = (int)gpus;
    int n = 0;
    for (const char *s = text; *s && n < LAB07_MAX_RANKS; n++) {
        char *end;
        a.gpu_of_rank[n] = (int)strtol(s, &end, 10);
        s = *end == ',' ? end + 1 : end;
        if (end == text) {
            cl_set_error("mapping=%s: expected GPU,GPU,...", text);
            return CL_ERR_INVALID;
        }
    }
    cl_result rc = cl_case_call(c, "visible", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    char joined[LAB07_MAX_NODES * (LAB07_VISIBLE_LEN + 1)] = "";
    size_t len = 0;
    for (int i = 0; i < a.nodes && i < LAB07_MAX_NODES && rc == CL_OK; i++) {
        a.plan.visible[i][LAB07_VISIBLE_LEN - 1] = '\0';
        len += (size_t)snprintf(joined + len, sizeof joined - len, "%s%s", i ? ";" : "",
                                a.plan.visible[i]);
    }
    cl_col_str(row, "visible", joined);
    return rc;
}

/* --- gpu: TP communicators from the student's colours, AllGather on them -----------------------
 */

static cl_result gpu_split(cl_run *run, cl_comm *comm)
{
    const cl_opts *o = cl_run_opts(run);
    int tp = atoi(cl_opt(run, "tp")), pp = atoi(cl_opt(run, "pp")), dp = atoi(cl_opt(run, "dp"));
    int order = strcmp(cl_opt(run, "order"), "tp-pp-dp") == 0;
    int rank = cl_comm_rank(comm), size = cl_comm_size(comm);
    if (tp < 1 || pp < 1 || dp < 1 || tp * pp * dp != size) {
        cl_set_error("--tp %d --pp %d --dp %d on %d ranks", tp, pp, dp, size);
        return CL_ERR_INVALID;
    }
    static split_args a;
    memset(&a, 0, sizeof a);
    a.tp = tp, a.pp = pp, a.dp = dp, a.tp_pp_dp = order, a.first = rank, a.count = 1;
    cl_call_result res;
    CL_CHECK(cl_student_run(comm, "split", &a, sizeof a, 0, &res));
    if (res.status != CL_OK)
        return res.status;
    cl_sim_train_plan p = {.tp = tp, .pp = pp, .dp = dp, .order = order};
    int t, d, s;
    cl_sim_train_coords(&p, rank, &t, &d, &s);
    cl_comm *group = NULL;
    CL_CHECK(cl_comm_split(comm, a.out[0].tp_color, a.out[0].tp_key, &group));
    /* The group must be the (d, s) TP group, in TP index order. */
    int64_t bad = !group || cl_comm_size(group) != tp || cl_comm_rank(group) != t;
    CL_CHECK(cl_agree(comm, CL_SUM, &bad, 1));
    if (bad) {
        if (group)
            CL_CHECK(cl_comm_free(group));
        cl_row *row = cl_row_begin(run, comm);
        cl_col_int(row, "bad_split_ranks", bad);
        cl_row_end(row);
        return CL_OK;
    }
    size_t count = o->bytes / sizeof(float) / (size_t)tp * (size_t)tp;
    double busbw[CL_LIBRARY_BUSBW_MAX_REPEATS], wrong;
    int reps;
    CL_CHECK(
        cl_library_coll_busbw(run, group, comm, CL_COLL_ALLGATHER, count, busbw, &reps, &wrong));
    cl_row *row = cl_row_begin(run, comm);
    cl_col_int(row, "bad_split_ranks", 0);
    cl_col_int(row, "bytes", (long long)(count * sizeof(float)));
    cl_col_nums(row, "tp_busbw", busbw, (size_t)reps, "%.2f");
    cl_col_int(row, "wrong", (long long)wrong);
    cl_row_end(row);
    return cl_comm_free(group);
}

const cl_lab cl_lab_def = {
    .name = "lab07",
    .title = "8 卡拓扑优化: 并行布局与 rank 到 GPU 的映射",
    .modes =
        (const cl_mode[]){
            {.name = "plan",
             .help = "your plan for a case, costed by the harness's model",
             .cases = plan_case},
            {.name = "reference",
             .help = "the index mapping and the harness's best plan for a case",
             .cases = reference_case},
            {.name = "cost",
             .help = "the model's cost of the plan tp= pp= dp= visible= [order= p2p=]",
             .cases = cost_case},
            {.name = "split",
             .help = "your colours and keys of every rank (tp= pp= dp= [order=])",
             .cases = split_case},
            {.name = "visible",
             .help = "your CUDA_VISIBLE_DEVICES (nodes= gpus= mapping=)",
             .cases = visible_case},
            {.name = "gpu",
             .help = "TP AllGather on communicators split with your colours",
             .ranks = gpu_split,
             .backends = "gpu,cpu"},
            {0}},
    .options =
        (const cl_option[]){
            {.name = "tp", .help = "gpu: TP size", .fallback = "2"},
            {.name = "pp", .help = "gpu: PP size", .fallback = "1"},
            {.name = "dp", .help = "gpu: DP size", .fallback = "1"},
            {.name = "order", .help = "gpu: tp-dp-pp or tp-pp-dp", .fallback = "tp-dp-pp"},
            {0}},
    .lab_op = lab_op,
};

#endif
