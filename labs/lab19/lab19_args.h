/* lab19_args.h: the argument blocks of lab 19's functions, the same in the harness and in the
 * student's program (driver.c's adapters unpack them). */
#ifndef COMMLAB_LAB19_ARGS_H
#define COMMLAB_LAB19_ARGS_H

#include "lab19.h"

#define LAB19_HOSTLIST_BYTES 8192
#define LAB19_CONF_BYTES     32768

typedef struct hostlist_args {
    int n;
    const char *const *names; /* in the shared arena */
    char out[LAB19_HOSTLIST_BYTES];
} hostlist_args;

typedef struct topology_args {
    const lab19_fabric *f; /* in the shared arena */
    char out[LAB19_CONF_BYTES];
} topology_args;

typedef struct place_args {
    const lab19_fabric *f; /* in the shared arena */
    lab19_state s;
    lab19_job job;
    int nodes[LAB19_MAX_NODES]; /* out */
} place_args;

#endif /* COMMLAB_LAB19_ARGS_H */
