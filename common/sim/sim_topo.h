/* sim_topo.h: a simulated server (or several identical ones) built from a recorded topology.
 *
 * The link classes of `nvidia-smi topo -m` or an NCCL XML dump are turned into
 * a graph of directed links with NCCL's bandwidths (NVIDIA/nccl v2.21.5,
 * src/graph/topo.h and topo.cc):
 *   NV#   direct NVLink pairs: # x nvlink_gbps each way; or, when a GPU's
 *         NVLink count summed over its peers exceeds CL_SIM_TOPO_MAX_NVLINKS
 *         (every pair printed NV12 / NV18 on an NVSwitch system), one port
 *         of # x nvlink_gbps from every GPU to a single NVSwitch;
 *   PCIe  GPUs printed PIX to each other, or PIX to the same NIC, share a PCIe
 *         switch; PXB (to each other or to one NIC) share an upper switch;
 *         PHB/NODE share a CPU; every hop is one pci_gbps link;
 *   SYS   CPUs are joined pairwise by sys_gbps links;
 *   NIC   every NIC closer than SYS to some GPU hangs below that GPU's PCIe
 *         switch (PIX), upper switch (PXB) or CPU (PHB/NODE); with several
 *         nodes, every NIC has a net_gbps port on one network switch.
 * Routes between GPUs follow NCCL's path types (src/graph/paths.cc):
 *   NVL   the direct NVLink (or the NVSwitch);
 *   NVB   no direct NVLink, but both GPUs have one to a third GPU: through it
 *         (NCCL's P2P/indirect), the third GPU with the widest pair of links;
 *   PIX, PXB, PHB, SYS   up the PCIe tree and, across CPUs, over the SMP link;
 *   NET   to another node: the sender's nearest NIC, the network switch, the
 *         receiver's nearest NIC (GPUs with several equally near NICs take
 *         them in turn).
 * NCCL uses P2P between two GPUs only when their path type is at most
 * NCCL_P2P_LEVEL (default PXB); other pairs go through host memory (SHM):
 * up to the CPU, over SYS if the CPUs differ, and down. path[][] is that
 * route; path_type[][] stays the topological type.
 * Without PCIe information (a matrix with only NV and SYS) GPUs share a CPU
 * unless some pair of them is printed SYS.
 *
 * Ring channels on it: sim_channels.h.
 */
#ifndef COMMLAB_SIM_TOPO_H
#define COMMLAB_SIM_TOPO_H

#include "result.h"
#include "sim_graph.h"
#include "topo.h"

#define CL_SIM_TOPO_MAX_GPUS    64
#define CL_SIM_TOPO_MAX_HOPS    16
#define CL_SIM_TOPO_MAX_NVLINKS 18 /* links of one GPU (NVLink4, H100) */
#define CL_SIM_TOPO_MAX_NODES   8

/* NCCL's path types, in its order (src/include/graph.h, without C2C/P2C/PXN). */
typedef enum cl_sim_path {
    CL_SIM_PATH_LOC,
    CL_SIM_PATH_NVL,
    CL_SIM_PATH_NVB,
    CL_SIM_PATH_PIX,
    CL_SIM_PATH_PXB,
    CL_SIM_PATH_PHB,
    CL_SIM_PATH_SYS,
    CL_SIM_PATH_NET,
    CL_SIM_PATH_COUNT
} cl_sim_path;

/* "LOC", "NVL", "NVB", "PIX", "PXB", "PHB", "SYS", "NET"; "?" out of range. Can't fail. */
const char *cl_sim_path_name(int type);

/* The type named name (one of the above); -1 for anything else. Can't fail. */
int cl_sim_path_parse(const char *name);

/* NCCL's bandwidths (GB/s, one direction) for the links of one machine. The
 * fields after the first three may be left 0 for their defaults. */
typedef struct cl_sim_topo_params {
    double nvlink_gbps; /* per NVLink: 20 (SM70, SM80), 20.6 (SM90), 40.1 (SM100) */
    double pci_gbps;    /* PCIe x16: 12 (Gen3), 24 (Gen4), 48 (Gen5) */
    double sys_gbps;    /* SMP link: 6 (BDW), 10 (SKL), 22 (SPR), 16 (AMD) */
    int nodes;          /* identical nodes (default 1) */
    double net_gbps;    /* one NIC port (default 12: NET_BW, 100 Gb/s) */
    int p2p_level;      /* NCCL_P2P_LEVEL as a cl_sim_path (default PXB) */
} cl_sim_topo_params;

/* Invariants: ngpus = nodes x gpus_per_node; GPU g is GPU g % gpus_per_node of
 * node g / gpus_per_node; path[a][b] lists npath[a][b] directed link ids of g
 * from GPU a to GPU b (0 when a == b); path_type[a][b] is a cl_sim_path and
 * path_code[a][b] its name; nic_of[a] is the NIC (index among the node's NICs
 * in file order, -1 without one) GPU a's network traffic uses. */
typedef struct cl_sim_topo_net {
    int ngpus, nodes, gpus_per_node;
    int nvswitch; /* 1 when the NVLinks go to an NVSwitch */
    int nnics;    /* NICs of one node that hang below a GPU's CPU */
    cl_sim_graph g;
    int gpu_v[CL_SIM_TOPO_MAX_GPUS];
    int nic_of[CL_SIM_TOPO_MAX_GPUS];
    int npath[CL_SIM_TOPO_MAX_GPUS][CL_SIM_TOPO_MAX_GPUS];
    int path[CL_SIM_TOPO_MAX_GPUS][CL_SIM_TOPO_MAX_GPUS][CL_SIM_TOPO_MAX_HOPS];
    signed char path_type[CL_SIM_TOPO_MAX_GPUS][CL_SIM_TOPO_MAX_GPUS];
    char path_code[CL_SIM_TOPO_MAX_GPUS][CL_SIM_TOPO_MAX_GPUS][4];
} cl_sim_topo_net;

/* Build the net of t's GPUs with bandwidths p. Returns CL_OK, CL_ERR_INVALID
 * (fewer than 1 or more than CL_SIM_TOPO_MAX_GPUS GPUs in all, a bandwidth <=
 * 0, a GPU pair with a class this model does not know), CL_ERR_NOMEM. */
cl_result cl_sim_topo_net_build(const cl_topo *t, const cl_sim_topo_params *p,
                                cl_sim_topo_net *out);

void cl_sim_topo_net_free(cl_sim_topo_net *n);

/* Bandwidth of link l in GB/s; 0 for an unknown id. This function can't fail. */
double cl_sim_topo_link_gbps(const cl_sim_topo_net *n, int l);

/* The slowest link of the route a -> b in GB/s (0 when a == b). Can't fail. */
double cl_sim_topo_path_gbps(const cl_sim_topo_net *n, int a, int b);

/* 1 when ring (n->ngpus entries) visits every GPU exactly once, else 0. */
int cl_sim_topo_ring_ok(const cl_sim_topo_net *n, const int *ring);

/* Simulated AllReduce bus bandwidth (GB/s) of nrings ring channels (nrings x
 * ngpus GPU indices, row by row) in the large-message limit, with no limit
 * per channel (sim_channels.h has NCCL's). Returns CL_OK, CL_ERR_INVALID (no
 * ring, or a ring that is not a permutation of the GPUs, with the reason),
 * CL_ERR_NOMEM. One GPU: busbw is 0. */
cl_result cl_sim_topo_rings_busbw(const cl_sim_topo_net *n, const int *rings, int nrings,
                                  double *busbw_gbps);

#endif /* COMMLAB_SIM_TOPO_H */
