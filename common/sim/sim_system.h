/* sim_system.h: a recorded system: node shape, links, fabric and calibration constants.
 *
 * Loaded from datasets/systems/<name>.conf, a `key = value` file with `#`
 * comments (see datasets/systems/README.md for every key and its unit).
 * Protocol-indexed values are three numbers in the order LL, LL128, Simple.
 * Bandwidths in the struct are GB/s (1e9 B/s) and latencies microseconds, as
 * in the files; the machine builder converts them.
 */
#ifndef COMMLAB_SIM_SYSTEM_H
#define COMMLAB_SIM_SYSTEM_H

#include "coll.h"
#include "result.h"

#define CL_SIM_NAME_LEN    64
#define CL_SIM_PATH_LEN    512
#define CL_SIM_MAX_NVPAIRS 64

typedef enum cl_sim_node_kind {
    CL_SIM_NODE_NVSWITCH, /* every GPU has one port of nvlinks_per_gpu links to an NVSwitch */
    CL_SIM_NODE_NVLINK,   /* GPUs joined directly by the pairs in `nvlink` (DGX-1) */
    CL_SIM_NODE_PCIE,     /* no NVLink: PCIe switches, host bridges, SMP link */
    CL_SIM_NODE_TOPO      /* the links of a recorded topology file (`topology`, sim_topo.h) */
} cl_sim_node_kind;

typedef enum cl_sim_fabric_kind {
    CL_SIM_FABRIC_RAIL,      /* rail-optimised scalable units, spines across units */
    CL_SIM_FABRIC_LEAFSPINE, /* two tiers with oversubscription */
    CL_SIM_FABRIC_FATTREE    /* three-tier k-ary fat tree (Al-Fares) */
} cl_sim_fabric_kind;

typedef enum cl_sim_routing {
    CL_SIM_ROUTE_DMODK, /* destination mod k over up-ports (Zahavi) */
    CL_SIM_ROUTE_ECMP,  /* seeded hash of (src, dst, qp) */
    CL_SIM_ROUTE_MINHOP /* min-hop, ties to the up-port with the fewest routes so far */
} cl_sim_routing;

/* How ring channels cross nodes (cl_sim_overrides.ring_order). */
typedef enum cl_sim_ring_layout {
    CL_SIM_RING_RAIL = 1, /* channel c enters and leaves every node by NIC c (NCCL's rings) */
    CL_SIM_RING_NAIVE     /* node-major order rotated by c: it leaves a node by the last GPU's
                             NIC and enters the next by the first GPU's NIC (cross-rail) */
} cl_sim_ring_layout;

typedef struct cl_sim_nvpair {
    int a, b, count;
} cl_sim_nvpair;

typedef struct cl_sim_system {
    char name[CL_SIM_NAME_LEN];
    char path[CL_SIM_PATH_LEN]; /* the file it came from */
    int nodes, gpus_per_node, nics_per_node;
    cl_sim_node_kind node;
    char topology[CL_SIM_PATH_LEN]; /* node = topo: an nvidia-smi topo -m or NCCL XML file,
                                       relative to this file's folder unless absolute */
    int nvlinks_per_gpu;
    double nvlink_gbps; /* per link, per direction, NCCL effective */
    int nnvpairs;
    cl_sim_nvpair nvpairs[CL_SIM_MAX_NVPAIRS];
    int cpus; /* NUMA domains per node */
    int gpus_per_pcie_switch, nics_per_pcie_switch;
    double pcie_gbps, sys_gbps;
    double nic_gbps;     /* line rate, Gb/s */
    double nic_eff_gbps; /* effective per NIC, GB/s */
    int nvls;            /* NVLink SHARP available */
    double nvls_eff;
    cl_sim_fabric_kind fabric;
    int fabric_radix, su_nodes;
    double oversubscription;
    cl_sim_routing routing;
    unsigned ecmp_seed;
    int pxn;       /* 1: p2p traffic relayed to the receiver's rail (NCCL PXN) */
    int net_sharp; /* 1: in-network reduction (IB SHARP): NVLS across nodes */
    double nvswitch_hop_us, fabric_hop_us;
    double lat_ring_base[CL_PROTO_COUNT], lat_tree_base[CL_PROTO_COUNT];
    double lat_ring_nvl[CL_PROTO_COUNT], lat_ring_pci[CL_PROTO_COUNT], lat_ring_net[CL_PROTO_COUNT];
    double lat_tree_nvl[CL_PROTO_COUNT], lat_tree_pci[CL_PROTO_COUNT], lat_tree_net[CL_PROTO_COUNT];
    double lat_nvls_us;
    double proto_eff[CL_PROTO_COUNT];
    int proto_enabled[CL_PROTO_COUNT];
    double ll_max_gbps[3]; /* 1 node, 2 nodes, more */
    double simple_net_lat_factor;
    double tree_ch_max_gbps[3]; /* tree bus bandwidth per channel, 1, 2, >2 nodes; 0 none */
    double launch_us;           /* fixed cost per collective call */
    double hbm_gbps;            /* GPU memory bandwidth, for local copies and reductions */
} cl_sim_system;

/* Parse a system file. Returns CL_OK, CL_ERR_IO when it can't be opened,
 * CL_ERR_PARSE with "path:line: reason" for a malformed or unknown line or a
 * missing required key. */
cl_result cl_sim_system_parse(const char *path, cl_sim_system *out);

/* Find and parse a recorded system by name ("dgx-a100") or by path (anything
 * with a '/' or ending in .conf). Names are looked up in $COMMLAB_DATASETS/systems,
 * then datasets/systems in the current directory and up to three parents.
 * Returns CL_ERR_INVALID with the list of places tried if it is not found. */
cl_result cl_sim_system_load(const char *name_or_path, cl_sim_system *out);

struct cl_topo;

/* Replace the node structure of s (GPUs, NICs when the topology lists any,
 * NVLink pairs or NVSwitch port width, CPUs, PCIe switch population) by what
 * the recorded topology t shows (sim_node_topo.c has the rules); bandwidth,
 * latency and fabric constants stay s's. Returns CL_OK, CL_ERR_INVALID with
 * a reason (no GPU, too many, a link class the model does not know). */
cl_result cl_sim_system_apply_topo(cl_sim_system *s, const struct cl_topo *t);

#endif /* COMMLAB_SIM_SYSTEM_H */
