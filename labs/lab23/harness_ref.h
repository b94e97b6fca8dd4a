/* harness_ref.h: what lab 23's driver.c shares with its harness_*.c files.
 *
 * driver.c         the student's entries (both sides compile it) and the lab's table
 * harness_ref.c    the reference block, in double precision
 * harness_watch.c  what the harness sees of the student's program: its buffers, its own
 *                  memory
 * harness_block.c  the block mode: TP's block and the student's SP block, checked and measured
 * harness_model.c  the model mode: the student's accounting and plan
 *
 * Only the argument blocks are seen by the student's program.
 */
#ifndef COMMLAB_LAB23_REF_H
#define COMMLAB_LAB23_REF_H

#include <stddef.h>
#include <stdint.h>

#include "harness/harness.h"
#include "lab23.h"
#include "result.h"

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct block_args {
    lab23_dims d;
    lab23_params w;
    const float *x;
    float *y;
    const float *dy;
    float *dx;
    lab23_grads g;
    lab23_saved saved;
    double macs; /* out: the given lab23_matmul's multiply-adds in this call */
} block_args;

typedef struct model_args {
    lab23_model m;
    lab23_plan p;                /* the plan whose memory and time are asked */
    double layer_bytes[2][2];    /* out: [sp][granularity] */
    double memory_bytes, step_s; /* out */
    int plan_status;             /* out */
    lab23_plan plan;             /* out: your plan for m */
} model_args;

#ifndef CL_STUDENT_SIDE

/* --- harness_ref.c --- */

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

/* --- harness_watch.c --- */

#define MAX_BUFFERS 64

/* A rank's buffers (base and bytes of each). */
typedef struct buffer_set {
    uintptr_t base[MAX_BUFFERS];
    size_t bytes[MAX_BUFFERS];
    int n, overflow;
} buffer_set;

/* The rank's buffers now. */
void buffers_now(const cl_comm *c, buffer_set *s);

/* Buffers of now that are not in before: bytes, count. */
void buffers_new(const buffer_set *before, const buffer_set *now, double *bytes, int *n);

/* Free what the student's program left allocated (a leak is reported, not kept). */
void buffers_drop_new(cl_comm *c, const buffer_set *before);

/* Private anonymous memory of the student's program (RssAnon), KiB; -1 if unknown. */
double anon_kib(void);

/* --- the modes (harness_block.c, harness_model.c) --- */

cl_result block_mode(cl_run *run, cl_comm *c);
cl_result model_case(cl_case *c);
#endif

#endif /* COMMLAB_LAB23_REF_H */
