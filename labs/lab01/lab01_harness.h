/* lab01_harness.h: what lab 01's driver.c shares with its harness_*.c files.
 *
 * driver.c            the student's entries (both sides compile it) and the lab's table
 * harness_pingpong.c  the sweep and bench modes: the student's ping-pong beside the
 *                     harness's own loop, checked and timed, and the student's fit of it
 * harness_model.c     the model's cases: the fit, ring, estimate and plan modes
 */
#ifndef COMMLAB_LAB01_HARNESS_H
#define COMMLAB_LAB01_HARNESS_H

#include "harness/harness.h"
#include "lab01.h"

#define MAX_POINTS 64

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct pingpong_args {
    void *buf;
    size_t bytes;
    int iters;
    double one_way_s; /* out */
} pingpong_args;

typedef struct fit_args {
    int n;
    double bytes[MAX_POINTS], seconds[MAX_POINTS];
    double alpha_s, beta_s_per_byte; /* out */
} fit_args;

typedef struct ring_args {
    int p;
    double bytes;
    lab01_link link;
    lab01_cost out; /* out */
} ring_args;

typedef struct step_args {
    lab01_workload w;
    lab01_cluster c;
    lab01_layout l; /* in for "estimate", out for "plan" */
    lab01_estimate out;
} step_args;

#ifndef CL_STUDENT_SIDE

/* --- harness_pingpong.c --- */

cl_result sweep(cl_run *run, cl_comm *c);
cl_result bench(cl_run *run, cl_comm *c);

/* --- harness_model.c --- */

cl_result fit_case(cl_case *c);
cl_result ring_case(cl_case *c);
cl_result estimate_case(cl_case *c);
cl_result plan_case(cl_case *c);
#endif

#endif /* COMMLAB_LAB01_HARNESS_H */
