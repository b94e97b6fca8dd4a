/* lab04.c: lab 04, NCCL principles: ring channels and the double binary tree.
 *
 * You search ring channels that maximise the AllReduce bus bandwidth of a
 * recorded server (every link a ring crosses is shared by all channels that
 * cross it, and one channel moves at most the machine's channel cap), build
 * NCCL's double binary tree, and export your channels in NCCL's graph XML so
 * that NCCL_GRAPH_FILE can load them. Read labs/lab04/README.md first; the
 * TODOs below are in the order of its sections. Build with `make lab04`,
 * grade with `./grade lab04`.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lab04.h"

cl_result lab04_ring_bottleneck(const lab04_machine *m, const int *ring, double *gbps)
{
    // TODO(lab04) 1: the bandwidth of one ring alone.
    //   Check that ring is a permutation of 0..ngpus-1 (else cl_set_error + CL_ERR_INVALID).
    //   Walk the route of every edge of the ring (the last GPU back to the first too),
    //   count how often each link is used, and take the slowest share; one channel
    //   never moves more than m->channel_cap_gbps.
    (void)m, (void)ring, (void)gbps;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab04_search_rings(const lab04_machine *m, int rings[][LAB04_MAX_GPUS], int max_rings,
                             int *nrings)
{
    // TODO(lab04) 2: search ring channels as NCCL's search.cc does (handout section 2).
    //   At most max_rings rings, each visiting every GPU once, into rings[][], and their
    //   number in *nrings: the set that gives the highest bus bandwidth when every ring
    //   carries an equal share of the data. Without a search you get one ring in index
    //   order, and that is slow on most machines.
    (void)m, (void)rings, (void)max_rings, (void)nrings;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab04_double_tree(int n, const int *order, lab04_tree *t0, lab04_tree *t1)
{
    // TODO(lab04) 3: NCCL's double binary tree over order[0..n) (handout section 3:
    //   ncclGetBtree, then its mirror or shift). Store every GPU's parent in up[] and its
    //   children in down[][] of t0 and t1 (-1: none). Reject n out of range or an order
    //   that is not a permutation.
    (void)n, (void)order, (void)t0, (void)t1;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab04_write_graph_xml(const lab04_machine *m, const int rings[][LAB04_MAX_GPUS],
                                int nrings, char *xml, size_t cap)
{
    // TODO(lab04) 4: the graph file NCCL_GRAPH_FILE loads (src/graph/search.cc,
    //   ncclTopoGetXmlFromGraphs writes it; the handout shows its form).
    //   <graphs version="1"> with graph id 0 (ring pattern) and graph id 1 (tree pattern),
    //   the same channels in each, in your rings' order, after NCCL's channel
    //   duplication; speedintra = the GB/s of one channel, typeintra = the slowest path
    //   type your rings use. Write it into xml (at most cap bytes, '\0'-terminated).
    (void)m, (void)rings, (void)nrings, (void)xml, (void)cap;
    return CL_ERR_NOT_IMPLEMENTED;
}
