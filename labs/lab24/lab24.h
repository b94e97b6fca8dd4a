/* lab24.h: types and functions of lab 24 (DDP gradient buckets overlapped with the backward pass).
 *
 * PyTorch DistributedDataParallel's Reducer (Li et al., VLDB 2020) on the p2p
 * interface: the backward pass, an operation of the harness, produces the
 * gradient of one parameter after another; gradients are grouped into buckets
 * by size in the order they become ready; each bucket's AllReduce starts as soon
 * as its last gradient exists and runs while the backward pass goes on. The
 * plug-in (driver.c) calls the functions you write in lab24.c; backward.c is code
 * the lab gives you.
 */
#ifndef COMMLAB_LAB24_H
#define COMMLAB_LAB24_H

#include <stddef.h>

#include "commlab.h"

#define LAB24_MAX_PARAMS 512

/* One training step's backward pass on every rank, and the machine it runs on. */
typedef struct lab24_model {
    int ranks;                        /* p */
    int params;                       /* parameter tensors, in registration order */
    double bytes[LAB24_MAX_PARAMS];   /* gradient bytes of parameter i (a multiple of 4) */
    int order[LAB24_MAX_PARAMS];      /* the order gradients become ready: order[0] first */
    double ready_s[LAB24_MAX_PARAMS]; /* when gradient order[k] is ready, the backward alone */
    double compute_s;                 /* the backward pass alone */
    double quantum_s;                 /* its longest part: your code runs only between parts */
    double alpha_s;                   /* a ring step's latency, measured */
    double link_Bps;                  /* a ring step's bytes per second, measured */
    double reduce_Bps;                /* bytes per second cl_reduce_local adds, measured */
} lab24_model;

/* Buckets: bucket b holds parameters param[start[b]] .. param[start[b + 1] - 1], in the
 * order listed, which is also their order in the flat gradient buffer. */
typedef struct lab24_buckets {
    int n;
    int start[LAB24_MAX_PARAMS + 1];
    int param[LAB24_MAX_PARAMS];
} lab24_buckets;

/* Your decision: DDP's bucket_cap_mb and first_bucket_bytes, in bytes, and whether
 * the small bucket comes last instead of first (DDP_SET_LAST_BUCKET_CAP=1). */
typedef struct lab24_caps {
    double first_cap, cap;
    int last_small;
} lab24_caps;

/* --- given (backward.c): the backward pass ------------------------------------------- */

/* Run the next part of the backward pass on this rank (an operation of the harness,
 * which keeps its time). When the part ends a kernel, the gradients that kernel
 * produced are in the flat gradient buffer from then on: their parameter numbers
 * are in ready[0 .. *nready - 1] (at most 2). *left = parts still to run (0: the
 * backward pass is over). CL_ERR_INVALID once nothing is left. */
cl_result lab24_backward(cl_comm *c, int ready[2], int *nready, int *left);

/* --- written by the student in lab24.c, in the order of the handout --------------------- */

/* DDP's assignment of gradients to buckets (section 1). */
cl_result lab24_assign(const lab24_model *m, const lab24_caps *caps, lab24_buckets *out);

/* A non-blocking ring AllReduce (sum) of `count` floats of buf, in place (section 2).
 * scratch holds at least ceil(count / p) floats. Nothing here blocks but
 * lab24_ar_finish(); lab24_ar_progress() moves it on when it can, and tests the
 * current step only once m's link says it could be over (a test that finds it
 * unfinished costs time). The fields are yours to use as you see fit. */
typedef struct lab24_allreduce {
    cl_comm *comm;
    float *buf, *scratch;
    size_t count;
    int rank, ranks, step;         /* step: 0 .. 2(p-1) - 1 of the ring, 2(p-1) when done */
    cl_request req[2];             /* the current step's receive and send */
    double alpha_s, link_Bps, due; /* the link, and when the current step should be over */
    int done;
} lab24_allreduce;

cl_result lab24_ar_start(lab24_allreduce *ar, cl_comm *c, const lab24_model *m, float *buf,
                         size_t count, float *scratch);
cl_result lab24_ar_progress(lab24_allreduce *ar, int *done);
cl_result lab24_ar_finish(lab24_allreduce *ar);

/* One overlapped step on this rank (section 3): the whole backward pass, and the
 * AllReduce of every bucket of b over the flat gradient buffer grads, each started
 * once its gradients exist. scratch holds the largest bucket's ceil(count / p) floats.
 * Return when every gradient is summed. */
cl_result lab24_step(cl_comm *c, const lab24_model *m, const lab24_buckets *b, float *grads,
                     float *scratch);

/* Your decision for machine m (section 4). */
cl_result lab24_choose(const lab24_model *m, lab24_caps *out);

#endif /* COMMLAB_LAB24_H */
