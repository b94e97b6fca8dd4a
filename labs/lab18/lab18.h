/* lab18.h: types and functions of lab 18 (hierarchical collectives).
 * The driver (driver.c) calls the functions you write in lab18.c; ring.c gives you
 * lab05's ring collectives on any communicator. */
#ifndef COMMLAB_LAB18_H
#define COMMLAB_LAB18_H

#include "coll.h"
#include "commlab.h"

/* The two AllReduce algorithms of this lab. */
typedef enum lab18_algo {
    LAB18_FLAT = 0, /* one ring over every rank of the job (ring.c's lab18_ring_allreduce) */
    LAB18_HIER = 1  /* your two-level AllReduce: node, rail, node */
} lab18_algo;

/* A machine as the cost model sees it (SI units: bytes per second, seconds).
 * Every node holds ranks_per_node ranks and nics_per_node NICs; rank i of a node
 * reaches the network through NIC i * nics_per_node / ranks_per_node. */
typedef struct lab18_machine {
    int nodes, ranks_per_node, nics_per_node;
    double bw_intra;  /* one rank's bandwidth to the other ranks of its node, each direction */
    double bw_nic;    /* one NIC's bandwidth, each direction */
    double lat_intra; /* one step of a ring inside a node (a message and its hand-off) */
    double lat_inter; /* one step of a ring across nodes */
    double launch;    /* fixed cost of one collective call, whatever the algorithm */
} lab18_machine;

/* --- written by the student in lab18.c, in the order of the handout --- */

/* TODO 1: from the world communicator and this rank's node (0..nodes-1; ranks of a
 * node need not be consecutive), create node_comm (the ranks of this node, in world
 * rank order) and rail_comm (the ranks that have this rank's position in their
 * nodes, one per node, in node order). */
cl_result lab18_split(cl_comm *world, int node, cl_comm **node_comm, cl_comm **rail_comm);

/* TODO 2: the two-level AllReduce on the communicators of TODO 1: recvbuf (count
 * elements) gets the reduction of every rank's sendbuf. Every node has the same number
 * of ranks. scratch holds max(count, 2 * (count / size(node_comm) + 1)) elements (4 KiB
 * at least). Same rules as lab05: point-to-point transfers, cl_reduce_local and
 * cl_copy_local only; sendbuf is never written. */
cl_result lab18_hier_allreduce(cl_comm *node_comm, cl_comm *rail_comm, const void *sendbuf,
                               void *recvbuf, size_t count, cl_dtype t, cl_op op, void *scratch);

/* TODO 3: the predicted time (seconds) of one AllReduce of `bytes` bytes per rank with
 * algorithm algo on machine m. */
double lab18_predict(const lab18_machine *m, lab18_algo algo, double bytes);

/* TODO 4: the algorithm to run for `bytes` bytes per rank on machine m. */
lab18_algo lab18_choose(const lab18_machine *m, double bytes);

/* --- given (ring.c): lab05's ring collectives on any communicator c --- */

/* Blocks of count elements over p ranks, as cl_coll_block() (coll.h): block i has
 * count / p elements, one more when i < count % p, in rank order. */

/* ReduceScatter: recvbuf (block rank(c) long) gets block rank(c) of the reduction of
 * every rank's sendbuf (count elements); scratch holds 2 * (count / p + 1) elements. */
cl_result lab18_ring_reduce_scatter(cl_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                    cl_dtype t, cl_op op, void *scratch);

/* AllGather: sendbuf holds this rank's block; recvbuf gets all count elements. sendbuf
 * may be recvbuf + this rank's offset (in place). */
cl_result lab18_ring_allgather(cl_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                               cl_dtype t);

/* AllReduce (ReduceScatter, then AllGather): recvbuf gets the reduction of every rank's
 * sendbuf; sendbuf may equal recvbuf (in place). scratch as for the ReduceScatter. */
cl_result lab18_ring_allreduce(cl_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                               cl_dtype t, cl_op op, void *scratch);

#endif /* COMMLAB_LAB18_H */
