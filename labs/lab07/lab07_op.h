/* lab07_op.h: the harness's operation behind lab07_step_time() (model.c and harness_model.c). */
#ifndef COMMLAB_LAB07_OP_H
#define COMMLAB_LAB07_OP_H

#include "lab07.h"

#define LAB07_OP_STEP 1 /* cl_lab_call code: cost plan, fill cost */

typedef struct lab07_step_args {
    lab07_plan plan;
    lab07_cost cost; /* out */
} lab07_step_args;

#endif /* COMMLAB_LAB07_OP_H */
