/* sim_train.h: one training step of a TP x PP x DP job on a simulated server: its communication.
 *
 * Ranks follow Megatron-LM's order (megatron/core/parallel_state.py,
 * RankGenerator): with the default order "tp-dp-pp",
 *     r = t + tp * (d + dp * p),
 * and with --use-tp-pp-dp-mapping ("tp-pp-dp") r = t + tp * (p + pp * d),
 * for TP index t, DP index d and pipeline stage p. Rank r runs on GPU
 * gpu_of_rank[r] of the net (sim_topo.h).
 *
 * Every TP group, DP group and pair of neighbouring stages is an NCCL
 * communicator; its channels are the ones NCCL's search finds over its GPUs
 * (sim_channels.h). All groups of one kind communicate at the same time and
 * share the links; the kinds take turns. Per step (no overlap):
 *   TP  sequence parallelism: per layer and micro-batch 2 AllGathers and 2
 *       ReduceScatters forward and as many backward, i.e. 4 ring AllReduces
 *       of the activation s*b*h*bytes (Korthikanti et al., MLSys 2023):
 *         tp_s = 4 * layers / pp * m * T(tp, act)
 *   DP  one AllReduce of the gradients, params * bytes / (tp * pp):
 *         dp_s = T(dp, grads)
 *   PP  per micro-batch an activation forward and a gradient back:
 *         pp_s = 2 * m * (alpha + act / rate), rate of the slowest pair
 * with T(k, S) = 2(k-1) * alpha + 2(k-1)/k * S / busbw (the group's busbw,
 * the slowest group of the kind) and alpha NCCL's per-step latency of the
 * Simple protocol on the group's slowest path (src/graph/tuning.cc hwLat:
 * NVLink 3.4 us, PCI 5.7 us, network 14 us). m = global batch / (dp * b)
 * micro-batches; compute is the step's work spread over every GPU, plus the
 * pipeline bubble: compute_s * (m + pp - 1) / m.
 * Memory of one GPU: 16 bytes per parameter of its share params / (tp * pp)
 * (mixed-precision Adam: Rajbhandari et al., ZeRO, SC 2020), and activations
 * of 34*s*b*h / tp bytes per layer (sequence parallelism with selective
 * recomputation, Korthikanti et al.) for layers / pp layers times the pp
 * micro-batches the first stage of 1F1B keeps in flight: layers in all.
 */
#ifndef COMMLAB_SIM_TRAIN_H
#define COMMLAB_SIM_TRAIN_H

#include "result.h"
#include "sim_channels.h"

enum { CL_SIM_ORDER_TP_DP_PP, CL_SIM_ORDER_TP_PP_DP };

typedef struct cl_sim_train_model {
    double params; /* parameters of the whole model */
    int layers, hidden, seq_len;
    int micro_batch;      /* sequences per micro-batch (b) */
    int global_batch;     /* sequences per step */
    double bytes;         /* bytes per activation and gradient value: 2 (bf16) */
    double compute_s;     /* the step's computation divided by the number of GPUs */
    double gpu_mem_bytes; /* memory of one GPU */
} cl_sim_train_model;

typedef struct cl_sim_train_plan {
    int tp, pp, dp;
    int order; /* CL_SIM_ORDER_* */
    int gpu_of_rank[CL_SIM_TOPO_MAX_GPUS];
} cl_sim_train_plan;

typedef struct cl_sim_train_cost {
    double step_s; /* compute_s + bubble_s + tp_s + dp_s + pp_s */
    double compute_s, bubble_s;
    double tp_s, dp_s, pp_s;
    double tp_busbw, dp_busbw, pp_gbps; /* of the slowest group (0: none) */
    double mem_bytes;                   /* per GPU */
    int fits;                           /* mem_bytes <= the GPU's memory */
    int micro_batches;
} cl_sim_train_cost;

/* The TP index, DP index and stage of rank r of plan p. Can't fail. */
void cl_sim_train_coords(const cl_sim_train_plan *p, int r, int *t, int *d, int *s);

/* The rank with those coordinates. Can't fail. */
int cl_sim_train_rank(const cl_sim_train_plan *p, int t, int d, int s);

/* A model of one net, which caches NCCL's channels of every GPU set it saw. */
typedef struct cl_sim_train cl_sim_train;

cl_result cl_sim_train_new(const cl_sim_topo_net *net, int sm, cl_sim_train **out);
void cl_sim_train_free(cl_sim_train *t);

/* Memory of one GPU under layout tp x pp (bytes). Can't fail. */
double cl_sim_train_memory(const cl_sim_train_model *m, int tp, int pp);

/* The step of plan p. CL_ERR_INVALID (with the reason) when the layout does
 * not cover the net's GPUs, the global batch does not split into whole
 * micro-batches over dp, or gpu_of_rank is not a permutation. A plan that
 * does not fit memory is costed all the same (fits = 0). */
cl_result cl_sim_train_cost_of(cl_sim_train *t, const cl_sim_train_model *m,
                               const cl_sim_train_plan *p, cl_sim_train_cost *out);

/* Plans costed so far (for reports). */
long cl_sim_train_evaluations(const cl_sim_train *t);

/* The fastest plan that fits that this search finds: on one node every
 * layout, both orders and every mapping (mappings that give the same groups
 * are costed once); on several nodes every layout and order with the same
 * mapping on every node, then swaps of two ranks of one node while they help.
 * only (NULL: any) restricts the layout to only->tp x only->pp x only->dp.
 * Returns CL_OK, CL_ERR_INVALID when no layout fits, CL_ERR_NOMEM. */
cl_result cl_sim_train_best(cl_sim_train *t, const cl_sim_train_model *m,
                            const cl_sim_train_plan *only, cl_sim_train_plan *best,
                            cl_sim_train_cost *cost);

#endif /* COMMLAB_SIM_TRAIN_H */
