/* lab29_harness.h: what lab 29's driver.c shares with its harness_*.c files.
 *
 * driver.c          the student's entries (both sides compile it) and the lab's table
 * harness_case.c    a case's server and job (its keys, the recorded topology), and a plan's keys
 * harness_model.c   a plan's step: the simulator on two servers, the handout's formulas for the
 *                   whole job, and the probe the student's program asks for (lab29_probe_plan)
 * harness_report.c  the columns of a plan and of its step, and chapter 1's baseline
 * harness_modes.c   the predict, plan, reference and cost modes
 */
#ifndef COMMLAB_LAB29_HARNESS_H
#define COMMLAB_LAB29_HARNESS_H

#include "harness/harness.h"
#include "lab29_op.h"

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct predict_args {
    lab29_case k;
    lab29_plan plan;
    lab29_probe probe;
    lab29_step step; /* out */
} predict_args;

typedef struct choose_args {
    lab29_case k;
    lab29_plan plan; /* out */
} choose_args;

#ifndef CL_STUDENT_SIDE
#include "sim/sim_launch.h"
#include "sim/sim_train_levels.h"

#define SLICE 2 /* servers the simulator runs */

/* --- harness_case.c --- */

/* The case being run, and the probes the student's program has asked for in it. */
struct current {
    cl_sim_train_levels levels; /* two servers' models, by NCCL_P2P_LEVEL */
    lab29_case k;
    int calls;
};
extern struct current current_case;

/* The case's server and job (every key optional; the defaults are chapter 1's job) into
 * current_case, its probes counted from zero. */
cl_result load_case(cl_case *c);

/* The plan tp= visible= [p2p=] of a case. */
cl_result plan_from_case(cl_case *c, lab29_plan *p);

/* --- harness_model.c --- */

extern const double ALPHAS[3]; /* tuning.cc hwLat, Ring, Simple */

/* The ranks' GPUs on the two servers and the P2P level of plan p. */
cl_result parse_plan(const lab29_plan *p, cl_sim_train_plan *out, int *level);

/* The two servers' model of a plan: the whole job's micro-batches, and DP gradients weighted
 * by w (the reference search weighs them as the whole job's DP ring does). */
cl_sim_train_model slice_model(const cl_sim_train_plan *p, double w);

/* The simulator's probe of a plan on the two servers at a P2P level. */
cl_result probe_of(const cl_sim_train_plan *sp, int level, lab29_probe *out);

/* The whole job's step of a plan with tensor parallelism tp from its probe (the handout's
 * table; lab29_predict() computes the same). */
void full_step(int tp, const lab29_probe *pr, lab29_step *out);

/* A plan's probe and its whole job's step. */
cl_result cost_of(const lab29_plan *p, lab29_probe *pr, lab29_step *out);

/* The operation behind lab29_probe_plan(), counted against the case's budget. */
cl_result lab_op(cl_run *run, cl_comm *comm, int code, void *args, size_t bytes);

/* --- harness_report.c --- */

/* A plan's columns, and its step's (with its probe's when pr is not NULL), keys prefixed. */
void col_plan(cl_row *r, const char *prefix, const lab29_plan *p);
void col_step(cl_row *r, const char *prefix, const lab29_step *s, const lab29_probe *pr);

/* Chapter 1's baseline plan, costed, in the base_... columns. */
cl_result baseline(cl_row *row);

/* --- the modes (harness_modes.c) --- */

cl_result predict_case(cl_case *c);
cl_result plan_case(cl_case *c);
cl_result reference_case(cl_case *c);
cl_result cost_case(cl_case *c);
#endif

#endif /* COMMLAB_LAB29_HARNESS_H */
