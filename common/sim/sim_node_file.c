/* sim_node_file.c: one server's graph from a recorded topology file (node = topo in a system file).
 *
 * The system file gives the constants (NCCL's NVLink, PCIe and SMP bandwidths,
 * latencies); the topology file (`nvidia-smi topo -m` text or an NCCL XML dump)
 * gives the links between the GPUs, read as sim_topo.h reads them. A path given
 * relative is taken from the system file's folder, so a system and its topology
 * travel together.
 */
#include <stdio.h>
#include <string.h>

#include "sim_node.h"
#include "sim_topo.h"

#define GBPS 1e9

/* The topology's path: as given when absolute, else beside the system file. */
static void topology_path(const cl_sim_system *s, char *out, size_t n)
{
    const char *slash = strrchr(s->path, '/');
    if (s->topology[0] == '/' || !slash)
        snprintf(out, n, "%s", s->topology);
    else
        snprintf(out, n, "%.*s/%s", (int)(slash - s->path), s->path, s->topology);
}

cl_result cl_sim_node_build_topo(const cl_sim_system *s, int G, int R, cl_sim_graph *t, int *gpu_v,
                                 int *nic_v)
{
    static cl_topo topo; /* large; one node is built at a time */
    char path[2 * CL_SIM_PATH_LEN];
    topology_path(s, path, sizeof path);
    CL_CHECK(cl_topo_load(path, &topo));
    int found = cl_topo_gpu_count(&topo);
    if (found != G) {
        cl_set_error("%s: %d GPUs, but the system has gpus_per_node = %d", path, found, G);
        return CL_ERR_INVALID;
    }
    cl_sim_topo_params p = {
        .nvlink_gbps = s->nvlink_gbps, .pci_gbps = s->pcie_gbps, .sys_gbps = s->sys_gbps};
    cl_sim_topo_net net;
    cl_result rc = cl_sim_topo_net_build(&topo, &p, &net);
    int cpu = -1;
    for (int v = 0; rc == CL_OK && v < net.g.nv; v++) {
        if (cl_sim_graph_add_vertex(t, (cl_sim_vkind)net.g.vkind[v], net.g.vlevel[v]) < 0)
            rc = CL_ERR_NOMEM;
        if (cpu < 0 && net.g.vkind[v] == CL_SIM_V_CPU)
            cpu = v;
    }
    for (int l = 0; rc == CL_OK && l < net.g.nl; l++) {
        const cl_sim_link *L = &net.g.l[l];
        if (cl_sim_graph_add_link(t, L->src, L->dst, L->bw, L->lat, L->kind) < 0)
            rc = CL_ERR_NOMEM;
    }
    for (int i = 0; rc == CL_OK && i < G; i++)
        gpu_v[i] = net.gpu_v[i];
    for (int r = 0; rc == CL_OK && r < R; r++) {
        if ((nic_v[r] = cl_sim_graph_add_vertex(t, CL_SIM_V_NIC, 0)) < 0 ||
            cl_sim_graph_add_duplex(t, nic_v[r], cpu, s->pcie_gbps * GBPS, 0, CL_SIM_L_PCI) < 0)
            rc = CL_ERR_NOMEM;
    }
    cl_sim_topo_net_free(&net);
    return rc;
}
