/* lab05.c: lab 05, ring collectives over the point-to-point interface.
 *
 * You write the ring ReduceScatter and AllGather that NCCL's ring algorithm
 * is made of, compose them into the ring AllReduce, and pipeline a Broadcast
 * along a chain. Read labs/lab05/README.md first; the TODOs below are in the
 * order of its sections. Build with `make lab05`, grade with `./grade lab05`.
 * Only cl_send/cl_recv/cl_sendrecv/cl_group_*, cl_reduce_local and
 * cl_copy_local: calling MPI's or NCCL's collectives is detected and fails.
 */
#include "lab05.h"

void lab05_block(size_t count, int p, int i, size_t *off, size_t *len)
{
    // TODO(lab05) 1: the block partition.
    //   base = count / p, extra = count % p. Blocks 0..extra-1 have base + 1
    //   elements, the others base; they follow each other in rank order.
    //   Example: count 10, p 4 -> lengths 3 3 2 2, offsets 0 3 6 8.
    (void)count, (void)p, (void)i;
    *off = 0;
    *len = 0;
}

cl_result lab05_ring_reduce_scatter(cl_comm *comm, const void *sendbuf, void *recvbuf,
                                    size_t count, cl_dtype t, cl_op op, void *scratch)
{
    // TODO(lab05) 2: ring ReduceScatter in p - 1 steps.
    //   right = rank + 1, left = rank - 1 (mod p). At step s (0 .. p-2) send the
    //   partial sum of block (rank - s - 1) mod p to the right and receive block
    //   (rank - s - 2) mod p from the left, then add your own contribution of
    //   that block (cl_reduce_local with sendbuf + its offset). At step 0 the
    //   partial sum is your own block of sendbuf; after the last step the block
    //   you received is block `rank`: receive it straight into recvbuf.
    //   Keep the partial sums in scratch (two halves: one is sent while the
    //   other is received) -- never write into sendbuf. p == 1: just copy.
    //   Use lab05_block() for every offset and length, cl_sendrecv for each step.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab05_ring_allgather(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                               cl_dtype t)
{
    // TODO(lab05) 3: ring AllGather in p - 1 steps.
    //   First put your own block at its offset in recvbuf (cl_copy_local; skip
    //   the copy when sendbuf already is that place). At step s send block
    //   (rank - s) mod p to the right and receive block (rank - s - 1) mod p
    //   from the left, both in place in recvbuf.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab05_ring_allreduce(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                               cl_dtype t, cl_op op, void *scratch)
{
    // TODO(lab05) 4: AllReduce = ReduceScatter into your block of recvbuf, then an
    //   in-place AllGather from that block. Two calls; 2(p-1) steps in all.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab05_pipelined_broadcast(cl_comm *comm, const void *sendbuf, void *recvbuf,
                                    size_t count, cl_dtype t, int root, size_t chunk_bytes)
{
    // TODO(lab05) 5: pipelined chain Broadcast.
    //   Your position in the chain is pos = (rank - root) mod p; you receive from
    //   rank - 1 (unless pos == 0) and forward to rank + 1 (unless pos == p - 1).
    //   The root first copies sendbuf into its recvbuf. Cut the message into
    //   chunks of chunk_bytes (whole elements; the last one shorter). In step k
    //   (0 .. nchunks) post, in one cl_group_start/cl_group_end, the send of
    //   chunk k-1 to the next rank and the receive of chunk k from the previous
    //   one, so that every link of the chain is busy at the same time.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)root,
        (void)chunk_bytes;
    return CL_ERR_NOT_IMPLEMENTED;
}
