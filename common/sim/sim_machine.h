/* sim_machine.h: a simulated cluster: nodes built from a system file, a fabric, and routes.
 *
 * Layout of the graph: node n owns vertices [n*tv, (n+1)*tv) and links
 * [n*tl, (n+1)*tl), copies of one node template; the fabric's switches and
 * cables come after all nodes. Ranks are placed node-major: rank r is GPU
 * r % gpus of node r / gpus. Host h = n * nics + i is NIC i of node n.
 */
#ifndef COMMLAB_SIM_MACHINE_H
#define COMMLAB_SIM_MACHINE_H

#include "result.h"
#include "sim_graph.h"
#include "sim_system.h"

#define CL_SIM_MAX_LOCAL 64 /* GPUs or NICs per node */
#define CL_SIM_MAX_PATH  64
#define CL_SIM_MAX_SW    64 /* PCIe switches per node */

/* Latency classes of a path, as NCCL's tuning model distinguishes them. */
typedef enum cl_sim_pclass { CL_SIM_P_NVL, CL_SIM_P_PCI, CL_SIM_P_NET } cl_sim_pclass;

/* Changes to a system file's job shape and fabric. Zero-initialise, then set
 * what changes; every field's 0 means "keep the system's value" except
 * routing, which must be set to -1 to keep it. */
typedef struct cl_sim_overrides {
    int nodes, gpus_per_node, nics_per_node; /* 0 = keep the system's value */
    double nic_gbps;                         /* 0 = keep */
    int routing;                             /* -1 = keep, else cl_sim_routing */
    int fabric;                              /* 0 = keep, else 1 + cl_sim_fabric_kind */
    double oversubscription;                 /* 0 = keep, else down:up ratio of a leaf, >= 1 */
    int ring_order;                          /* 0 = keep (rail), else cl_sim_ring_layout */
    int pxn;                                 /* 0 = keep, 1 = on, 2 = off */
} cl_sim_overrides;

/* Largest machine cl_sim_machine_build accepts (GPUs): four times the largest
 * the speed goals cover; beyond it the routing tables alone take gigabytes. */
#define CL_SIM_MAX_GPUS 131072

typedef struct cl_sim_machine {
    cl_sim_system sys;
    int nodes, gpus, nics; /* per node, after overrides */
    int nranks;
    int ring_order; /* cl_sim_ring_layout */
    cl_sim_graph g;
    /* node template */
    int tv, tl;
    int gpu_v[CL_SIM_MAX_LOCAL];   /* template vertex of local GPU i */
    int nic_v[CL_SIM_MAX_LOCAL];   /* template vertex of local NIC i */
    int gpu_nic[CL_SIM_MAX_LOCAL]; /* the NIC NCCL would give GPU i (nearest, spread) */
    /* template routes between local devices: device d < gpus is GPU d, else NIC d - gpus */
    int *troute_off;       /* (gpus+nics)^2 + 1 */
    int *troute;           /* template link ids */
    unsigned char *tclass; /* cl_sim_pclass of each template route */
    /* fabric */
    int nhosts;
    int sw_first, nsw;      /* switch vertices [sw_first, sw_first + nsw) */
    int *nic_up, *nic_down; /* per host: NIC->leaf and leaf->NIC link ids */
    int *host_leaf;         /* per host: leaf index */
    int *host_index;        /* per host: position in fabric order (D-mod-K) */
    int nleaves;
    int *leaf_v;          /* leaf index -> vertex */
    int *leaf_of_v;       /* switch vertex - sw_first -> leaf index or -1 */
    unsigned short *dist; /* [switch][leaf] hops, 0xffff unreachable */
    int *route_load;      /* per link: routes assigned (min-hop balancing) */
} cl_sim_machine;

/* Build the machine for sys with overrides (NULL: none). Returns CL_OK,
 * CL_ERR_INVALID with a reason for impossible sizes, CL_ERR_NOMEM. */
cl_result cl_sim_machine_build(const cl_sim_system *sys, const cl_sim_overrides *ov,
                               cl_sim_machine *m);

/* Load a recorded system by name and build it. */
cl_result cl_sim_machine_load(const char *system, const cl_sim_overrides *ov, cl_sim_machine *m);

void cl_sim_machine_free(cl_sim_machine *m);

/* The path from rank src to rank dst. Between nodes the traffic leaves through
 * local NIC `nic` of the source node and enters through NIC `nic` of the
 * destination node (rail-aligned, as NCCL's rings and PXN do). nic < 0: the
 * path NCCL's p2p transport takes: with sys.pxn, relayed over NVLink to the
 * receiver's rail (leave and enter by the receiver GPU's NIC); without, leave
 * by the sender GPU's NIC and enter by the receiver GPU's NIC, crossing rails
 * through the spines when they differ. qp varies the ECMP hash. Writes up to
 * max link ids to path and the path class to *cls; returns the length, or -1
 * with a reason when there is no route. */
int cl_sim_route(cl_sim_machine *m, int src, int dst, int nic, int qp, int *path, int max,
                 cl_sim_pclass *cls);

/* The path from rank src to rank dst leaving the source node by its NIC
 * nic_src and entering the destination node by its NIC nic_dst (both >= 0);
 * otherwise as cl_sim_route. */
int cl_sim_route_nics(cl_sim_machine *m, int src, int dst, int nic_src, int nic_dst, int qp,
                      int *path, int max, cl_sim_pclass *cls);

/* Route between two fabric hosts (NIC ports): NIC up-link, switches, NIC
 * down-link. Returns the length or -1 when unreachable. */
int cl_sim_route_fabric(cl_sim_machine *m, int hsrc, int hdst, int qp, int *path, int max);

/* Compute the routes between the devices of one node (node 0 is the template). */
cl_result cl_sim_route_template(cl_sim_machine *m);

/* Build the fabric of m->nhosts hosts (generators in sim_fabric.c). */
cl_result cl_sim_fabric_build(cl_sim_machine *m);

/* Fill the distance table used by cl_sim_route_fabric. */
cl_result cl_sim_route_prepare(cl_sim_machine *m);

/* Sum of link latencies along a path, seconds. This function can't fail. */
double cl_sim_path_latency(const cl_sim_machine *m, const int *path, int len);

#endif /* COMMLAB_SIM_MACHINE_H */
