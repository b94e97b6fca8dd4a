/* lab29_op.h: the harness's operation behind lab29_probe_plan() (probe.c and harness_model.c). */
#ifndef COMMLAB_LAB29_OP_H
#define COMMLAB_LAB29_OP_H

#include "lab29.h"

#define LAB29_OP_PROBE 1 /* cl_lab_call code: simulate plan, fill probe */

typedef struct lab29_probe_args {
    lab29_plan plan;
    lab29_probe probe; /* out */
} lab29_probe_args;

#endif /* COMMLAB_LAB29_OP_H */
