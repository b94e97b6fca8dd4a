/* sim_graph.h: the simulated machine's graph: vertices (GPUs, switches, NICs) and directed links.
 *
 * Invariants after cl_sim_graph_finalize(): adj_off has nv + 1 entries and
 * adj[adj_off[v] .. adj_off[v+1]) are the ids of the links leaving v, in the
 * order they were added. Bandwidths are in bytes per second, latencies in
 * seconds. Links are directed: a full-duplex cable is two links.
 */
#ifndef COMMLAB_SIM_GRAPH_H
#define COMMLAB_SIM_GRAPH_H

#include <stddef.h>

#include "result.h"

typedef enum cl_sim_vkind {
    CL_SIM_V_GPU,
    CL_SIM_V_NVSWITCH,
    CL_SIM_V_PCISW,
    CL_SIM_V_CPU,
    CL_SIM_V_NIC,
    CL_SIM_V_SWITCH /* a fabric switch (leaf, spine, core) */
} cl_sim_vkind;

typedef enum cl_sim_lkind {
    CL_SIM_L_NVLINK, /* NVLink (to a peer GPU or an NVSwitch) */
    CL_SIM_L_PCI,    /* PCIe: device to switch, switch to host bridge */
    CL_SIM_L_SYS,    /* CPU to CPU (QPI/UPI/xGMI) */
    CL_SIM_L_NET     /* NIC port and fabric cables */
} cl_sim_lkind;

typedef struct cl_sim_link {
    int src, dst; /* vertex ids */
    double bw;    /* bytes per second */
    double lat;   /* seconds */
    cl_sim_lkind kind;
} cl_sim_link;

typedef struct cl_sim_graph {
    int nv, cap_v;
    unsigned char *vkind; /* cl_sim_vkind per vertex */
    int *vlevel;          /* fabric switch level (1 = leaf), 0 otherwise */
    int nl, cap_l;
    cl_sim_link *l;
    int *adj_off; /* CSR of outgoing links, built by finalize */
    int *adj;
} cl_sim_graph;

/* Add a vertex; returns its id, or -1 when out of memory. */
int cl_sim_graph_add_vertex(cl_sim_graph *g, cl_sim_vkind kind, int level);

/* Add a directed link; returns its id, or -1 when out of memory. */
int cl_sim_graph_add_link(cl_sim_graph *g, int src, int dst, double bw, double lat,
                          cl_sim_lkind kind);

/* Add both directions of a cable. Returns the id of the src->dst link, -1 on failure. */
int cl_sim_graph_add_duplex(cl_sim_graph *g, int a, int b, double bw, double lat,
                            cl_sim_lkind kind);

/* Build the adjacency arrays. Returns CL_ERR_NOMEM on allocation failure. */
cl_result cl_sim_graph_finalize(cl_sim_graph *g);

/* Free everything; the graph is empty afterwards. This function can't fail. */
void cl_sim_graph_free(cl_sim_graph *g);

/* Grow *p (an array of *cap elements of elem bytes) to hold at least need,
 * doubling (first size 64). Returns 0, or -1 when realloc fails (*p kept). */
int cl_sim_grow(void **p, int *cap, int need, size_t elem);

#endif /* COMMLAB_SIM_GRAPH_H */
