/* exchange.h: lab 09's argument blocks, which the harness and the student's program share, and
 * the given code that runs the harness's exchanges in the student's program. */
#ifndef COMMLAB_LAB09_EXCHANGE_H
#define COMMLAB_LAB09_EXCHANGE_H

#include <stdint.h>

#include "lab09.h"

#define MAX_MSGS 4000 /* messages each way in one stress or race call */
#define GAP      16   /* guard bytes after every received message */

/* Where the rings are: ring k at base + k * ring_bytes, all of one shape. */
typedef struct layout {
    unsigned char *base;
    uint64_t nslots;
    size_t chunk, ring_bytes;
} layout;

/* The argument blocks of the entries, the same on both sides. */
typedef struct stress_args {
    layout L;
    int tx, rx;                  /* ring indices (-1: none) */
    unsigned char *sbuf, *rbuf;  /* this rank's private buffers */
    int n;                       /* messages each way */
    uint32_t ssize[MAX_MSGS];    /* sizes of the messages this rank sends */
    uint32_t rsize[MAX_MSGS];    /* and receives; message k lies after k-1 and GAP bytes */
    uint16_t pause_us[MAX_MSGS]; /* a wait before message k: varies the interleavings */
} stress_args;

typedef struct race_args {
    layout L; /* ring 0 from end 0 to end 1, ring 1 back */
    unsigned char *sbuf[2], *rbuf[2];
    int n;
    uint32_t size[2][MAX_MSGS]; /* size[i][k]: message k that end i sends */
} race_args;

typedef struct transfer_args {
    layout L;
    int send; /* rank 0 sends on ring 0, rank 1 receives from it */
    void *buf;
    size_t bytes;
} transfer_args;

typedef struct geometry_args {
    size_t budget;
    uint64_t nslots; /* out */
    size_t chunk;    /* out */
} geometry_args;

typedef struct allreduce_args {
    layout L;
    void *buf, *scratch;
    size_t count, scratch_bytes;
    cl_dtype t;
    cl_op op;
} allreduce_args;

/* --- given, in the student's program (exchange.c, fibers.c) --- */

/* View ring k of L in *r and return r; NULL when k < 0. This function can't fail. */
lab09_ring *lab09_ring_of(const layout *L, int k, lab09_ring *r);

/* n messages one after another, each sent on tx and received from rx at once
 * with lab09_sendrecv(); message k lies after message k-1 and GAP bytes in
 * sbuf and rbuf. pause_us (may be NULL) waits before message k. */
cl_result lab09_exchange(lab09_ring *tx, lab09_ring *rx, const unsigned char *sbuf,
                         unsigned char *rbuf, int n, const uint32_t *ssize, const uint32_t *rsize,
                         const uint16_t *pause_us);

/* The race check's exchange: both ends of a's two rings in this one thread,
 * as two fibers that take turns whenever one waits (lab09_backoff()). */
cl_result lab09_race_ends(race_args *a);

#endif /* COMMLAB_LAB09_EXCHANGE_H */
