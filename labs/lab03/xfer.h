/* xfer.h: the lab's operation behind lab03_op(), as the two programs share it. */
#ifndef COMMLAB_LAB03_XFER_H
#define COMMLAB_LAB03_XFER_H

#include <stdint.h>

#define LAB03_OP_BEGIN 1 /* cl_lab_call code: operation k of a pair is about to start */

/* The argument block of LAB03_OP_BEGIN. The harness answers with the buffers of
 * operation k: send holds this rank's fresh data, recv receives the peer's. */
typedef struct lab03_begin {
    int32_t kind, i, j, k;
    uint64_t bytes;
    uint64_t send, recv; /* out: addresses of cl_mem_alloc buffers of the rank */
} lab03_begin;

#endif /* COMMLAB_LAB03_XFER_H */
