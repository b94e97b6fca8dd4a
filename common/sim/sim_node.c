/* sim_node.c: builds the template graph of one server from a system's node description. */
#include "sim_node.h"

#define GBPS 1e9
#define US   1e-6

cl_result cl_sim_node_build(const cl_sim_system *s, int G, int R, cl_sim_graph *t, int *gpu_v,
                            int *nic_v)
{
    if (s->node == CL_SIM_NODE_TOPO)
        return cl_sim_node_build_topo(s, G, R, t, gpu_v, nic_v);
    for (int i = 0; i < G; i++)
        if ((gpu_v[i] = cl_sim_graph_add_vertex(t, CL_SIM_V_GPU, 0)) < 0)
            return CL_ERR_NOMEM;
    if (s->node == CL_SIM_NODE_NVSWITCH) {
        int sw = cl_sim_graph_add_vertex(t, CL_SIM_V_NVSWITCH, 0);
        if (sw < 0)
            return CL_ERR_NOMEM;
        double bw = s->nvlinks_per_gpu * s->nvlink_gbps * GBPS;
        for (int i = 0; i < G; i++)
            if (cl_sim_graph_add_duplex(t, gpu_v[i], sw, bw, s->nvswitch_hop_us * US / 2,
                                        CL_SIM_L_NVLINK) < 0)
                return CL_ERR_NOMEM;
    } else if (s->node == CL_SIM_NODE_NVLINK) {
        for (int i = 0; i < s->nnvpairs; i++) {
            const cl_sim_nvpair *p = &s->nvpairs[i];
            if (p->a >= G || p->b >= G) {
                cl_set_error("NVLink pair %d-%d needs %d GPUs per node, not %d", p->a, p->b,
                             (p->a > p->b ? p->a : p->b) + 1, G);
                return CL_ERR_INVALID;
            }
            if (cl_sim_graph_add_duplex(t, gpu_v[p->a], gpu_v[p->b],
                                        p->count * s->nvlink_gbps * GBPS, 0, CL_SIM_L_NVLINK) < 0)
                return CL_ERR_NOMEM;
        }
    }
    /* Host side: CPUs joined by the SMP interconnect, PCIe switches under them. */
    int cpu[16];
    int ncpu = s->cpus > 16 ? 16 : s->cpus;
    for (int c = 0; c < ncpu; c++) {
        if ((cpu[c] = cl_sim_graph_add_vertex(t, CL_SIM_V_CPU, 0)) < 0)
            return CL_ERR_NOMEM;
        for (int d = 0; d < c; d++)
            if (cl_sim_graph_add_duplex(t, cpu[d], cpu[c], s->sys_gbps * GBPS, 0, CL_SIM_L_SYS) < 0)
                return CL_ERR_NOMEM;
    }
    int per = s->gpus_per_pcie_switch;
    int nsw = (G + per - 1) / per;
    int sw[CL_SIM_MAX_SW];
    if (nsw > CL_SIM_MAX_SW)
        nsw = CL_SIM_MAX_SW;
    double pci = s->pcie_gbps * GBPS;
    for (int k = 0; k < nsw; k++) {
        if ((sw[k] = cl_sim_graph_add_vertex(t, CL_SIM_V_PCISW, 0)) < 0)
            return CL_ERR_NOMEM;
        if (cl_sim_graph_add_duplex(t, sw[k], cpu[k * ncpu / nsw], pci, 0, CL_SIM_L_PCI) < 0)
            return CL_ERR_NOMEM;
    }
    for (int i = 0; i < G; i++) {
        int k = i / per < nsw ? i / per : nsw - 1;
        if (cl_sim_graph_add_duplex(t, gpu_v[i], sw[k], pci, 0, CL_SIM_L_PCI) < 0)
            return CL_ERR_NOMEM;
    }
    for (int r = 0; r < R; r++) {
        if ((nic_v[r] = cl_sim_graph_add_vertex(t, CL_SIM_V_NIC, 0)) < 0)
            return CL_ERR_NOMEM;
        int gi = r * G / R;
        int k = gi / per < nsw ? gi / per : nsw - 1;
        int up = s->nics_per_pcie_switch > 0 ? sw[k] : cpu[0];
        if (cl_sim_graph_add_duplex(t, nic_v[r], up, pci, 0, CL_SIM_L_PCI) < 0)
            return CL_ERR_NOMEM;
    }
    return CL_OK;
}
