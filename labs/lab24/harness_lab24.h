/* harness_lab24.h: what lab 24's driver.c shares with its harness_*.c files.
 *
 * driver.c          the student's entries (both sides compile it) and the lab's table
 * harness_net.c     the model network and the grader's own copy of DDP's bucket assignment
 * harness_assign.c  the assign mode: the student's buckets for each case
 * harness_plan.c    what the student's plan is given (the options, the measured link) and
 *                   the buckets it returns checked the same on every rank
 * harness_step.c    the step mode, and the backward pass it runs (the lab's operation)
 * harness_gpu.c     the gpu mode: kernels and a bucketed ncclAllReduce on real GPUs
 *
 * Only the argument blocks are seen by the student's program.
 */
#ifndef COMMLAB_HARNESS_LAB24_H
#define COMMLAB_HARNESS_LAB24_H

#include <stddef.h>

#include "harness/harness.h"
#include "lab24.h"

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct plan_args {
    lab24_model m;
    int forced;      /* the caps are given (--cap ...): only assign */
    lab24_caps caps; /* out, or in when forced */
    lab24_buckets b; /* out */
} plan_args;

typedef struct step_args {
    lab24_model m;
    lab24_buckets b;
    float *grads, *scratch;
} step_args;

/* The harness's measurement of a ring step as the student's program makes it. */
typedef struct ring_args {
    char *buf; /* 2 x bytes */
    size_t bytes;
    int iters;
} ring_args;

#ifndef CL_STUDENT_SIDE
#include "harness/overlap.h"

/* --- the model network and DDP's assignment (harness_net.c) -------------------------------- */

#define LAB24_MAX_KERNELS 512

/* One kernel of the backward pass: s seconds in `parts` equal parts; when it ends,
 * the gradients of ready[0 .. nready - 1] exist. */
typedef struct lab24_kernel {
    double weight, s;
    int parts;
    int ready[2], nready;
} lab24_kernel;

/* A GPT-style stack: `layers` transformer layers of hidden size h (12 parameter
 * tensors each, registered as PyTorch's modules register them) and a final
 * LayerNorm; the backward pass runs from the final LayerNorm to layer 0. */
typedef struct lab24_net {
    int params;
    double bytes[LAB24_MAX_PARAMS];
    int order[LAB24_MAX_PARAMS]; /* the order the backward pass makes gradients ready */
    int kernels;
    lab24_kernel kernel[LAB24_MAX_KERNELS];
    int parts; /* every kernel's parts */
    double total_bytes, compute_s, quantum, quantum_s;
} lab24_net;

/* The net's parameters and kernels (not yet timed). quantum: the longest part a
 * kernel may run (0: kernels whole). CL_ERR_INVALID for sizes out of range. */
cl_result lab24_net_build(lab24_net *n, int layers, int hidden, double quantum);

/* Time the kernels: compute_s seconds in all, in proportion to their work. */
cl_result lab24_net_scale(lab24_net *n, double compute_s);

/* When each gradient is ready with the kernels alone, in ready order. This function
 * can't fail. */
void lab24_net_ready_times(const lab24_net *n, double *ready_s);

/* DDP's assignment (torch/csrc/distributed/c10d/reducer.cpp) of the net's gradients
 * in ready order under caps; the grader's own. */
cl_result lab24_ddp_assign(const lab24_net *n, const lab24_caps *caps, lab24_buckets *out);

/* CL_ERR_INVALID, with the reason, unless b is a partition of 0 .. params - 1. */
cl_result lab24_buckets_check(const lab24_buckets *b, int params);

/* Whether a and b are the same buckets, in the same order. This function can't fail. */
int lab24_buckets_equal(const lab24_buckets *a, const lab24_buckets *b, int params);

/* Where each parameter's gradient lies in the flat buffer (floats): bucket after
 * bucket, in each in the order listed (DDP's gradient_as_bucket_view); *largest
 * is the largest bucket's floats. This function can't fail. */
void lab24_layout(const lab24_net *n, const lab24_buckets *b, size_t *off, size_t *largest);

/* --- real GPUs (harness_gpu.c) ------------------------------------------------------------- */

/* reps samples of: the kernels alone; NCCL's AllReduce of every gradient alone; the
 * step with buckets b: each kernel on a stream of the lowest priority writing its
 * gradients into the flat buffer, each bucket's ncclAllReduce on a stream of the
 * highest priority once its last kernel has ended (an event). Kernels are sized to
 * the net's times; gradients are checked on the device. CL_ERR_UNSUPPORTED without
 * CUDA. */
cl_result lab24_gpu_steps(cl_comm *c, const lab24_net *n, const lab24_buckets *b, int reps,
                          cl_overlap_sample *out);

/* --- the plan's inputs and checks (harness_plan.c) ----------------------------------------- */

/* A lab option as a number, or the backend's default. */
double num_opt(cl_run *run, const char *name, double cpu, double sim);

/* The model the student gets: the measured link, the net's sizes, order and times. */
cl_result build_model(cl_run *run, cl_comm *c, const lab24_net *net, float *buf, lab24_model *m);

/* Every rank must have chosen the same buckets. */
cl_result same_buckets(cl_comm *c, const lab24_buckets *b, int params);

/* --- the modes (harness_assign.c, harness_step.c, harness_gpu.c) --------------------------- */

cl_result assign_case(cl_case *c);
cl_result step_mode(cl_run *run, cl_comm *c);
cl_result gpu_mode(cl_run *run, cl_comm *c);

/* The lab's operation LAB24_OP_BACKWARD: the next part of the rank's backward pass
 * (harness_step.c). */
cl_result lab_op(cl_run *run, cl_comm *c, int code, void *args, size_t bytes);
#endif

#endif /* COMMLAB_HARNESS_LAB24_H */
