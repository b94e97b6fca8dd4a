/* lab05.c: lab 05, ring collectives over the point-to-point interface.
 *
 * You write the ring ReduceScatter and AllGather that NCCL's ring algorithm is
 * made of, compose them into the ring AllReduce, pipeline a Broadcast along a
 * chain, and choose that Broadcast's chunk size. Read labs/lab05/README.md
 * first; the TODOs below follow its sections. lab05.h states the conventions
 * the harness checks. Build with `make lab05`, grade with `./grade lab05`.
 */
#include <math.h>

#include "lab05.h"

void lab05_block(size_t count, int p, int i, size_t *off, size_t *len)
{
    // TODO(lab05) 1: the block partition (lab05.h): block i of count elements
    //   over p ranks. Every element lies in exactly one block, the blocks follow
    //   each other in rank order, and their lengths differ by at most one, the
    //   longer ones first: MPI's and nccl-tests' split of an uneven count.
    (void)count, (void)p, (void)i;
    *off = 0;
    *len = 0;
}

cl_result lab05_ring_reduce_scatter(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                                    cl_dtype t, cl_op op, void *scratch)
{
    // TODO(lab05) 2: ring ReduceScatter (handout section 1). Afterwards recvbuf
    //   holds block `rank` of the reduction of every rank's sendbuf. A rank talks
    //   only to its two neighbours on the ring; in each of p - 1 steps it sends
    //   one block's partial result to one neighbour, receives one from the
    //   other, and adds its own contribution to what it received. Which block
    //   moves at which step is yours to work out: the last block a rank
    //   completes must be its own. sendbuf is read-only; partial results live
    //   in scratch. Think of p == 1 and of empty blocks.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab05_ring_allgather(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                               cl_dtype t)
{
    // TODO(lab05) 3: ring AllGather (handout section 2). Afterwards recvbuf holds
    //   every rank's block at its offset. p - 1 steps on the same ring, one block
    //   sent and one received per step, with recvbuf as the only buffer. sendbuf
    //   may already be this rank's block of recvbuf (AllReduce calls it in place).
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab05_ring_allreduce(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                               cl_dtype t, cl_op op, void *scratch)
{
    // TODO(lab05) 4: AllReduce from TODO 2 and TODO 3 (handout section 3),
    //   without an extra copy of the whole vector.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab05_pipelined_broadcast(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                                    cl_dtype t, int root, size_t chunk_bytes)
{
    // TODO(lab05) 5: pipelined chain Broadcast (handout section 4). The root's
    //   data flows root -> root+1 -> ... -> root-1 (mod p) in chunks of
    //   chunk_bytes, rounded down to whole elements (at least one; the last
    //   chunk may be shorter). A rank forwards each chunk while it receives the
    //   next, so that every hop of the chain is busy at once (cl_group_start/end
    //   post a send and a receive together). Every rank's recvbuf, the root's
    //   too, ends with the root's data.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)root, (void)chunk_bytes;
    return CL_ERR_NOT_IMPLEMENTED;
}

size_t lab05_broadcast_chunk(size_t count, size_t elem_bytes, int root, const lab05_chain *chain)
{
    // TODO(lab05) 6: your decision (handout section 5): the chunk size that
    //   makes the Broadcast of count elements from root fastest on this chain.
    //   Model the Broadcast's time as a function of the chunk size, with the
    //   hops the harness measured (chain->hop[i]: rank i to rank i+1), and take
    //   its minimum. Return bytes: at least 1, at most LAB05_MAX_CHUNKS chunks.
    (void)count, (void)elem_bytes, (void)root, (void)chain;
    return 0;
}
