/* lab04.h: types and functions of lab 04 (NCCL principles: ring channels and trees).
 * The harness (driver.c) calls the functions you write in lab04.c. */
#ifndef COMMLAB_LAB04_H
#define COMMLAB_LAB04_H

#include <stddef.h>

#include "commlab.h"

#define LAB04_MAX_GPUS     16    /* GPUs of one machine */
#define LAB04_MAX_HOPS     16    /* links of one route */
#define LAB04_MAX_LINKS    256   /* directed links of one machine */
#define LAB04_MAX_CHANNELS 16    /* ring channels of one search (NCCL: MAXCHANNELS / 2) */
#define LAB04_MAX_TREE     64    /* ranks of one double binary tree */
#define LAB04_XML_BYTES    16384 /* room for the graph file */

/* The machine you search on, as NCCL's topology code sees it: ngpus GPUs;
 * the route from GPU a to GPU b crosses the npath[a][b] directed links
 * path[a][b][0..npath[a][b]), link l carries link_gbps[l] GB/s in its
 * direction, and path_type[a][b] is NCCL's name for the route: "NVL" (an
 * NVLink or the NVSwitch), "NVB" (NVLink through a third GPU), "PIX", "PXB",
 * "PHB" (PCIe, through the CPU), "SYS" (and the link between CPUs).
 * One channel (one SM) never moves more than channel_cap_gbps: the first
 * speed of NCCL's search table for this GPU generation (sm). */
typedef struct lab04_machine {
    int ngpus;
    int sm;                  /* compute capability x 10: 70 V100, 80 A100, 89 RTX 4090, 90 H100 */
    double channel_cap_gbps; /* 40 before Hopper, 60 from Hopper on */
    int nlinks;
    double link_gbps[LAB04_MAX_LINKS];
    int npath[LAB04_MAX_GPUS][LAB04_MAX_GPUS];
    int path[LAB04_MAX_GPUS][LAB04_MAX_GPUS][LAB04_MAX_HOPS];
    char path_type[LAB04_MAX_GPUS][LAB04_MAX_GPUS][4];
} lab04_machine;

/* One binary tree over n ranks, as NCCL keeps it (struct ncclTree): for every
 * rank its parent (up, -1 for the root) and up to two children (down, -1 when
 * absent). Ranks here are GPU indices. */
typedef struct lab04_tree {
    int n;
    int up[LAB04_MAX_TREE];
    int down[LAB04_MAX_TREE][2];
} lab04_tree;

/* --- written by the student in lab04.c, in the order of the handout --- */

/* The bandwidth one ring channel gets alone (GB/s): every edge ring[i] ->
 * ring[i+1] (and the last back to the first) follows its route; a link used k
 * times by the ring gives each use 1/k of its bandwidth; the ring runs at its
 * slowest use, and never above m->channel_cap_gbps. CL_ERR_INVALID when ring
 * is not a permutation of the GPUs. */
cl_result lab04_ring_bottleneck(const lab04_machine *m, const int *ring, double *gbps);

/* Search ring channels for an AllReduce on m: at most max_rings (<=
 * LAB04_MAX_CHANNELS) Hamiltonian rings, written to rings[c][0..ngpus), that
 * together give the highest bus bandwidth when the data is split evenly over
 * them and all run at once. *nrings receives how many were found (>= 1). */
cl_result lab04_search_rings(const lab04_machine *m, int rings[][LAB04_MAX_GPUS], int max_rings,
                             int *nrings);

/* NCCL's double binary tree over the n ranks order[0..n): tree 0 is NCCL's
 * btree over positions 0..n-1, tree 1 its mirror (n even) or its shift by one
 * (n odd); position p is GPU order[p]. Fill t0 and t1 (ranks = GPU indices).
 * CL_ERR_INVALID unless 1 <= n <= LAB04_MAX_TREE and order is a permutation. */
cl_result lab04_double_tree(int n, const int *order, lab04_tree *t0, lab04_tree *t1);

/* Write the rings as the graph file NCCL_GRAPH_FILE loads, as NCCL itself
 * would have written them (NCCL_GRAPH_DUMP_FILE) after duplicating the
 * channels: a '\0'-terminated text of at most cap bytes into xml.
 * CL_ERR_INVALID when it does not fit. */
cl_result lab04_write_graph_xml(const lab04_machine *m, const int rings[][LAB04_MAX_GPUS],
                                int nrings, char *xml, size_t cap);

#endif /* COMMLAB_LAB04_H */
