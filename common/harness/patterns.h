/* patterns.h: the message patterns of the classic collective algorithms, as trace checks.
 *
 * A collective lab that asks for one algorithm scores that algorithm, not any
 * correct collective: each function here has the type of cl_coll_entry.pattern
 * (coll_suite.h) and says whether one rank's trace of one call shows the
 * algorithm's messages. Only transfers are compared (sends and receives of
 * more than 0 bytes, each direction in its own order), so blocking or
 * non-blocking calls, groups and local copies are the student's choice; every
 * transfer must use the communicator the collective was given.
 *
 * p ranks, p2 the largest power of two <= p, rem = p - p2. Where p is not a
 * power of two, recursive doubling and halving-doubling use MPICH's fold
 * (Thakur, Rabenseifner and Gropp, IJHPCA 19(1), 2005): ranks 0 .. 2rem-1 pair
 * up, each even rank sends its whole vector to the odd rank above it, sits the
 * algorithm out and receives the result from it at the end; the p2 others run
 * the algorithm as newrank r/2 (the odd ranks below 2rem) or r - rem.
 * Binomial trees are those of MPICH's binomial Broadcast: with vr = (r - root)
 * mod p, the parent of vr clears its lowest set bit, its children are vr + 2^k
 * below that bit (and below p).
 */
#ifndef COMMLAB_PATTERNS_H
#define COMMLAB_PATTERNS_H

#include "coll_suite.h"

/* Ring AllReduce (ReduceScatter then AllGather, lab05): 2(p-1) blocks of the
 * cl_coll_block() partition to rank r+1, as many from rank r-1. */
int cl_pattern_ring_allreduce(const cl_comm *comm, const cl_coll_args *a, const cl_trace_event *ev,
                              int n, char *why, size_t len);

/* Recursive doubling AllReduce: log2(p2) exchanges of the whole vector with
 * newrank xor 1, 2, 4, ... in that order, inside the fold. */
int cl_pattern_recursive_doubling(const cl_comm *comm, const cl_coll_args *a,
                                  const cl_trace_event *ev, int n, char *why, size_t len);

/* Rabenseifner's AllReduce (recursive halving ReduceScatter, recursive
 * doubling AllGather) inside the fold: log2(p2) exchanges whose size halves
 * from p2/2 blocks to one block (of p2 blocks), then log2(p2) that double it
 * back, each phase with newrank xor every distance once, in any order.
 * Vectors shorter than p2 elements are not checked (empty blocks). */
int cl_pattern_halving_doubling(const cl_comm *comm, const cl_coll_args *a,
                                const cl_trace_event *ev, int n, char *why, size_t len);

/* Binomial-tree Broadcast from a->root, Reduce to a->root, and the AllReduce
 * made of a Reduce to rank 0 and a Broadcast from rank 0: the whole vector
 * once over every tree edge; children in any order. */
int cl_pattern_binomial_bcast(const cl_comm *comm, const cl_coll_args *a, const cl_trace_event *ev,
                              int n, char *why, size_t len);
int cl_pattern_binomial_reduce(const cl_comm *comm, const cl_coll_args *a, const cl_trace_event *ev,
                               int n, char *why, size_t len);
int cl_pattern_binomial_allreduce(const cl_comm *comm, const cl_coll_args *a,
                                  const cl_trace_event *ev, int n, char *why, size_t len);

#endif /* COMMLAB_PATTERNS_H */
