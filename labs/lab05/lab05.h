/* lab05.h: types and functions of lab 05 (ring collectives over point-to-point).
 * The driver (driver.c) calls the functions you write in lab05.c. */
#ifndef COMMLAB_LAB05_H
#define COMMLAB_LAB05_H

#include "commlab.h"

/* Conventions shared by every function below (the harness checks each call):
 * - count is always the TOTAL number of elements of type t. The p ranks own
 *   the blocks of lab05_block(), in rank order: block i has count/p elements,
 *   one more when i < count % p. count need not divide by p, and may be
 *   smaller than p (some blocks are then empty).
 * - Buffers come from cl_mem_alloc(): on "sim" and "gpu" they are handles your
 *   host code must not dereference. sendbuf and recvbuf do not overlap
 *   (except where said), sendbuf must not be modified, and nothing may be
 *   written past the end of recvbuf.
 * - scratch is yours: at least max(count, 2 * (count / p + 1)) elements and
 *   4 KiB, contents undefined on entry.
 * - Only the point-to-point interface (cl_send, cl_recv, cl_sendrecv,
 *   cl_isend/cl_irecv/cl_wait, cl_group_start/end) and the local operations
 *   cl_reduce_local and cl_copy_local. Your program holds no library
 *   collective to call: it runs apart from the harness, which performs and
 *   records every operation you ask for. */

/* --- written by the student in lab05.c, in the order of the handout --- */

/* Block i of count elements over p ranks: first element *off, *len elements. */
void lab05_block(size_t count, int p, int i, size_t *off, size_t *len);

/* Ring ReduceScatter: sendbuf holds count elements on every rank; afterwards
 * recvbuf (block `rank` long) holds block `rank` of the reduction over all ranks. */
cl_result lab05_ring_reduce_scatter(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                                    cl_dtype t, cl_op op, void *scratch);

/* Ring AllGather: sendbuf holds this rank's block; afterwards recvbuf holds
 * all count elements (every rank's block at its offset). sendbuf may also be
 * recvbuf + this rank's offset (in place). */
cl_result lab05_ring_allgather(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                               cl_dtype t);

/* Ring AllReduce: recvbuf (count elements) gets the reduction of every
 * rank's sendbuf, from your ReduceScatter and AllGather. */
cl_result lab05_ring_allreduce(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                               cl_dtype t, cl_op op, void *scratch);

/* Pipelined chain Broadcast: the root's sendbuf (count elements) reaches
 * every rank's recvbuf, the root's too, along the chain root, root+1, ...,
 * root-1 (mod p), in chunks of chunk_bytes rounded down to whole elements
 * (at least one element; the last chunk may be shorter). sendbuf is read on
 * the root only. */
cl_result lab05_pipelined_broadcast(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                                    cl_dtype t, int root, size_t chunk_bytes);

/* The chain's links, as the harness measured them before asking you for a
 * chunk size: hop[i] is the link from rank i to rank i + 1 (mod p). A message
 * of n bytes takes about alpha_s + n / bytes_per_s on it. */
#define LAB05_MAX_HOPS 64
typedef struct lab05_link {
    double alpha_s;     /* time per message, in seconds */
    double bytes_per_s; /* bandwidth, in bytes per second */
} lab05_link;
typedef struct lab05_chain {
    int p; /* ranks (at most LAB05_MAX_HOPS) */
    lab05_link hop[LAB05_MAX_HOPS];
} lab05_chain;

/* Your decision: the chunk size, in bytes, of a pipelined Broadcast of
 * count elements of elem_bytes from root over chain. The harness passes it to
 * lab05_pipelined_broadcast() and measures the consequence. It must be at
 * least 1 and cut the message into at most LAB05_MAX_CHUNKS chunks. */
#define LAB05_MAX_CHUNKS 65536
size_t lab05_broadcast_chunk(size_t count, size_t elem_bytes, int root, const lab05_chain *chain);

#endif /* COMMLAB_LAB05_H */
