/* lab01.h: types and functions of lab 01 (the alpha-beta cost model).
 * The driver (driver.c) calls the functions you write in lab01.c. */
#ifndef COMMLAB_LAB01_H
#define COMMLAB_LAB01_H

#include "commlab.h"

/* One kind of link in the alpha-beta model: t(n) = alpha + n / bandwidth. */
typedef struct lab01_link {
    double alpha_s;       /* start-up latency, seconds */
    double bandwidth_Bps; /* bytes per second */
} lab01_link;

/* The training job: a transformer trained with TP x PP x DP parallelism. */
typedef struct lab01_workload {
    double params;            /* parameters of the whole model */
    double bytes_per_element; /* 2 for bf16/fp16 gradients and activations */
    int layers;               /* transformer layers of the whole model */
    int hidden;               /* hidden size h */
    int seq_len;              /* sequence length s */
    int micro_batch;          /* micro-batch size b */
    int micro_batches;        /* micro-batches per step m */
    double compute_s;         /* computation time of one step, seconds */
} lab01_workload;

/* The cluster: identical nodes, one link kind inside a node, one between. */
typedef struct lab01_cluster {
    int nodes;
    int gpus_per_node;
    lab01_link intra; /* NVLink/PCIe inside a node */
    lab01_link inter; /* IB/RoCE between nodes, per GPU */
} lab01_cluster;

/* Parallel layout. Global rank r = t + tp * (d + dp * p) for TP index t,
 * DP index d, PP stage p; rank r sits on node r / gpus_per_node. */
typedef struct lab01_layout {
    int tp, pp, dp;
} lab01_layout;

/* Communication time of one training step, per kind, and its share. */
typedef struct lab01_estimate {
    double tp_s;    /* tensor-parallel AllReduces of activations */
    double dp_s;    /* the data-parallel AllReduce of gradients */
    double pp_s;    /* pipeline send/recv of activations and their gradients */
    double comm_s;  /* tp_s + dp_s + pp_s (no overlap) */
    double share;   /* comm_s / (compute_s + comm_s) */
} lab01_estimate;

/* --- written by the student in lab01.c, in the order of the handout --- */

/* Ping-pong `iters` round trips of `bytes` between ranks 0 and 1 (other
 * ranks return at once). On ranks 0 and 1 store the mean one-way time of a
 * message in *one_way_s. buf holds at least `bytes` bytes from cl_mem_alloc. */
cl_result lab01_pingpong(cl_comm *comm, void *buf, size_t bytes, int iters, double *one_way_s);

/* Least-squares fit of t = alpha + beta * n to n points (bytes[i], seconds[i]).
 * beta is seconds per byte. CL_ERR_INVALID when n < 2 or all sizes are equal. */
cl_result lab01_fit_alpha_beta(const double *bytes, const double *seconds, int n, double *alpha_s,
                               double *beta_s_per_byte);

/* Time of a ring AllReduce of `bytes` over p ranks on link: zero when p == 1. */
double lab01_ring_allreduce_time(int p, double bytes, lab01_link link);

/* Per-step communication estimate of workload w on cluster c with layout l.
 * CL_ERR_INVALID when tp * pp * dp != nodes * gpus_per_node. */
cl_result lab01_estimate_step(const lab01_workload *w, const lab01_cluster *c,
                              const lab01_layout *l, lab01_estimate *out);

#endif /* COMMLAB_LAB01_H */
