/* harness_ref.h: lab 23's reference block, in double precision (the harness's side only). */
#ifndef COMMLAB_LAB23_REF_H
#define COMMLAB_LAB23_REF_H

#include <stddef.h>
#include <stdint.h>

#include "result.h"

/* One call's inputs and the block's exact answers, for every row of the batch and
 * the whole of A and B (no parallelism). All arrays are row-major, owned here. */
typedef struct lab23_ref {
    int rows, h, f;
    double p;
    uint64_t seed;                             /* the dropout mask's */
    double *x, *gamma, *beta, *a, *b, *dy;     /* inputs: rows x h, h, h, h x f, f x h, rows x h */
    double *y, *dx, *dgamma, *dbeta, *da, *db; /* answers */
} lab23_ref;

/* Draw the inputs from seed (uniform, scaled so every activation is of order 1)
 * and compute the answers. CL_ERR_NOMEM when memory runs out. */
cl_result lab23_ref_compute(lab23_ref *r, int rows, int h, int f, double p, uint64_t seed);

void lab23_ref_free(lab23_ref *r);

#endif /* COMMLAB_LAB23_REF_H */
