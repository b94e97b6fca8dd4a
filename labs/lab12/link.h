/* link.h: the lab's operations behind link.c, as the two programs share them. */
#ifndef COMMLAB_LAB12_LINK_H
#define COMMLAB_LAB12_LINK_H

#include <stdint.h>

enum lab12_op_code {
    LAB12_OP_STAGE = 1, /* nbuf, n = chunk */
    LAB12_OP_IN,        /* buf, offset, n; answer id */
    LAB12_OP_OUT,       /* buf, offset, n; answer id */
    LAB12_OP_WAIT,      /* id */
};

/* The argument block of every operation. */
typedef struct lab12_op {
    int32_t buf, id;
    uint64_t offset, n;
} lab12_op;

#endif /* COMMLAB_LAB12_LINK_H */
