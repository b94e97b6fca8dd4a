/* lab01.h: types and functions of lab 01 (the alpha-beta cost model).
 * The harness (driver.c) calls the functions you write in lab01.c. */
#ifndef COMMLAB_LAB01_H
#define COMMLAB_LAB01_H

#include "p2p.h"
#include "result.h"

/* One kind of link in the alpha-beta model: sending n bytes takes
 * alpha + n / bandwidth. */
typedef struct lab01_link {
    double alpha_s;       /* start-up latency per message (per ring step), seconds */
    double bandwidth_Bps; /* bytes per second, one direction */
} lab01_link;

/* A communication time split into its two terms: the part that depends on
 * the number of messages (alpha) and the part that depends on the bytes (beta). */
typedef struct lab01_cost {
    double alpha_s;
    double beta_s;
} lab01_cost;

/* The training job: a transformer trained with TP x PP x DP parallelism. */
typedef struct lab01_workload {
    double params;            /* parameters of the whole model, P */
    double bytes_per_element; /* 2 for bf16/fp16 gradients and activations */
    int layers;               /* transformer layers of the whole model, L */
    int hidden;               /* hidden size h */
    int seq_len;              /* sequence length s */
    int global_batch;         /* sequences per training step, B */
    int micro_batch;          /* sequences per micro-batch, b */
    double gpu_flops;         /* sustained FLOP/s of one GPU on the model's math */
} lab01_workload;

/* The cluster: identical nodes, one link kind inside a node, one between. */
typedef struct lab01_cluster {
    int nodes;
    int gpus_per_node;
    double mem_bytes; /* per GPU, for parameters, gradients and optimizer state */
    lab01_link intra; /* NVLink/NVSwitch inside a node */
    lab01_link inter; /* IB/RoCE between nodes, per GPU */
} lab01_cluster;

/* Parallel layout. Global rank r = t + tp * (d + dp * p) for TP index t,
 * DP index d, PP stage p; rank r sits on node r / gpus_per_node. Every size
 * in this lab (gpus_per_node, nodes, tp, pp, dp) is a power of two. */
typedef struct lab01_layout {
    int tp, pp, dp;
} lab01_layout;

/* One training step under a layout: its time, part by part (no overlap). */
typedef struct lab01_estimate {
    int micro_batches; /* m = global_batch / (micro_batch * dp), per pipeline */
    double compute_s;  /* the step's arithmetic on one GPU */
    double bubble_s;   /* pipeline fill and drain */
    lab01_cost tp;     /* tensor-parallel AllReduces of activations */
    lab01_cost dp;     /* the data-parallel AllReduce of gradients */
    lab01_cost pp;     /* pipeline sends of activations and their gradients */
    double comm_s;     /* the six communication parts together */
    double step_s;     /* compute_s + bubble_s + comm_s */
    double share;      /* comm_s / step_s */
} lab01_estimate;

/* --- written by the student in lab01.c, in the order of the handout --- */

/* Ping-pong `iters` round trips of `bytes` between ranks 0 and 1 (other
 * ranks return at once). On ranks 0 and 1 store the mean one-way time of a
 * message in *one_way_s. buf holds at least `bytes` bytes from cl_mem_alloc. */
cl_result lab01_pingpong(cl_comm *comm, void *buf, size_t bytes, int iters, double *one_way_s);

/* Fit t = alpha + beta * n to n points (bytes[i], seconds[i]) minimising the
 * squared RELATIVE error (see the handout). beta is seconds per byte.
 * CL_ERR_INVALID when n < 2, a time is not positive, or all sizes are equal. */
cl_result lab01_fit_alpha_beta(const double *bytes, const double *seconds, int n, double *alpha_s,
                               double *beta_s_per_byte);

/* A ring AllReduce of `bytes` over p ranks on link, split into its alpha
 * and beta parts; both zero when p == 1. */
lab01_cost lab01_ring_allreduce(int p, double bytes, lab01_link link);

/* The step of workload w on cluster c with layout l. CL_ERR_INVALID (with a
 * reason) when tp * pp * dp is not the cluster's GPU count, pp does not
 * divide the layers, or micro_batch * dp does not divide the global batch. */
cl_result lab01_estimate_step(const lab01_workload *w, const lab01_cluster *c,
                              const lab01_layout *l, lab01_estimate *out);

/* Your decision: the layout (powers of two, using every GPU of c) with the
 * shortest step whose model state fits in c->mem_bytes per GPU.
 * CL_ERR_INVALID when no layout fits. */
cl_result lab01_choose_layout(const lab01_workload *w, const lab01_cluster *c, lab01_layout *out);

#endif /* COMMLAB_LAB01_H */
