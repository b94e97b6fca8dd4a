/* lab09.h: types and functions of lab 09 (an intra-node shared-memory transport).
 *
 * A ring is a single-producer / single-consumer queue of fixed-size chunks in
 * memory two processes share, as in NCCL's SHM transport: one process writes chunks
 * and publishes them by advancing `head`; the other reads them and frees the
 * slots by advancing `tail`. head and tail are free-running 64-bit counters of
 * chunks (they are never reduced modulo the ring size and may wrap past
 * 2^64); the slot of chunk i is i mod nslots. nslots is a power of two, so
 * that i mod nslots stays continuous across the 2^64 wrap (NCCL's NCCL_STEPS
 * is 8 for the same reason). The ring holds at most nslots chunks: it is
 * empty when head == tail and full when head - tail == nslots.
 *
 * The harness lays the rings out in memory every rank's program shares and
 * calls the functions you write in lab09.c through driver.c; ring.c is given.
 */
#ifndef COMMLAB_LAB09_H
#define COMMLAB_LAB09_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "coll.h"
#include "commlab.h"

#define LAB09_LINE 64 /* cache-line size on x86-64 and most ARM servers */

/* The control block at the start of a ring, in shared memory. Each counter has
 * a cache line of its own: the producer writes only head, the consumer only
 * tail, so neither write invalidates the line the other process is writing. */
typedef struct lab09_ctrl {
    _Alignas(LAB09_LINE) _Atomic uint64_t head; /* chunks published (written by the producer) */
    _Alignas(LAB09_LINE) _Atomic uint64_t tail; /* chunks consumed (written by the consumer) */
} lab09_ctrl;

/* One slot: the payload size, then the payload on its own cache lines. */
typedef struct lab09_slot {
    uint64_t bytes;                            /* bytes of data[] in use, <= chunk */
    _Alignas(LAB09_LINE) unsigned char data[]; /* `chunk` bytes */
} lab09_slot;

/* A process's view of one ring (its own memory; ctrl and slots are shared). */
typedef struct lab09_ring {
    lab09_ctrl *ctrl;     /* shared control block */
    unsigned char *slots; /* shared: nslots slots, `stride` bytes apart */
    uint64_t nslots;      /* slots in the ring, a power of two */
    size_t chunk;         /* payload bytes per slot, >= 1 */
    size_t stride;        /* bytes from one slot to the next (a multiple of LAB09_LINE) */
} lab09_ring;

/* What a rank of the AllReduce sees: a ring to its right neighbour and one from
 * its left neighbour, and scratch memory for one incoming block. */
typedef struct lab09_comm {
    int rank, size;
    lab09_ring *to_right;  /* this rank -> (rank + 1) % size */
    lab09_ring *from_left; /* (rank - 1 + size) % size -> this rank */
    void *scratch;         /* scratch_bytes of private memory */
    size_t scratch_bytes;  /* >= the largest block: ceil(count / size) elements */
} lab09_comm;

/* --- given (ring.c) --- */

/* Bytes from one slot to the next: the slot header and `chunk` bytes of
 * payload, rounded up to whole cache lines. This function can't fail. */
static inline size_t lab09_slot_stride(size_t chunk)
{
    return (sizeof(lab09_slot) + chunk + LAB09_LINE - 1) / LAB09_LINE * LAB09_LINE;
}

/* Bytes of shared memory one ring of nslots chunks of `chunk` bytes needs.
 * This function can't fail. */
static inline size_t lab09_ring_bytes(uint64_t nslots, size_t chunk)
{
    return sizeof(lab09_ctrl) + (size_t)nslots * lab09_slot_stride(chunk);
}

/* Fill r to view the ring laid out at mem (lab09_ring_bytes() bytes, aligned
 * to LAB09_LINE); nslots must be a power of two. Does not touch the shared
 * memory. */
void lab09_ring_map(lab09_ring *r, void *mem, uint64_t nslots, size_t chunk);

/* Call in a wait loop after a round without progress: spins briefly, then
 * yields the CPU (ranks may outnumber cores). *idle counts the idle rounds;
 * set it to 0 after progress. In the race check both ends of a ring take
 * turns in one thread, and this is where they change places: a wait loop that
 * does not call it never ends there. This function can't fail. */
void lab09_backoff(unsigned *idle);

/* --- written by the student in lab09.c, in the order of the handout --- */

/* The slot that holds chunk number `index`. This function can't fail. */
lab09_slot *lab09_slot_of(const lab09_ring *r, uint64_t index);

/* Producer: if a slot is free, copy bytes (<= r->chunk) of src into it and
 * publish it; return 1. Return 0 at once when the ring is full. */
int lab09_try_push(lab09_ring *r, const void *src, size_t bytes);

/* Consumer: if a chunk is published, copy it to dst (at most cap bytes), store
 * its size in *bytes, free the slot and return 1. Return 0 at once when the
 * ring is empty, -1 (consuming nothing) when the chunk is larger than cap. */
int lab09_try_pop(lab09_ring *r, void *dst, size_t cap, size_t *bytes);

/* Send sbytes of sbuf on tx and receive exactly rbytes into rbuf from rx, both
 * at once, chunk by chunk (a message of n bytes is max(1, ceil(n / chunk))
 * chunks). tx or rx may be NULL (send only, receive only). Must not deadlock
 * when both peers send messages larger than their rings. CL_ERR_MISMATCH when
 * the incoming chunks do not add up to rbytes. */
cl_result lab09_sendrecv(lab09_ring *tx, const void *sbuf, size_t sbytes, lab09_ring *rx,
                         void *rbuf, size_t rbytes);

/* In-place AllReduce of count elements of type t with op over c's ranks, on the
 * rings only (ReduceScatter then AllGather around the ring). */
cl_result lab09_allreduce(lab09_comm *c, void *buf, size_t count, cl_dtype t, cl_op op);

/* The shape of a ring for large transfers (bench): *nslots slots of *chunk
 * bytes, nslots a power of two, in at most budget bytes of shared memory
 * (lab09_ring_bytes(*nslots, *chunk) <= budget). */
void lab09_geometry(size_t budget, uint64_t *nslots, size_t *chunk);

#endif /* COMMLAB_LAB09_H */
