/* lab06.h: types and functions of lab 06 (latency-optimal collectives and a size-based selector).
 * The harness calls the functions you write in lab06.c through driver.c; ring.c is given. */
#ifndef COMMLAB_LAB06_H
#define COMMLAB_LAB06_H

#include "commlab.h"

/* The AllReduce algorithms the selector chooses from. */
typedef enum lab06_algo {
    LAB06_RING,               /* lab05's ring: ReduceScatter + AllGather (given, ring.c) */
    LAB06_RECURSIVE_DOUBLING, /* log p exchanges of the whole vector */
    LAB06_RABENSEIFNER,       /* recursive halving ReduceScatter + recursive doubling AllGather */
    LAB06_BINOMIAL_TREE,      /* binomial Reduce to rank 0, then binomial Broadcast */
    LAB06_ALGO_COUNT
} lab06_algo;

/* The alpha-beta-gamma model of the machine: a message of n bytes costs
 * alpha + n * beta, reducing n bytes costs n * gamma. The harness measures it
 * (lab06 calibrate) and gives every rank the same one. */
typedef struct lab06_model {
    double alpha_s;
    double beta_s_per_byte;
    double gamma_s_per_byte;
} lab06_model;

/* Conventions (as in lab05): count is the total number of elements of type
 * t; buffers come from cl_mem_alloc(); sendbuf and recvbuf (count elements)
 * do not overlap and sendbuf must not be modified; scratch holds at least
 * count elements. Any number of ranks p >= 1, not only powers of two. Only
 * the point-to-point interface and the local operations; each algorithm must
 * send the messages of its own pattern (the handout's), which the harness
 * checks on every rank after every call. */

/* Given (ring.c): lab05's ring AllReduce. */
cl_result lab06_ring_allreduce(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                               cl_dtype t, cl_op op, void *scratch);

/* --- written by the student in lab06.c, in the order of the handout --- */

cl_result lab06_recursive_doubling(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                                   cl_dtype t, cl_op op, void *scratch);

cl_result lab06_rabenseifner(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                             cl_dtype t, cl_op op, void *scratch);

/* Binomial-tree Broadcast of buf (count elements) from root, in place. */
cl_result lab06_binomial_bcast(cl_comm *comm, void *buf, size_t count, cl_dtype t, int root);

/* Binomial-tree Reduce of every rank's sendbuf into root's recvbuf (recvbuf
 * is work space on the other ranks). */
cl_result lab06_binomial_reduce(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                                cl_dtype t, cl_op op, int root, void *scratch);

/* AllReduce = binomial Reduce to rank 0 + binomial Broadcast from rank 0. */
cl_result lab06_tree_allreduce(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                               cl_dtype t, cl_op op, void *scratch);

/* Modelled time of algorithm a for an AllReduce of `bytes` on p ranks
 * (the handout's formulas); 0 when p == 1. */
double lab06_cost(lab06_algo a, int p, double bytes, const lab06_model *m);

/* The algorithm with the smallest lab06_cost (any one of them on a tie). */
lab06_algo lab06_select(int p, double bytes, const lab06_model *m);

/* AllReduce with the algorithm lab06_select() picks for this size. */
cl_result lab06_allreduce(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                          cl_dtype t, cl_op op, void *scratch, const lab06_model *m);

#endif /* COMMLAB_LAB06_H */
