/* lab09.c: lab 09, a shared-memory transport between processes.
 *
 * You write a lock-free single-producer / single-consumer ring of chunks in
 * POSIX shared memory (the design of NCCL's SHM transport), a send/receive
 * that progresses both directions at once, and a ring AllReduce on top.
 * Read labs/lab09/README.md first; the TODOs below are in the order of its
 * sections. Build with `make lab09`, grade with `./grade lab09`.
 */
#include <string.h>

#include "lab09.h"

lab09_slot *lab09_slot_of(const lab09_ring *r, uint64_t index)
{
    // TODO(lab09) 1: chunk number `index` lives in slot index mod nslots; slots are
    //   r->stride bytes apart from r->slots. index is a free-running counter: it is
    //   never reduced modulo nslots anywhere else.
    (void)r, (void)index;
    return NULL;
}

int lab09_try_push(lab09_ring *r, const void *src, size_t bytes)
{
    // TODO(lab09) 2: the producer side.
    //   1. read head (only you write it) and tail (the consumer writes it: acquire);
    //   2. full when head - tail == nslots (unsigned arithmetic survives the 2^64 wrap):
    //      return 0 without waiting;
    //   3. copy the payload into lab09_slot_of(r, head)->data, set ->bytes;
    //   4. publish with a release store of head + 1; return 1.
    (void)r, (void)src, (void)bytes;
    return 0;
}

int lab09_try_pop(lab09_ring *r, void *dst, size_t cap, size_t *bytes)
{
    // TODO(lab09) 3: the consumer side, the mirror image of TODO 2.
    //   1. read tail (yours) and head (the producer's: acquire, BEFORE touching the slot);
    //   2. empty when head == tail: return 0;
    //   3. the slot's size larger than cap: return -1 and consume nothing;
    //   4. copy the payload out, store its size, then free the slot with a release
    //      store of tail + 1; return 1.
    (void)r, (void)dst, (void)cap, (void)bytes;
    return 0;
}


cl_result lab09_sendrecv(lab09_ring *tx, const void *sbuf, size_t sbytes, lab09_ring *rx,
                         void *rbuf, size_t rbytes)
{
    // TODO(lab09) 4: send and receive at once, chunk by chunk.
    //   A message of n bytes is max(1, ceil(n / chunk)) chunks; every chunk is full but
    //   the last. Loop until both sides are done: push as many chunks as
    //   lab09_try_push() accepts, pop as many as lab09_try_pop() returns, and call
    //   lab09_backoff(&idle) after a round without progress (idle = 0 after progress).
    //   Never wait for a free slot while a chunk could be received: both peers may be
    //   sending more than their ring holds. A chunk of the wrong size is
    //   CL_ERR_MISMATCH (with cl_set_error).
    (void)tx, (void)sbuf, (void)sbytes, (void)rx, (void)rbuf, (void)rbytes;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab09_allreduce(lab09_comm *c, void *buf, size_t count, cl_dtype t, cl_op op)
{
    // TODO(lab09) 5: the ring AllReduce on your transport.
    //   Segment k of the vector is elements [k*count/p, (k+1)*count/p) (uneven counts!).
    //   ReduceScatter, p-1 steps: send segment (r - s) mod p to the right, receive
    //   segment (r - s - 1) mod p from the left into c->scratch, reduce it into buf
    //   with cl_reduce_host(). AllGather, p-1 steps: send segment (r + 1 - s) mod p,
    //   receive segment (r - s) mod p straight into buf. Use lab09_sendrecv() only:
    //   MPI and the cl_ collectives are off limits.
    (void)c, (void)buf, (void)count, (void)t, (void)op;
    return CL_ERR_NOT_IMPLEMENTED;
}
