/* lab04.h: types and functions of lab 04 (NCCL principles: ring channels and trees).
 * The driver (driver.c) calls the functions you write in lab04.c. */
#ifndef COMMLAB_LAB04_H
#define COMMLAB_LAB04_H

#include <stdio.h>

#include "commlab.h"
#include "sim/sim_topo.h"

#define LAB04_MAX_GPUS CL_SIM_TOPO_MAX_GPUS
#define LAB04_MAX_CHANNELS 16 /* ring channels one search may return */

/* One binary tree over n ranks, as NCCL keeps it (struct ncclTree): for every
 * rank its parent (up, -1 for the root) and up to two children (down, -1 when
 * absent). Ranks here are GPU indices. */
typedef struct lab04_tree {
    int n;
    int up[LAB04_MAX_GPUS];
    int down[LAB04_MAX_GPUS][2];
} lab04_tree;

/* The machine you search on (common/sim/sim_topo.h): net->ngpus GPUs; the route
 * from GPU a to GPU b is net->npath[a][b] directed links net->path[a][b][k],
 * link l carries cl_sim_topo_link_gbps(net, l) GB/s in its direction, and
 * net->path_code[a][b] is NCCL's name for the route ("NVL", "PIX", "SYS"...). */

/* --- written by the student in lab04.c, in the order of the handout --- */

/* The bandwidth one ring channel gets alone (GB/s): every edge ring[i] ->
 * ring[i+1] (and the last back to the first) follows its route; a link used k
 * times by the ring gives each use 1/k of its bandwidth; the ring runs at its
 * slowest use. CL_ERR_INVALID when ring is not a permutation of the GPUs. */
cl_result lab04_ring_bottleneck(const cl_sim_topo_net *net, const int *ring, double *gbps);

/* Search ring channels for an AllReduce on net: at most max_rings (<=
 * LAB04_MAX_CHANNELS) Hamiltonian rings, written to rings[c][0..ngpus), that
 * together give the highest bus bandwidth when the data is split evenly over
 * them and all run at once. *nrings receives how many were found (>= 1). */
cl_result lab04_search_rings(const cl_sim_topo_net *net, int rings[][LAB04_MAX_GPUS],
                             int max_rings, int *nrings);

/* NCCL's double binary tree over the n ranks order[0..n): tree 0 is NCCL's
 * btree over positions 0..n-1, tree 1 its mirror (n even) or its shift by one
 * (n odd); position p is GPU order[p]. Fill t0 and t1 (ranks = GPU indices). */
cl_result lab04_double_tree(int n, const int *order, lab04_tree *t0, lab04_tree *t1);

/* Write the rings as an NCCL graph file (NCCL_GRAPH_FILE): graph id 0 (ring
 * pattern) with one channel per ring, and graph id 1 (tree pattern) whose
 * channels are the same GPU orders used as chains. */
cl_result lab04_write_graph_xml(FILE *f, const cl_sim_topo_net *net,
                                const int rings[][LAB04_MAX_GPUS], int nrings);

#endif /* COMMLAB_LAB04_H */
