/* lab07.h: types and functions of lab 07 (topology optimisation of one or two 8-GPU servers).
 * The harness (driver.c) calls the functions you write in lab07.c; model.c gives you
 * lab07_step_time(), the harness's model of a training step. */
#ifndef COMMLAB_LAB07_H
#define COMMLAB_LAB07_H

#include "commlab.h"

#define LAB07_MAX_NODES   2
#define LAB07_MAX_GPUS    8  /* GPUs of one node */
#define LAB07_MAX_NICS    16 /* NICs of one node */
#define LAB07_MAX_RANKS   (LAB07_MAX_NODES * LAB07_MAX_GPUS)
#define LAB07_VISIBLE_LEN 32 /* one CUDA_VISIBLE_DEVICES value */

/* One node, as `nvidia-smi topo -m` shows it (common/topo.h: kind, nvlinks for
 * NV#, and the code as printed), with NCCL's bandwidths for its parts (GB/s,
 * one direction; NVIDIA/nccl src/graph/topo.h) and what its GPUs hold. */
typedef struct lab07_node {
    int ngpus, nnics;
    cl_link gpu[LAB07_MAX_GPUS][LAB07_MAX_GPUS]; /* GPU i to GPU j ("X" on the diagonal) */
    cl_link nic[LAB07_MAX_GPUS][LAB07_MAX_NICS]; /* GPU i to NIC k */
    int sm;             /* compute capability x 10: 70 V100, 80 A100, 89 RTX 4090, 90 H100 */
    double nvlink_gbps; /* one NVLink */
    double pcie_gbps;   /* PCIe x16 */
    double sys_gbps;    /* the link between the two CPUs */
    double net_gbps;    /* one NIC port */
    double gpu_mem_bytes;
} lab07_node;

/* The job: a GPT-style transformer trained with Megatron-LM's TP x PP x DP. */
typedef struct lab07_model {
    double params; /* parameters of the whole model */
    int layers, hidden, seq_len;
    int micro_batch;  /* sequences per micro-batch */
    int global_batch; /* sequences per step */
    double bytes;     /* bytes of one activation or gradient value (2: bf16) */
    double compute_s; /* the step's computation, spread evenly over every GPU */
} lab07_model;

/* One case: `nodes` identical nodes; rank r runs on node r / ngpus as local rank
 * r % ngpus (the ranks of mpirun --map-by slot, or srun's block distribution). */
typedef struct lab07_case {
    int nodes;
    lab07_node node;
    lab07_model model;
    int budget; /* calls of lab07_step_time() this case allows */
} lab07_case;

/* What a user sets to launch the job:
 *   tp, pp, dp            --tensor-model-parallel-size, --pipeline-model-parallel-size
 *                         (dp follows); tp * pp * dp = every GPU of every node
 *   tp_pp_dp              1: --use-tp-pp-dp-mapping, Megatron's rank order
 *                         r = t + tp * (s + pp * d); 0: the default, r = t + tp * (d + dp * s)
 *                         (t TP index, d DP index, s pipeline stage)
 *   visible[n]            CUDA_VISIBLE_DEVICES on node n: local rank i runs on the GPU
 *                         listed i-th ("3,6,0,5,2,7,1,4"); every GPU of the node once
 *   p2p_level             NCCL_P2P_LEVEL ("NVL", "PIX", "PXB", "PHB", "SYS"; "" unset) */
typedef struct lab07_plan {
    int tp, pp, dp;
    int tp_pp_dp;
    char visible[LAB07_MAX_NODES][LAB07_VISIBLE_LEN];
    char p2p_level[8];
} lab07_plan;

/* The harness's model of one step of a plan (handout, "模型"). */
typedef struct lab07_cost {
    double step_s; /* compute_s + bubble_s + tp_s + dp_s + pp_s */
    double compute_s, bubble_s;
    double tp_s, dp_s, pp_s;            /* communication of each kind */
    double tp_busbw, dp_busbw, pp_gbps; /* of the slowest group of each kind (0: none) */
    double mem_bytes;                   /* memory of one GPU */
    int fits;                           /* mem_bytes <= the GPU's memory */
    int calls_left;                     /* of this case's budget */
} lab07_cost;

/* The ncclCommSplit(world, color, key, &comm, NULL) arguments of one rank for
 * its TP, DP and PP communicators. */
typedef struct lab07_split {
    int tp_color, tp_key;
    int dp_color, dp_key;
    int pp_color, pp_key;
} lab07_split;

/* --- given (model.c) ---------------------------------------------------------- */

/* The harness's model of one training step of plan p on this case's nodes:
 * NCCL's channels for every group, all groups of a kind at once. Each call
 * counts against the case's budget. CL_ERR_INVALID (with the reason) for a
 * plan the harness cannot launch, or when the budget is spent. */
cl_result lab07_step_time(cl_comm *comm, const lab07_plan *p, lab07_cost *out);

/* --- written by the student in lab07.c, in the order of the handout ----------- */

/* The colours and keys of rank `rank` for layout tp x pp x dp in the order
 * tp_pp_dp (see lab07_plan). CL_ERR_INVALID unless 0 <= rank < tp * pp * dp
 * and every size is at least 1. */
cl_result lab07_split_colors(int tp, int pp, int dp, int tp_pp_dp, int rank, lab07_split *out);

/* CUDA_VISIBLE_DEVICES of every node so that rank r runs on GPU gpu_of_rank[r]
 * (r = 0 .. nodes * gpus_per_node - 1; GPU g is GPU g % gpus_per_node of node
 * g / gpus_per_node) into p->visible. CL_ERR_INVALID (and p->visible
 * untouched) when a rank would leave its node or two ranks share a GPU. */
cl_result lab07_visible_devices(const int *gpu_of_rank, int nodes, int gpus_per_node,
                                lab07_plan *p);

/* Choose the plan with the shortest step on case k (at most k->budget calls of
 * lab07_step_time). Fills every field of *out. */
cl_result lab07_choose_plan(cl_comm *comm, const lab07_case *k, lab07_plan *out);

#endif /* COMMLAB_LAB07_H */
