/* harness_model.c: lab 07's case and the model that costs its plans: the case's node and
 * training job read into the harness's models (one per NCCL_P2P_LEVEL) and into the student's
 * view of them, a plan's launch line parsed and costed, and the operation behind the student's
 * lab07_step_time() (lab_op), which counts against the case's budget.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lab07_harness.h"
#include "sim/sim_launch.h"

/* --- the case --------------------------------------------------------------------------------- */

lab07_current current_case;

cl_result load_case(cl_case *c)
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
    CL_CHECK(cl_sim_train_levels_load(&current_case.levels, path, &params, (int)v[1]));
    const cl_topo *topo = &current_case.levels.topo;
    lab07_case *k = &current_case.k;
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
    cl_sim_train_model *m = &current_case.model;
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
    current_case.calls = 0;
    return CL_OK;
}

/* --- plans ------------------------------------------------------------------------------------ */

/* What the launch line of p means: the ranks' GPUs and the P2P level. */
cl_result parse_plan(const lab07_plan *p, cl_sim_train_plan *out, int *level)
{
    int G = current_case.k.node.ngpus, nodes = current_case.k.nodes;
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

cl_result cost_of(const cl_sim_train_plan *p, int level, cl_sim_train_cost *c)
{
    cl_sim_train *t;
    CL_CHECK(cl_sim_train_levels_model(&current_case.levels, level, &t));
    return cl_sim_train_cost_of(t, &current_case.model, p, c);
}

cl_result lab_op(cl_run *run, cl_comm *comm, int code, void *args, size_t bytes)
{
    (void)run, (void)comm;
    if (code != LAB07_OP_STEP || bytes != sizeof(lab07_step_args)) {
        cl_set_error("lab07 has no operation %d of %zu bytes", code, bytes);
        return CL_ERR_INVALID;
    }
    lab07_step_args *a = args;
    if (current_case.calls >= current_case.k.budget) {
        cl_set_error("lab07_step_time: this case's budget of %d calls is spent",
                     current_case.k.budget);
        return CL_ERR_INVALID;
    }
    cl_sim_train_plan p;
    cl_sim_train_cost c;
    int level;
    CL_CHECK(parse_plan(&a->plan, &p, &level));
    CL_CHECK(cost_of(&p, level, &c));
    current_case.calls++;
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
                           .calls_left = current_case.k.budget - current_case.calls};
    return CL_OK;
}
