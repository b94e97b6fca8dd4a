/* lab07_harness.h: what lab 07's driver.c shares with its harness_*.c files.
 *
 * driver.c         the student's entries (both sides compile it) and the lab's table
 * harness_model.c  the case read into the harness's model, a plan's launch line parsed and
 *                  costed, and lab_op, behind the student's lab07_step_time()
 * harness_plans.c  the plan, reference and cost modes, and the columns of a plan and its cost
 * harness_ranks.c  the split, visible and gpu modes: the student's colours and keys, its
 *                  CUDA_VISIBLE_DEVICES, and TP communicators split with its colours
 */
#ifndef COMMLAB_LAB07_HARNESS_H
#define COMMLAB_LAB07_HARNESS_H

#include "harness/harness.h"
#include "lab07_op.h"

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct split_args {
    int tp, pp, dp, tp_pp_dp;
    int first, count;                 /* ranks first .. first + count - 1 */
    lab07_split out[LAB07_MAX_RANKS]; /* out */
    int status[LAB07_MAX_RANKS];      /* out: each rank's result */
} split_args;

typedef struct visible_args {
    int nodes, gpus_per_node;
    int gpu_of_rank[LAB07_MAX_RANKS];
    lab07_plan plan; /* out: visible */
} visible_args;

typedef struct plan_args {
    lab07_case k;
    lab07_plan plan; /* out */
} plan_args;

#ifndef CL_STUDENT_SIDE
#include "sim/sim_train_levels.h"

/* --- harness_model.c --- */

/* The case being run: the nodes' models, the case as the student sees it, the training job
 * and the calls of lab07_step_time() so far (load_case sets it). */
typedef struct lab07_current {
    cl_sim_train_levels levels; /* the nodes' models, by NCCL_P2P_LEVEL */
    lab07_case k;
    cl_sim_train_model model;
    int calls;
} lab07_current;
extern lab07_current current_case;

/* The case's topo=FILE, node type and training job, read into current_case (budget unspent). */
cl_result load_case(cl_case *c);

/* What the launch line of p means: the ranks' GPUs and the P2P level. */
cl_result parse_plan(const lab07_plan *p, cl_sim_train_plan *out, int *level);

/* The model's cost of p on the case's nodes at P2P level `level`. */
cl_result cost_of(const cl_sim_train_plan *p, int level, cl_sim_train_cost *c);

/* The operation behind lab07_step_time() (cl_lab.lab_op): a plan costed, a call counted. */
cl_result lab_op(cl_run *run, cl_comm *comm, int code, void *args, size_t bytes);

/* --- the modes (harness_plans.c, harness_ranks.c) --- */

cl_result plan_case(cl_case *c);
cl_result reference_case(cl_case *c);
cl_result cost_case(cl_case *c);
cl_result split_case(cl_case *c);
cl_result visible_case(cl_case *c);
cl_result gpu_split(cl_run *run, cl_comm *comm);
#endif

#endif /* COMMLAB_LAB07_HARNESS_H */
