/* sim_topo.h: a simulated server built from a recorded topology (cl_topo), and ring channels on it.
 *
 * The link classes of `nvidia-smi topo -m` or an NCCL XML dump are turned into
 * a graph of directed links with NCCL's bandwidths:
 *   NV#   direct NVLink pairs: # x nvlink_gbps each way; or, when a GPU's
 *         NVLink count summed over its peers exceeds CL_SIM_TOPO_MAX_NVLINKS
 *         (every pair printed NV12 / NV18 on an NVSwitch system), one port
 *         of # x nvlink_gbps from every GPU to a single NVSwitch;
 *   PCIe  GPUs printed PIX to each other, or PIX to the same NIC, share a PCIe
 *         switch; PXB (to each other or to one NIC) share an upper switch;
 *         PHB/NODE share a CPU; every hop is one pci_gbps link;
 *   SYS   CPUs are joined pairwise by sys_gbps links.
 * A GPU pair with NVLink uses it (NVL); any other pair goes up the PCIe tree
 * and, across CPUs, over the SMP link. Without PCIe information (a matrix
 * with only NV and SYS) each GPU gets its own CPU.
 *
 * Ring channels are simulated as NCCL runs them: every channel moves 1/C of
 * the data, one ring step sends one chunk from every GPU to its successor on
 * every channel at once, and the flows share links max-min fairly. The bus
 * bandwidth of an AllReduce is then (chunk x C) / step time (latency left out:
 * the large-message limit).
 */
#ifndef COMMLAB_SIM_TOPO_H
#define COMMLAB_SIM_TOPO_H

#include "result.h"
#include "sim_graph.h"
#include "topo.h"

#define CL_SIM_TOPO_MAX_GPUS 64
#define CL_SIM_TOPO_MAX_HOPS 8
#define CL_SIM_TOPO_MAX_NVLINKS 18 /* links of one GPU (NVLink4, H100) */

/* NCCL's bandwidths (GB/s, one direction) for the links of one machine. */
typedef struct cl_sim_topo_params {
    double nvlink_gbps; /* per NVLink: 20 (SM70, SM80), 20.6 (SM90), 40.1 (SM100) */
    double pci_gbps;    /* PCIe x16: 12 (Gen3), 24 (Gen4), 48 (Gen5) */
    double sys_gbps;    /* SMP link: 6 (BDW), 10 (SKL), 22 (SPR), 16 (AMD) */
} cl_sim_topo_params;

/* Invariants: ngpus = cl_topo_gpu_count(); path[a][b] lists npath[a][b]
 * directed link ids of g from GPU a to GPU b (0 when a == b); path_code[a][b]
 * is the NCCL path type name of that route ("NVL", "PIX", "PXB", "PHB", "SYS"). */
typedef struct cl_sim_topo_net {
    int ngpus;
    int nvswitch;     /* 1 when the NVLinks go to an NVSwitch */
    cl_sim_graph g;
    int gpu_v[CL_SIM_TOPO_MAX_GPUS];
    int npath[CL_SIM_TOPO_MAX_GPUS][CL_SIM_TOPO_MAX_GPUS];
    int path[CL_SIM_TOPO_MAX_GPUS][CL_SIM_TOPO_MAX_GPUS][CL_SIM_TOPO_MAX_HOPS];
    char path_code[CL_SIM_TOPO_MAX_GPUS][CL_SIM_TOPO_MAX_GPUS][4];
} cl_sim_topo_net;

/* Build the net of t's GPUs with bandwidths p. Returns CL_OK, CL_ERR_INVALID
 * (fewer than 1 or more than CL_SIM_TOPO_MAX_GPUS GPUs, a bandwidth <= 0, a GPU
 * pair with a class this model does not know), CL_ERR_NOMEM. */
cl_result cl_sim_topo_net_build(const cl_topo *t, const cl_sim_topo_params *p,
                                cl_sim_topo_net *out);

void cl_sim_topo_net_free(cl_sim_topo_net *n);

/* Bandwidth of link l in GB/s; 0 for an unknown id. This function can't fail. */
double cl_sim_topo_link_gbps(const cl_sim_topo_net *n, int l);

/* 1 when ring (n->ngpus entries) visits every GPU exactly once, else 0. */
int cl_sim_topo_ring_ok(const cl_sim_topo_net *n, const int *ring);

/* Simulated AllReduce bus bandwidth (GB/s) of nrings ring channels (nrings x
 * ngpus GPU indices, row by row) in the large-message limit. Returns CL_OK,
 * CL_ERR_INVALID (no ring, or a ring that is not a permutation of the GPUs,
 * with the reason), CL_ERR_NOMEM. One GPU: busbw is 0. */
cl_result cl_sim_topo_rings_busbw(const cl_sim_topo_net *n, const int *rings, int nrings,
                                  double *busbw_gbps);

#endif /* COMMLAB_SIM_TOPO_H */
