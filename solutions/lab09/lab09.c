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
    /* BEGIN SOLUTION */
    return (lab09_slot *)(r->slots + (size_t)(index % r->nslots) * r->stride);
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab09) 1: the slot that holds chunk number `index` (handout, section 1).
    //   index is a free-running counter; the ring has r->nslots slots, r->stride bytes
    //   apart from r->slots.
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
    // TODO(lab09) 2: the producer's side (handout, section 1): copy bytes of src into
    //   the next free slot and publish it, or return 0 at once when the ring is full.
    //   Which loads and stores need which memory order is the point of the section.
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
    // TODO(lab09) 3: the consumer's side (handout, section 1), the mirror image of
    //   TODO 2: copy out the oldest published chunk and free its slot, or return 0 at
    //   once when the ring is empty, -1 (consuming nothing) when it is larger than cap.
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
    // TODO(lab09) 4: send sbytes on tx and receive rbytes from rx at once, chunk by
    //   chunk (handout, section 2). Both peers may send more than their rings hold at
    //   the same moment: never wait for a free slot while a chunk could be received.
    //   Call lab09_backoff() after a round without progress. A chunk of the wrong
    //   size is CL_ERR_MISMATCH, with a reason (cl_set_error).
    (void)tx, (void)sbuf, (void)sbytes, (void)rx, (void)rbuf, (void)rbytes;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab09_allreduce(lab09_comm *c, void *buf, size_t count, cl_dtype t, cl_op op)
{
    /* BEGIN SOLUTION */
    int p = c->size, r = c->rank;
    size_t es = cl_dtype_size(t), so, sl, ro, rl;
    unsigned char *b = buf;
    if (es == 0)
        return CL_ERR_INVALID;
    /* ReduceScatter: after p-1 steps rank r holds the full reduction of block r+1
     * (lab05's blocks, cl_coll_block). */
    for (int step = 0; step < p - 1; step++) {
        cl_coll_block(count, p, ((r - step) % p + p) % p, &so, &sl);
        cl_coll_block(count, p, ((r - step - 1) % p + p) % p, &ro, &rl);
        CL_CHECK(
            lab09_sendrecv(c->to_right, b + so * es, sl * es, c->from_left, c->scratch, rl * es));
        CL_CHECK(cl_reduce_host(b + ro * es, c->scratch, rl, t, op));
    }
    /* AllGather: pass the reduced blocks around the ring. */
    for (int step = 0; step < p - 1; step++) {
        cl_coll_block(count, p, ((r + 1 - step) % p + p) % p, &so, &sl);
        cl_coll_block(count, p, ((r - step) % p + p) % p, &ro, &rl);
        CL_CHECK(
            lab09_sendrecv(c->to_right, b + so * es, sl * es, c->from_left, b + ro * es, rl * es));
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab09) 5: a ring AllReduce, ReduceScatter then AllGather, on your transport
    //   only (handout, section 3): lab05's blocks (cl_coll_block), to_right and
    //   from_left, c->scratch for one incoming block, cl_reduce_host() for the sums.
    (void)c, (void)buf, (void)count, (void)t, (void)op;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

void lab09_geometry(size_t budget, uint64_t *nslots, size_t *chunk)
{
    /* BEGIN SOLUTION */
    *nslots = 8;
    *chunk = (size_t)128 << 10;
    while (lab09_ring_bytes(*nslots, *chunk) > budget && *chunk > LAB09_LINE)
        *chunk /= 2;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab09) 6: the ring's shape for large transfers within budget bytes of
    //   shared memory (handout, section 4): how many slots, how large a chunk.
    (void)budget;
    *nslots = 0;
    *chunk = 0;
    END SKELETON */
}
