/* lab18_args.h: the argument blocks of the student's entries, as both programs see them. */
#ifndef COMMLAB_LAB18_ARGS_H
#define COMMLAB_LAB18_ARGS_H

#include <stdint.h>

#include "lab18.h"

typedef struct split_args { /* lab18_split */
    int32_t node, nodes;
} split_args;

typedef struct model_args { /* lab18_predict and lab18_choose */
    lab18_machine m;
    double bytes;
    double t_flat, t_hier; /* out */
    int32_t choice;        /* out */
} model_args;

#ifdef CL_STUDENT_SIDE
/* --- kept_comms.c: the student's program keeps each rank's communicators --- */

/* lab18_split on world, its node and rail communicators kept (a second split replaces them). */
cl_result lab18_split_kept(cl_comm *world, int node);

/* The node and rail communicators kept for world; a reason if lab18_split made none. */
cl_result lab18_kept(cl_comm *world, cl_comm **node, cl_comm **rail);
#endif

#endif /* COMMLAB_LAB18_ARGS_H */
