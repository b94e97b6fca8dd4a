/* lab03_harness.h: lab 03's harness-side parts, shared by driver.c and harness_ops.c. */
#ifndef COMMLAB_LAB03_HARNESS_H
#define COMMLAB_LAB03_HARNESS_H

#include <stdint.h>

#include "harness/harness.h"
#include "lab03.h"
#include "xfer.h"

#ifndef MAXR
#define MAXR LAB03_MAX_RANKS
#endif

/* Per pair (index i * n + j), after every rank's findings are combined. */
typedef struct findings {
    double value[MAXR * MAXR];   /* the student's merged matrix */
    double writers[MAXR * MAXR]; /* ranks that wrote each entry */
    double visits[MAXR * MAXR];  /* times the pair was measured (timing rank's count) */
    double ops_off[MAXR * MAXR]; /* visits with the wrong number or order of operations */
    double wrong[MAXR * MAXR];   /* bytes that arrived wrong */
    double ref[MAXR * MAXR];     /* the metric of the median run, rebuilt by the harness */
    double spread[MAXR * MAXR];  /* slowest run / fastest run */
    double slow[MAXR * MAXR];    /* runs held up */
    double start[MAXR * MAXR], end[MAXR * MAXR];
    double refused;
} findings;

#define BIG 1e6 /* start times (seconds from an origin) are agreed on as BIG - t, a maximum */

/* The student's matrix call, in three steps: ops_start (on every rank) before it, then
 * ops_begin for each LAB03_OP_BEGIN during it, ops_finish after it. */
cl_result ops_start(cl_run *run, cl_comm *c, int kind, size_t bytes, const lab03_method *m,
                    int noise);
cl_result ops_begin(cl_comm *c, lab03_begin *b);
cl_result ops_finish(cl_comm *c, const double *matrix, findings *f, char *why, size_t whylen);

/* Small helpers both files use. */
uint64_t mix(uint64_t a, uint64_t b);
uint64_t op_seed(uint64_t pair_seed, int k);
int sim_backend(const cl_comm *c);
int cmp_double(const void *a, const void *b);
double ref_metric(int kind, size_t bytes, double seconds); /* the handout's metric */

#endif /* COMMLAB_LAB03_HARNESS_H */
