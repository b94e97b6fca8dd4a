/* lab09.c: lab 09, a shared-memory transport between processes.
 *
 * You write a lock-free single-producer / single-consumer ring of chunks in
 * memory two processes share (the design of NCCL's SHM transport), a
 * send/receive that progresses both directions at once, a ring AllReduce on
 * top, and the ring's shape for large transfers. Read labs/lab09/README.md
 * first; the TODOs below are in the order of its sections. Build with
 * `make lab09`, grade with `./grade lab09`.
 */
#include <string.h>

#include "lab09.h"

lab09_slot *lab09_slot_of(const lab09_ring *r, uint64_t index)
{
    // TODO(lab09) 1: the slot that holds chunk number `index` (handout, section 1).
    //   index is a free-running counter; the ring has r->nslots slots, r->stride bytes
    //   apart from r->slots.
    (void)r, (void)index;
    return NULL;
}

int lab09_try_push(lab09_ring *r, const void *src, size_t bytes)
{
    // TODO(lab09) 2: the producer's side (handout, section 1): copy bytes of src into
    //   the next free slot and publish it, or return 0 at once when the ring is full.
    //   Which loads and stores need which memory order is the point of the section.
    (void)r, (void)src, (void)bytes;
    return 0;
}

int lab09_try_pop(lab09_ring *r, void *dst, size_t cap, size_t *bytes)
{
    // TODO(lab09) 3: the consumer's side (handout, section 1), the mirror image of
    //   TODO 2: copy out the oldest published chunk and free its slot, or return 0 at
    //   once when the ring is empty, -1 (consuming nothing) when it is larger than cap.
    (void)r, (void)dst, (void)cap, (void)bytes;
    return 0;
}

cl_result lab09_sendrecv(lab09_ring *tx, const void *sbuf, size_t sbytes, lab09_ring *rx,
                         void *rbuf, size_t rbytes)
{
    // TODO(lab09) 4: send sbytes on tx and receive rbytes from rx at once, chunk by
    //   chunk (handout, section 2). Both peers may send more than their rings hold at
    //   the same moment: never wait for a free slot while a chunk could be received.
    //   Call lab09_backoff() after a round without progress. A chunk of the wrong
    //   size is CL_ERR_MISMATCH, with a reason (cl_set_error).
    (void)tx, (void)sbuf, (void)sbytes, (void)rx, (void)rbuf, (void)rbytes;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab09_allreduce(lab09_comm *c, void *buf, size_t count, cl_dtype t, cl_op op)
{
    // TODO(lab09) 5: a ring AllReduce, ReduceScatter then AllGather, on your transport
    //   only (handout, section 3): lab05's blocks (cl_coll_block), to_right and
    //   from_left, c->scratch for one incoming block, cl_reduce_host() for the sums.
    (void)c, (void)buf, (void)count, (void)t, (void)op;
    return CL_ERR_NOT_IMPLEMENTED;
}

void lab09_geometry(size_t budget, uint64_t *nslots, size_t *chunk)
{
    // TODO(lab09) 6: the ring's shape for large transfers within budget bytes of
    //   shared memory (handout, section 4): how many slots, how large a chunk.
    (void)budget;
    *nslots = 0;
    *chunk = 0;
}
