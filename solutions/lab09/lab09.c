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
    /* BEGIN SOLUTION */
    return (lab09_slot *)(r->slots + (size_t)(index % r->nslots) * r->stride);
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab09) 1: chunk number `index` lives in slot index mod nslots; slots are
    //   r->stride bytes apart from r->slots. index is a free-running counter: it is
    //   never reduced modulo nslots anywhere else.
    (void)r, (void)index;
    return NULL;
    END SKELETON */
}

int lab09_try_push(lab09_ring *r, const void *src, size_t bytes)
{
    /* BEGIN SOLUTION */
    uint64_t head = atomic_load_explicit(&r->ctrl->head, memory_order_relaxed); /* ours */
    uint64_t tail = atomic_load_explicit(&r->ctrl->tail, memory_order_acquire);
    if (head - tail >= r->nslots)
        return 0; /* full: the consumer has not freed the oldest slot yet */
    lab09_slot *slot = lab09_slot_of(r, head);
    memcpy(slot->data, src, bytes);
    slot->bytes = bytes;
    /* Release: the payload and its size become visible before the new head. */
    atomic_store_explicit(&r->ctrl->head, head + 1, memory_order_release);
    return 1;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab09) 2: the producer side.
    //   1. read head (only you write it) and tail (the consumer writes it: acquire);
    //   2. full when head - tail == nslots (unsigned arithmetic survives the 2^64 wrap):
    //      return 0 without waiting;
    //   3. copy the payload into lab09_slot_of(r, head)->data, set ->bytes;
    //   4. publish with a release store of head + 1; return 1.
    (void)r, (void)src, (void)bytes;
    return 0;
    END SKELETON */
}

int lab09_try_pop(lab09_ring *r, void *dst, size_t cap, size_t *bytes)
{
    /* BEGIN SOLUTION */
    uint64_t tail = atomic_load_explicit(&r->ctrl->tail, memory_order_relaxed); /* ours */
    uint64_t head = atomic_load_explicit(&r->ctrl->head, memory_order_acquire);
    if (head == tail)
        return 0; /* empty: nothing published beyond what we consumed */
    lab09_slot *slot = lab09_slot_of(r, tail);
    size_t n = slot->bytes;
    if (n > cap)
        return -1;
    memcpy(dst, slot->data, n);
    *bytes = n;
    /* Release: our reads of the slot happen before the producer may reuse it. */
    atomic_store_explicit(&r->ctrl->tail, tail + 1, memory_order_release);
    return 1;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab09) 3: the consumer side, the mirror image of TODO 2.
    //   1. read tail (yours) and head (the producer's: acquire, BEFORE touching the slot);
    //   2. empty when head == tail: return 0;
    //   3. the slot's size larger than cap: return -1 and consume nothing;
    //   4. copy the payload out, store its size, then free the slot with a release
    //      store of tail + 1; return 1.
    (void)r, (void)dst, (void)cap, (void)bytes;
    return 0;
    END SKELETON */
}

/* BEGIN SOLUTION */
static size_t nchunks(size_t bytes, size_t chunk)
{
    return bytes == 0 ? 1 : (bytes + chunk - 1) / chunk;
}
/* END SOLUTION */

cl_result lab09_sendrecv(lab09_ring *tx, const void *sbuf, size_t sbytes, lab09_ring *rx,
                         void *rbuf, size_t rbytes)
{
    /* BEGIN SOLUTION */
    const unsigned char *s = sbuf;
    unsigned char *d = rbuf;
    size_t to_send = tx ? nchunks(sbytes, tx->chunk) : 0;
    size_t to_recv = rx ? nchunks(rbytes, rx->chunk) : 0;
    size_t sent = 0, got = 0;
    unsigned idle = 0;
    while (to_send > 0 || to_recv > 0) {
        int progress = 0;
        /* Push as many chunks as fit, then drain what has arrived: neither side
         * ever waits for the other while holding back its own work. */
        while (to_send > 0) {
            size_t n = sbytes - sent < tx->chunk ? sbytes - sent : tx->chunk;
            if (!lab09_try_push(tx, s + sent, n))
                break;
            sent += n;
            to_send--;
            progress = 1;
        }
        while (to_recv > 0) {
            size_t n = 0;
            int rc = lab09_try_pop(rx, d + got, rbytes - got, &n);
            if (rc == 0)
                break;
            size_t want = rbytes - got < rx->chunk ? rbytes - got : rx->chunk;
            if (rc < 0 || n != want) {
                cl_set_error("received a chunk of %zu bytes where %zu were due (%zu of %zu done)",
                             rc < 0 ? rx->chunk : n, want, got, rbytes);
                return CL_ERR_MISMATCH;
            }
            got += n;
            to_recv--;
            progress = 1;
        }
        if (progress)
            idle = 0;
        else
            lab09_backoff(&idle);
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
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
    END SKELETON */
}

cl_result lab09_allreduce(lab09_comm *c, void *buf, size_t count, cl_dtype t, cl_op op)
{
    /* BEGIN SOLUTION */
    int p = c->size, r = c->rank;
    size_t es = cl_dtype_size(t);
    unsigned char *b = buf;
    if (es == 0)
        return CL_ERR_INVALID;
    if (p == 1)
        return CL_OK;
#define SEG_FIRST(k) ((size_t)(k) * count / (size_t)p)
#define SEG_COUNT(k) (SEG_FIRST((k) + 1) - SEG_FIRST(k))
    /* ReduceScatter: after p-1 steps rank r holds the full reduction of segment r+1. */
    for (int step = 0; step < p - 1; step++) {
        int send = ((r - step) % p + p) % p, recv = ((r - step - 1) % p + p) % p;
        CL_CHECK(lab09_sendrecv(c->to_right, b + SEG_FIRST(send) * es, SEG_COUNT(send) * es,
                                c->from_left, c->scratch, SEG_COUNT(recv) * es));
        CL_CHECK(cl_reduce_host(b + SEG_FIRST(recv) * es, c->scratch, SEG_COUNT(recv), t, op));
    }
    /* AllGather: pass the reduced segments around the ring. */
    for (int step = 0; step < p - 1; step++) {
        int send = ((r + 1 - step) % p + p) % p, recv = ((r - step) % p + p) % p;
        CL_CHECK(lab09_sendrecv(c->to_right, b + SEG_FIRST(send) * es, SEG_COUNT(send) * es,
                                c->from_left, b + SEG_FIRST(recv) * es, SEG_COUNT(recv) * es));
    }
#undef SEG_FIRST
#undef SEG_COUNT
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab09) 5: the ring AllReduce on your transport.
    //   Segment k of the vector is elements [k*count/p, (k+1)*count/p) (uneven counts!).
    //   ReduceScatter, p-1 steps: send segment (r - s) mod p to the right, receive
    //   segment (r - s - 1) mod p from the left into c->scratch, reduce it into buf
    //   with cl_reduce_host(). AllGather, p-1 steps: send segment (r + 1 - s) mod p,
    //   receive segment (r - s) mod p straight into buf. Use lab09_sendrecv() only:
    //   MPI and the cl_ collectives are off limits.
    (void)c, (void)buf, (void)count, (void)t, (void)op;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
