/* lab21.h: types and functions of lab 21 (Megatron-LM's parallel groups).
 * The plug-in (driver.c) calls the functions you write in lab21.c. */
#ifndef COMMLAB_LAB21_H
#define COMMLAB_LAB21_H

#include <stddef.h>

#include "commlab.h"

#define LAB21_DIMS      5    /* tp, cp, ep, dp, pp */
#define LAB21_MAX_WORLD 1024 /* ranks of one generator */
#define LAB21_ORDER_LEN 32   /* "tp-cp-ep-dp-pp" and its terminating zero fit */

/* --- 1. the rank generator (Megatron-LM's RankGenerator) --------------------------------- */

/* The sizes of the five kinds of parallelism. */
typedef struct lab21_sizes {
    int tp, cp, ep, dp, pp;
} lab21_sizes;

/* A generator: the kinds in the order's order (fastest-varying first), every
 * kind present (the ones the order leaves out appended at the end, as
 * RankGenerator.__init__ does), and their sizes. */
typedef struct lab21_generator {
    int world;                /* tp x cp x ep x dp x pp */
    int ndims;                /* always LAB21_DIMS once built */
    char name[LAB21_DIMS][3]; /* "tp", "cp", "ep", "dp", "pp" in the order */
    int size[LAB21_DIMS];     /* the size of each */
} lab21_generator;

/* TODO 1: build g from the sizes and the order string ("tp-cp-ep-dp-pp";
 * case does not matter). CL_ERR_INVALID with a reason for: a size below 1, a
 * world above LAB21_MAX_WORLD, ep > 1 together with cp > 1, a name that is not
 * one of the five or appears twice, a kind of size > 1 missing from the order. */
cl_result lab21_generator_init(lab21_generator *g, const lab21_sizes *s, const char *order);

/* TODO 2: RankGenerator.get_ranks(token): the groups of the kinds named in
 * token ("dp", "tp-pp", "dp-cp": names joined by '-', in any order). Writes
 * *ngroups groups of *gsize ranks each into groups[] (group after group, the
 * ranks of a group in Megatron's order), at most cap ints. CL_ERR_INVALID for
 * an unknown or repeated name, or when cap is too small. */
cl_result lab21_get_ranks(const lab21_generator *g, const char *token, int *groups, size_t cap,
                          int *ngroups, int *gsize);

/* --- 2. the communicators (initialize_model_parallel) ------------------------------------- */

/* The communicators Megatron-LM builds, by kind. The expert kinds come from
 * the expert generator: tp = etp, ep, dp = world / (etp ep pp), pp, cp = 1. */
enum lab21_kind {
    LAB21_TP,       /* decoder "tp" */
    LAB21_CP,       /* "cp" */
    LAB21_DP,       /* "dp" */
    LAB21_DP_CP,    /* "dp-cp": where gradients are reduced */
    LAB21_PP,       /* "pp" */
    LAB21_MP,       /* "tp-pp": the model-parallel group */
    LAB21_TP_CP,    /* "tp-cp" */
    LAB21_TP_DP_CP, /* "tp-dp-cp" */
    LAB21_EMBD,     /* the first and the last rank of each pp group (one rank if pp = 1) */
    LAB21_EP,       /* expert "ep" */
    LAB21_ETP,      /* expert "tp" */
    LAB21_EDP,      /* expert "dp" */
    LAB21_KINDS
};

/* A configuration of initialize_model_parallel on world ranks. */
typedef struct lab21_parallel {
    int tp, cp, pp; /* dp = world / (tp cp pp) */
    int ep, etp;    /* expert model and expert tensor parallel sizes */
    char order[LAB21_ORDER_LEN];
} lab21_parallel;

/* This rank's communicators: NULL where the rank is in no group of that kind
 * (the embedding group of a middle stage). */
typedef struct lab21_comms {
    cl_comm *c[LAB21_KINDS];
} lab21_comms;

/* TODO 3: on every rank of world, build the twelve communicators of
 * configuration p with cl_comm_split: the same groups, with the ranks in the
 * same order, as Megatron-LM's initialize_model_parallel. CL_ERR_INVALID (on
 * every rank, before any split) for a configuration Megatron-LM refuses. */
cl_result lab21_init_parallel(cl_comm *world, const lab21_parallel *p, lab21_comms *out);

/* --- 3. the decision: sizes and order for a model on a cluster ---------------------------- */

/* A GPT-style decoder. */
typedef struct lab21_model {
    int layers, hidden, heads, seq, vocab;
    int global_batch, micro_batch; /* sequences per step, per micro-batch */
} lab21_model;

/* A cluster of identical nodes (a recorded system of the simulator). */
typedef struct lab21_cluster {
    int nodes, gpus_per_node, nics_per_node;
    double nvlink_GBps; /* one GPU's NVLink bandwidth to the node's switch, each way */
    double nic_GBps;    /* one NIC, each way */
    double hbm_GBps;    /* one GPU's memory bandwidth (reductions cost 3 bytes per byte) */
    double nvl_lat_us;  /* latency of one message inside a node */
    double net_lat_us;  /* latency of one message between nodes */
    double tflops;      /* one GPU's achieved dense bf16 rate, 1e12 FLOP/s */
    double mem_GB;      /* one GPU's memory, 1e9 bytes */
} lab21_cluster;

typedef struct lab21_job {
    lab21_model m;
    lab21_cluster c;
} lab21_job;

/* A plan: the sizes (ep = 1: the model is dense) and the order. */
typedef struct lab21_plan {
    int tp, cp, pp, dp;
    char order[LAB21_ORDER_LEN];
} lab21_plan;

/* TODO 4: choose the plan for job j: tp x cp x pp x dp = all the GPUs, a valid
 * plan that fits in memory, with the shortest step you can predict (the
 * handout's step model). CL_ERR_INVALID when no plan fits. */
cl_result lab21_plan_job(const lab21_job *j, lab21_plan *out);

#endif /* COMMLAB_LAB21_H */
