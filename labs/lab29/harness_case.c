/* harness_case.c: lab 29's case: its server (the recorded topology, two of them joined by
 * their NICs for the simulator) and its job, from the case's keys with chapter 1's defaults,
 * and a plan given as keys.
 */
#include <stdio.h>
#include <string.h>

#include "lab29_harness.h"

#define DEFAULT_TOP "datasets/lab29/chapter1-hybrid-mesh-4nic.topo.txt"

struct current current_case;

cl_result load_case(cl_case *c)
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
    CL_CHECK(cl_sim_train_levels_load(&current_case.levels, path, &params, (int)v[1]));
    const cl_topo *topo = &current_case.levels.topo;
    lab29_case *k = &current_case.k;
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
    current_case.calls = 0;
    return CL_OK;
}

cl_result plan_from_case(cl_case *c, lab29_plan *p)
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
