/* lab04.c: lab 04, NCCL principles: ring channels and the double binary tree.
 *
 * You search ring channels that maximise the AllReduce bus bandwidth of a
 * recorded server (every link a ring crosses is shared by all channels that
 * cross it), build NCCL's double binary tree, and export your channels in
 * NCCL's graph XML so that NCCL_GRAPH_FILE can load them. Read
 * labs/lab04/README.md first; the TODOs below are in the order of its
 * sections. Build with `make lab04`, grade with `./grade lab04`.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lab04.h"


cl_result lab04_ring_bottleneck(const cl_sim_topo_net *net, const int *ring, double *gbps)
{
    // TODO(lab04) 1: the bandwidth of one ring alone.
    //   Check that ring is a permutation of 0..ngpus-1 (else cl_set_error + CL_ERR_INVALID).
    //   For every edge a -> b of the ring (the last GPU back to the first) walk its route
    //   net->path[a][b][0 .. net->npath[a][b]) and count how often each link is used.
    //   *gbps = min over used links of cl_sim_topo_link_gbps(net, l) / uses(l).
    (void)net, (void)ring, (void)gbps;
    return CL_ERR_NOT_IMPLEMENTED;
}


cl_result lab04_search_rings(const cl_sim_topo_net *net, int rings[][LAB04_MAX_GPUS],
                             int max_rings, int *nrings)
{
    // TODO(lab04) 2: search ring channels, as NCCL's search.cc does.
    //   A channel reserves a speed s (GB/s) on every link of every route it uses; try
    //   speeds from high to low (e.g. every link bandwidth / k, k = 1..max_rings), and at
    //   each speed find as many rings as the links allow (depth-first from GPU 0,
    //   backtracking when a ring cannot close). Score a set of C rings by
    //   C x (min over links of bandwidth / uses) and keep the best set.
    //   An index-order ring (0,1,...,n-1) ignores NVLink: on a DGX-1 it crosses the
    //   6 GB/s SMP link. Return at most max_rings rings and set *nrings.
    (void)net, (void)rings, (void)max_rings, (void)nrings;
    return CL_ERR_NOT_IMPLEMENTED;
}


cl_result lab04_double_tree(int n, const int *order, lab04_tree *t0, lab04_tree *t1)
{
    // TODO(lab04) 3: NCCL's double binary tree (src/graph/trees.cc).
    //   Tree 0 over positions 0..n-1: position 0 is the root, with no parent and one
    //   child, the largest power of two below n. For p > 0, bit = lowest set bit of p;
    //   parent = (p ^ bit) | (bit << 1), or p ^ bit when that is >= n;
    //   children p - bit/2 and p + bit/2 (halve the step while the second is >= n);
    //   none when bit == 1.
    //   Tree 1: n even -> the mirror (position p plays n-1-p); n odd -> the shift by one.
    //   Store GPU order[p] for position p in up[] and down[][] of t0 and t1 (-1: none).
    (void)n, (void)order, (void)t0, (void)t1;
    return CL_ERR_NOT_IMPLEMENTED;
}


cl_result lab04_write_graph_xml(FILE *f, const cl_sim_topo_net *net,
                                const int rings[][LAB04_MAX_GPUS], int nrings)
{
    // TODO(lab04) 4: the NCCL graph file (the format of src/graph/search.cc).
    //   <graphs version="1">
    //     <graph id="0" pattern="4" crossnic="0" nchannels="C" speedintra="S" speedinter="S"
    //            latencyinter="0" typeintra="NVL" typeinter="PIX" samechannels="0">
    //       <channel><gpu dev="0"/><gpu dev="3"/>...</channel>   one per ring, in ring order
    //     </graph>
    //     <graph id="1" pattern="1" ...> the same channels (tree chains) </graph>
    //   </graphs>
    //   S = GB/s per channel; typeintra = the slowest path type the rings use
    //   (net->path_code: NVL < PIX < PXB < PHB < SYS).
    (void)f, (void)net, (void)rings, (void)nrings;
    return CL_ERR_NOT_IMPLEMENTED;
}
