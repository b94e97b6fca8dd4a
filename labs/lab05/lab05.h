/* lab05.h: types and functions of lab 05 (ring collectives over point-to-point).
 * The driver (driver.c) calls the functions you write in lab05.c. */
#ifndef COMMLAB_LAB05_H
#define COMMLAB_LAB05_H

#include "commlab.h"

/* Conventions shared by every function below (the harness checks them):
 * - count is always the TOTAL number of elements of type t; the p ranks own
 *   the blocks of lab05_block(), in rank order: block i has count/p elements,
 *   one more when i < count % p (count need not be divisible by p, and may be
 *   smaller than p: some blocks are then empty).
 * - Buffers come from cl_mem_alloc(); sendbuf and recvbuf do not overlap
 *   (except where said) and sendbuf must not be modified.
 * - scratch is yours: at least max(count, 2 * (count / p + 1)) elements
 *   (4 KiB at least), contents undefined on entry.
 * - Use only the point-to-point interface (cl_send, cl_recv, cl_sendrecv,
 *   cl_group_start/end) and cl_reduce_local / cl_copy_local. Calling MPI's or
 *   NCCL's collectives (or cl_baseline_allreduce) is forbidden and detected. */

/* --- written by the student in lab05.c, in the order of the handout --- */

/* Block i of count elements over p ranks: first element *off, *len elements. */
void lab05_block(size_t count, int p, int i, size_t *off, size_t *len);

/* Ring ReduceScatter: sendbuf holds count elements on every rank; afterwards
 * recvbuf (block `rank` long) holds block `rank` of the reduction over all ranks. */
cl_result lab05_ring_reduce_scatter(cl_comm *comm, const void *sendbuf, void *recvbuf,
                                    size_t count, cl_dtype t, cl_op op, void *scratch);

/* Ring AllGather: sendbuf holds this rank's block; afterwards recvbuf holds
 * all count elements (every rank's block at its offset). sendbuf may also be
 * recvbuf + this rank's offset (in place). */
cl_result lab05_ring_allgather(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                               cl_dtype t);

/* Ring AllReduce = ReduceScatter then AllGather: recvbuf (count elements)
 * gets the reduction of every rank's sendbuf. */
cl_result lab05_ring_allreduce(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                               cl_dtype t, cl_op op, void *scratch);

/* Pipelined (chain) Broadcast: the root's sendbuf reaches every rank's
 * recvbuf (the root's too), in chunks of chunk_bytes along the chain
 * root, root+1, ..., root-1 (mod p). */
cl_result lab05_pipelined_broadcast(cl_comm *comm, const void *sendbuf, void *recvbuf,
                                    size_t count, cl_dtype t, int root, size_t chunk_bytes);

#endif /* COMMLAB_LAB05_H */
