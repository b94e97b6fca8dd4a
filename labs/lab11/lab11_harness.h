/* lab11_harness.h: what lab 11's driver.c shares with its harness_*.c files.
 *
 * driver.c          the student's entries (both sides compile it) and the lab's table
 * harness_device.c  the modelled GPU: the lab's operation LAB11_OP_COMPUTE, each rank's
 *                   kernels and what they took
 * harness_model.c   the model mode: the student's times and plan for a machine of the case
 * harness_step.c    the step and gpu modes: the machine measured, the student's plan, the
 *                   kernels alone, the library's AllReduce alone and the student's step
 * (harness/gpu.c, the run on real GPUs, has its own header, harness/lab11_gpu.h.)
 */
#ifndef COMMLAB_LAB11_HARNESS_H
#define COMMLAB_LAB11_HARNESS_H

#include "harness/harness.h"
#include "lab11.h"

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct model_args {
    lab11_model m;
    lab11_plan p; /* the plan whose step time is asked */
    double bytes; /* the AllReduce whose time is asked */
    int channels;
    double allreduce_s, step_s; /* out */
    int plan_status;            /* out */
    lab11_plan plan;            /* out: your plan for m */
} model_args;

typedef struct step_args {
    lab11_model m;
    lab11_plan p;
    float *grads, *scratch;
} step_args;

#ifndef CL_STUDENT_SIDE

/* --- the modelled GPU (harness_device.c) --- */

#define MAX_RANKS 256

typedef struct device {
    const lab11_model *m;
    int next_layer, next_part, parts;
    int fill; /* "sim": a layer's gradient appears when its kernel ends */
    float *grads;
    uint64_t seed;
    double kernel_s, sm_s;  /* time charged, and time x SMs taken by communication */
    double start, last_end; /* the rank's clock at the step's start, at its last kernel's end */
} device;

/* Each rank's device (the step reads what its kernels took). */
extern device dev[MAX_RANKS];

/* Rank's device before a run of its kernels, layers-1 first. */
void device_reset(int rank, const lab11_model *m, float *grads, int fill, uint64_t seed);

/* The lab's operation: LAB11_OP_COMPUTE, one part of a kernel on the rank's device. */
cl_result lab_op(cl_run *run, cl_comm *c, int code, void *args, size_t bytes);

/* --- the modes (harness_model.c, harness_step.c) --- */

cl_result model_case(cl_case *c);
cl_result step_mode(cl_run *run, cl_comm *c);
cl_result gpu_mode(cl_run *run, cl_comm *c);
#endif

#endif /* COMMLAB_LAB11_HARNESS_H */
