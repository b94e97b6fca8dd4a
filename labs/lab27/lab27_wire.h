/* lab27_wire.h: the argument blocks of lab 27's operations (lab27_ops.c, harness_ops.c), of
 * the reference's timed loop (driver.c, harness_ref.c) and of the student's entries (driver.c,
 * harness_sweep.c, harness_compare.c). */
#ifndef COMMLAB_LAB27_WIRE_H
#define COMMLAB_LAB27_WIRE_H

#include <stddef.h>

#include "lab27.h"

enum { LAB27_OP_COLL = 1, LAB27_OP_FILL = 2, LAB27_OP_CHECK = 3 };

typedef struct lab27_op_args {
    cl_coll_kind kind;
    const void *sendbuf;
    void *recvbuf;
    size_t count, first;
    int lo, hi;
    long long wrong; /* out: CHECK */
} lab27_op_args;

/* The reference's timed loop, run in the student's program by the lab's own code (driver.c's
 * entry "ref_loop"), so that its calls take the same path as the student's. */
typedef struct lab27_loop_args {
    cl_coll_kind kind;
    int iters;
    const void *sendbuf;
    void *recvbuf;
    size_t count;
} lab27_loop_args;

#define TEXT_CAP    (40 * 1024)
#define MAX_SAMPLES 64

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct sweep_args {
    lab27_config cfg;
    char text[TEXT_CAP]; /* out: rank 0's report */
} sweep_args;

typedef struct compare_args {
    int n;
    double before[MAX_SAMPLES], after[MAX_SAMPLES];
    lab27_effect e; /* out */
} compare_args;

#endif /* COMMLAB_LAB27_WIRE_H */
