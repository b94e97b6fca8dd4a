/* lab21_harness.h: lab 21's harness side: Megatron-LM's groups as the harness computes them,
 * and the step model it simulates (harness_megatron.c, harness_step.c; never in the
 * student's program). */
#ifndef COMMLAB_LAB21_HARNESS_H
#define COMMLAB_LAB21_HARNESS_H

#include "harness/harness.h"
#include "lab21.h"

/* --- Megatron-LM's groups (harness_megatron.c) ------------------------------------------ */

/* The twelve kinds' spellings, as in datasets/lab21/comms.txt. */
extern const char *const lab21_kind_names[LAB21_KINDS];

/* For every rank r of a world of `world` ranks under configuration p, the
 * group of each kind: color[k][r] = the group's index (-1: none), key[k][r] =
 * r's place in it. CL_ERR_INVALID with a reason when Megatron-LM refuses p. */
typedef struct lab21_layout {
    int world;
    int color[LAB21_KINDS][LAB21_MAX_WORLD];
    int key[LAB21_KINDS][LAB21_MAX_WORLD];
} lab21_layout;

cl_result lab21_ref_layout(int world, const lab21_parallel *p, lab21_layout *out);

/* --- the step (harness_step.c) ---------------------------------------------------------- */

/* A plan's step in the handout's model: compute from the model, each kind's
 * collective simulated on the plan's communicators. */
typedef struct lab21_cost {
    int valid; /* 0: see why */
    char why[160];
    double micro_batches;
    double layer_s; /* one layer's forward and backward, one micro-batch */
    double tp_s;    /* one AllReduce of the TP group's activations */
    double cp_s;    /* one layer's KV exchange: two AllGathers and a ReduceScatter */
    double pp_s;    /* one activation sent to the next stage */
    double dp_s;    /* the gradients' AllReduce over dp-cp */
    double step_s;
    double mem_GB;
} lab21_cost;

/* The communicators a step uses (NULL where a kind has one rank). */
typedef struct lab21_step_comms {
    cl_comm *tp, *cp, *pp, *dpcp;
} lab21_step_comms;

/* The model's side of plan p for job j: validity (divisibility, memory,
 * Megatron-LM's rules), micro-batches, compute and memory. Fills c, leaving
 * the communication times 0. This function can't fail. */
void lab21_cost_model(const lab21_job *j, const lab21_plan *p, lab21_cost *c);

/* Simulate the communication of plan p on every rank of world with its
 * communicators s, and finish c->step_s (every rank gets the same numbers).
 * buf is a rank buffer of at least lab21_step_bytes(j) bytes. */
cl_result lab21_simulate(cl_comm *world, const lab21_job *j, const lab21_plan *p,
                         const lab21_step_comms *s, void *buf, lab21_cost *c);

/* The largest buffer any plan's step needs on one rank, bytes. */
size_t lab21_step_bytes(const lab21_job *j);

/* Every valid plan of j, simulated with the harness's own communicators;
 * *best the fastest, *count how many were tried. */
cl_result lab21_search(cl_comm *world, const lab21_job *j, void *buf, lab21_plan *best,
                       lab21_cost *best_cost, int *count);

#endif /* COMMLAB_LAB21_HARNESS_H */
