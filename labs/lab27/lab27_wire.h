/* lab27_wire.h: the argument block of lab 27's operations (lab27_ops.c and driver.c). */
#ifndef COMMLAB_LAB27_WIRE_H
#define COMMLAB_LAB27_WIRE_H

#include <stddef.h>

enum { LAB27_OP_COLL = 1, LAB27_OP_FILL = 2, LAB27_OP_CHECK = 3 };

typedef struct lab27_op_args {
    int kind;
    const void *sendbuf;
    void *recvbuf;
    size_t count, first;
    int lo, hi;
    long long wrong; /* out: CHECK */
} lab27_op_args;

#endif /* COMMLAB_LAB27_WIRE_H */
