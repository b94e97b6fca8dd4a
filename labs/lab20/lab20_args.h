/* lab20_args.h: the argument blocks of lab 20's functions, the same in the harness and in the
 * student's program (driver.c's adapters unpack them). */
#ifndef COMMLAB_LAB20_ARGS_H
#define COMMLAB_LAB20_ARGS_H

#include "coll.h"
#include "lab20.h"

/* The hierarchical AlltoAll: the collective's arguments and the node size. */
typedef struct hier_args {
    cl_coll_args a;
    int local;
} hier_args;

/* The plan: the layer, the counts it points to (inside this block), the answer. */
typedef struct plan_args {
    lab20_moe m;
    lab20_plan plan; /* out */
    int32_t counts[LAB20_MAX_COUNTS];
} plan_args;

/* One MoE dispatch as planned: PADDED is an AlltoAll of a.count elements (by
 * algo); EXACT is an AlltoAll of the counts (cnt_send to cnt_recv, p int64),
 * then an AlltoAllv of the tokens with a's v-counts (after this block). */
typedef struct dispatch_args {
    cl_coll_args a;
    int layout, algo, local;
    void *cnt_send, *cnt_recv;
} dispatch_args;

#endif /* COMMLAB_LAB20_ARGS_H */
