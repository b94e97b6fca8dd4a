/* lab21_harness.h: the argument blocks of lab 21's student entries (the same on both sides),
 * and what its driver.c shares with its harness_*.c files (harness only):
 *
 * driver.c            the student's entries (both sides compile it) and the lab's table
 * harness_megatron.c  Megatron-LM's groups, as the harness computes them
 * harness_step.c      the step model of a plan it simulates, and the search for the best plan
 * harness_comms.c     the student's communicators, as the harness reads them (lab_op)
 * harness_checks.c    the groups and comms modes, and the configuration text they read
 * harness_plan.c      the plan mode
 */
#ifndef COMMLAB_LAB21_HARNESS_H
#define COMMLAB_LAB21_HARNESS_H

#include "harness/harness.h"
#include "lab21.h"

typedef struct gen_args {
    lab21_sizes s;
    char order[LAB21_ORDER_LEN], token[LAB21_ORDER_LEN];
    int init_status;             /* out: lab21_generator_init */
    int ngroups, gsize;          /* out */
    int groups[LAB21_MAX_WORLD]; /* out */
} gen_args;

typedef struct init_args {
    lab21_parallel p;
} init_args;

typedef struct plan_args {
    lab21_job j;
    lab21_plan plan; /* out */
} plan_args;

#ifndef CL_STUDENT_SIDE

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

/* --- the communicators, as the harness reads them (harness_comms.c) --------------------- */

/* What rank w showed for each kind in its last call of init: the first
 * member of its group (-1: none, -2: not shown), its place, and the harness's
 * communicator. */
typedef struct shown {
    int first[LAB21_KINDS], place[LAB21_KINDS];
    cl_comm *comm[LAB21_KINDS];
} shown;

extern shown seen[LAB21_MAX_WORLD];

/* The operation the student side calls on each communicator it built (lab21_ops.h). */
cl_result lab_op(cl_run *run, cl_comm *c, int code, void *args, size_t bytes);

/* Call the student's lab21_init_parallel for p on every rank; *status its result
 * (the same on every rank, or the first failure). */
cl_result student_init(cl_comm *world, const lab21_parallel *p, cl_result *status, char *why,
                       size_t whylen);

/* Gather every rank's (first member, place) of kind k at every rank. */
cl_result gather_kind(cl_comm *world, int k, int *first, int *place);

/* Ranks whose group of kind k differs from the reference's (first member, place). */
int mismatches(const lab21_layout *ref, int k, const int *first, const int *place, int n);

/* The working memory of one configuration's check, per rank: the simulated
 * ranks of one process interleave at every agreement. */
typedef struct check_mem {
    lab21_layout ref;
    int first[LAB21_MAX_WORLD], place[LAB21_MAX_WORLD];
    char groups[8 * LAB21_MAX_WORLD], none[8 * LAB21_MAX_WORLD];
} check_mem;

/* --- the groups and comms modes (harness_checks.c) -------------------------------------- */

/* key=value tokens of text into a configuration (missing keys keep p's values). */
cl_result parse_config(const char *text, lab21_parallel *p, lab21_plan *plan);

cl_result groups_case(cl_case *c);
cl_result comms_mode(cl_run *run, cl_comm *world);

/* --- the plan mode (harness_plan.c) ----------------------------------------------------- */

cl_result plan_mode(cl_run *run, cl_comm *world);

#endif /* CL_STUDENT_SIDE */

#endif /* COMMLAB_LAB21_HARNESS_H */
