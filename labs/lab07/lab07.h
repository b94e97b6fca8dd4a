/* lab07.h: types and functions of lab 07 (8-GPU topology optimisation).
 * The driver (driver.c, model.c) calls the functions you write in lab07.c. */
#ifndef COMMLAB_LAB07_H
#define COMMLAB_LAB07_H

#include "commlab.h"

#define LAB07_MAX_GPUS 8 /* one 8-GPU server; the search and the model are exhaustive */

/* NCCL's effective bandwidths of one node type, GB/s in one direction
 * (NVIDIA/nccl src/graph/topo.h; datasets/lab07/node-types.csv). */
typedef struct lab07_node {
    double nvlink_gbps; /* one NVLink: 20 (SM70/SM80), 20.6 (SM90) */
    double pcie_gbps;   /* PCIe x16: 12 (Gen3), 24 (Gen4), 48 (Gen5) */
    double sys_gbps;    /* the SMP interconnect between sockets (QPI/UPI/xGMI) */
} lab07_node;

/* Parallel layout: tp * pp * dp == number of GPUs. Rank r has TP index
 * t = r % tp, DP index d = (r / tp) % dp and PP stage p = r / (tp * dp), i.e.
 * r = t + tp * (d + dp * p), Megatron-LM's order (TP fastest, then DP, then PP). */
typedef struct lab07_layout {
    int tp, pp, dp;
} lab07_layout;

/* The communication of one training step (sizes in bytes). */
typedef struct lab07_workload {
    double act_bytes;   /* activation of one micro-batch, b * s * h * bytes per element */
    double model_bytes; /* all parameters x bytes per element (gradients of the whole model) */
    int layers;         /* transformer layers of the whole model */
    int micro_batches;  /* micro-batches per step */
} lab07_workload;

/* A plan: where each rank runs and the colours/keys each rank passes to
 * ncclCommSplit(world, color, key, &newcomm, NULL) for its TP, DP and PP
 * communicators. Ranks with the same colour end up in one communicator,
 * ordered by key. */
typedef struct lab07_plan {
    int ngpus;
    int gpu_of_rank[LAB07_MAX_GPUS]; /* GPU index (0..ngpus-1) of each rank */
    int tp_color[LAB07_MAX_GPUS], tp_key[LAB07_MAX_GPUS];
    int dp_color[LAB07_MAX_GPUS], dp_key[LAB07_MAX_GPUS];
    int pp_color[LAB07_MAX_GPUS], pp_key[LAB07_MAX_GPUS];
} lab07_plan;

/* Communication time of one step under the model of the handout. */
typedef struct lab07_cost {
    double tp_s, dp_s, pp_s; /* per kind */
    double total_s;          /* tp_s + dp_s + pp_s */
    double tp_gbps, dp_gbps, pp_gbps; /* bottleneck bandwidth of each kind (0: none) */
} lab07_cost;

/* --- given (model.c): the handout's cost model ---------------------------- */

/* The best ring over the k GPUs of members[] with pair bandwidths bw (GB/s):
 * the largest achievable "slowest hop" over all ring orders. Returns 0 for an
 * empty group and a huge value for k == 1 (no hop). This function can't fail. */
double lab07_ring_gbps(const double bw[LAB07_MAX_GPUS][LAB07_MAX_GPUS], const int *members,
                       int k);

/* Step communication time of plan p (only gpu_of_rank is used; groups follow
 * the rank order of lab07_layout) with pair bandwidths bw. Returns CL_OK, or
 * CL_ERR_INVALID when the layout does not match p->ngpus. */
cl_result lab07_step_time(const double bw[LAB07_MAX_GPUS][LAB07_MAX_GPUS], const lab07_layout *l,
                          const lab07_workload *w, const lab07_plan *p, lab07_cost *out);

/* --- written by the student in lab07.c, in the order of the handout -------- */

/* Fill the TP/DP/PP colours and keys of every rank of p for layout l (p->ngpus
 * is set). Returns CL_ERR_INVALID when tp * pp * dp != p->ngpus. */
cl_result lab07_split_colors(const lab07_layout *l, lab07_plan *p);

/* Bandwidth (GB/s) of the path between GPUs a and b of t, from its link class. */
double lab07_pair_gbps(const cl_topo *t, int a, int b, const lab07_node *node);

/* Choose the plan with the smallest lab07_step_time() for topology t (its first
 * `ngpus` devices are the GPUs), node constants, layout and workload. Fills
 * every field of *out. CL_ERR_INVALID for a layout that does not fit. */
cl_result lab07_choose_plan(const cl_topo *t, int ngpus, const lab07_node *node,
                            const lab07_layout *l, const lab07_workload *w, lab07_plan *out);

#endif /* COMMLAB_LAB07_H */
