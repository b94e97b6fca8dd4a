/* rail_op.h: the lab's operations behind rail.c, as the two programs share them. */
#ifndef COMMLAB_LAB17_RAIL_OP_H
#define COMMLAB_LAB17_RAIL_OP_H

#include <stdint.h>

enum lab17_op_code {
    LAB17_OP_POST = 1, /* rail, offset, n; answer id */
    LAB17_OP_WAIT,     /* id */
};

/* The argument block of every operation. */
typedef struct lab17_op {
    int32_t rail, id;
    uint64_t offset, n;
} lab17_op;

#endif /* COMMLAB_LAB17_RAIL_OP_H */
