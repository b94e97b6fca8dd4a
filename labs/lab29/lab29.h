/* lab29.h: types and functions of lab 29 (chapter 1's 256-server case, end to end).
 * The harness (driver.c) calls the functions you write in lab29.c; probe.c gives you
 * lab29_probe(), the simulator's answer for one plan. */
#ifndef COMMLAB_LAB29_H
#define COMMLAB_LAB29_H

#include "commlab.h"

#define LAB29_GPUS        8  /* GPUs of one server */
#define LAB29_MAX_NICS    16 /* NICs of one server */
#define LAB29_VISIBLE_LEN 32 /* one CUDA_VISIBLE_DEVICES value */

/* One server, as `nvidia-smi topo -m` shows it (common/topo.h: kind, nvlinks for NV#,
 * and the code as printed), with NCCL's bandwidths for its parts (GB/s, one direction;
 * NVIDIA/nccl src/graph/topo.h) and the memory of one GPU. */
typedef struct lab29_node {
    int ngpus, nnics;
    cl_link gpu[LAB29_GPUS][LAB29_GPUS];     /* GPU i to GPU j ("X" on the diagonal) */
    cl_link nic[LAB29_GPUS][LAB29_MAX_NICS]; /* GPU i to NIC k */
    double nvlink_gbps, pcie_gbps, sys_gbps, net_gbps;
    double gpu_mem_bytes;
} lab29_node;

/* The job: a GPT-style transformer on `nodes` identical servers, Megatron-LM's TP x DP
 * (no pipeline), sequence parallelism in the TP groups. */
typedef struct lab29_job {
    int nodes;
    double params; /* parameters of the whole model */
    int layers, hidden, seq_len;
    int micro_batch;  /* sequences per micro-batch (b) */
    int global_batch; /* sequences per step */
    double bytes;     /* bytes of one activation or gradient value (2: bf16) */
    double compute_s; /* the step's computation, spread evenly over every GPU */
} lab29_job;

typedef struct lab29_case {
    lab29_node node;
    lab29_job job;
    int budget; /* calls of lab29_probe() this case allows */
} lab29_case;

/* A launch: --tensor-model-parallel-size tp (dp = every GPU / tp follows), the same
 * CUDA_VISIBLE_DEVICES on every server (local rank i runs on the i-th GPU listed, every
 * GPU once), and NCCL_P2P_LEVEL ("" unset, or LOC, NVL, PIX, PXB, PHB, SYS). Ranks
 * follow Megatron-LM's order r = t + tp * d, rank r on server r / 8 as local rank r % 8. */
typedef struct lab29_plan {
    int tp;
    char visible[LAB29_VISIBLE_LEN];
    char p2p_level[8];
} lab29_plan;

/* What the simulator measured for a plan on two of the servers (every TP group and every
 * DP group of a kind at once, NCCL's channels on the recorded server): the bus bandwidth
 * (GB/s) of the slowest group of each kind and NCCL's per-step latency (s) on that
 * group's slowest path. 0 for a kind with groups of one GPU. */
typedef struct lab29_probe {
    double tp_busbw, tp_alpha_s;
    double dp_busbw, dp_alpha_s;
    int calls_left; /* of this case's budget */
} lab29_probe;

/* One step of the whole job (handout, "模型"). */
typedef struct lab29_step {
    double step_s; /* compute_s + tp_s + dp_s */
    double compute_s, tp_s, dp_s;
    double mem_bytes; /* of one GPU */
    int fits;         /* mem_bytes <= the GPU's memory */
    int micro_batches;
} lab29_step;

/* --- given (probe.c) --------------------------------------------------------------------- */

/* The simulator's measurement of plan p (see lab29_probe). Each call counts against the
 * case's budget. CL_ERR_INVALID (with the reason) for a plan the harness cannot launch,
 * or when the budget is spent. */
cl_result lab29_probe_plan(cl_comm *comm, const lab29_plan *p, lab29_probe *out);

/* --- written by the student in lab29.c, in the order of the handout ------------------------ */

/* The step of plan p on the whole job of case k, from the probe pr of that plan.
 * CL_ERR_INVALID when tp does not divide the server's GPUs or the global batch does not
 * split into whole micro-batches over dp. */
cl_result lab29_predict(const lab29_case *k, const lab29_plan *p, const lab29_probe *pr,
                        lab29_step *out);

/* Choose the plan with the shortest step on case k (at most k->budget probes). Fills
 * every field of *out. */
cl_result lab29_choose(cl_comm *comm, const lab29_case *k, lab29_plan *out);

#endif /* COMMLAB_LAB29_H */
