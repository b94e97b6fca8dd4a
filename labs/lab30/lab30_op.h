/* lab30_op.h: the harness's operation behind lab30_probe_time() (probe.c and harness_time.c). */
#ifndef COMMLAB_LAB30_OP_H
#define COMMLAB_LAB30_OP_H

#include "lab30.h"

#define LAB30_OP_PROBE 1 /* cl_lab_call code: simulate one AllReduce, fill time_s */

typedef struct lab30_probe_args {
    int algo;
    long gpus;
    double bytes;
    double time_s; /* out */
} lab30_probe_args;

#endif /* COMMLAB_LAB30_OP_H */
