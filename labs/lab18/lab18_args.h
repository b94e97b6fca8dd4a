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

#endif /* COMMLAB_LAB18_ARGS_H */
