/* lab03.h: types and functions of lab 03 (the bandwidth and latency matrix).
 *
 * Like CUDA's p2pBandwidthLatencyTest and NVIDIA's nvbandwidth, you measure
 * every pair of ranks (MPI processes on "cpu", GPUs on "gpu", simulated GPUs
 * of a recorded server on "sim"). The lab gives you one operation,
 * lab03_op() (xfer.c): one transfer of `kind` between ranks i and j, on
 * buffers the harness fills with fresh data for every operation and checks
 * afterwards. You write the methodology: the metric, warm-up, timed runs, the
 * median, the complete matrix, and what the matrices say about the machine.
 */
#ifndef COMMLAB_LAB03_H
#define COMMLAB_LAB03_H

#include <stddef.h>

#include "commlab.h"

typedef enum lab03_kind {
    LAB03_UNI = 0,     /* i sends `bytes` to j: bandwidth i -> j (GB/s) */
    LAB03_BIDIR = 1,   /* i -> j and j -> i at once: bandwidth of both together (GB/s) */
    LAB03_LATENCY = 2, /* i sends `bytes` to j, j sends them back: one-way latency (us) */
} lab03_kind;

/* How to time one pair: `warmup` operations first, then `repeats` timed runs
 * of `iters` operations each. Operations are numbered 0, 1, 2, ... in that
 * order: warm-up 0..warmup-1, run r is warmup + r*iters .. warmup + (r+1)*iters - 1. */
typedef struct lab03_method {
    int warmup;
    int iters;
    int repeats; /* 1..LAB03_MAX_REPEATS */
} lab03_method;

#define LAB03_MAX_REPEATS 64
#define LAB03_MAX_RANKS   16

/* What lab03_infer() says about a pair of GPUs. */
enum {
    LAB03_LINK_SYS = -1, /* PCIe through the SMP interconnect between CPU sockets */
    LAB03_LINK_PCI = 0,  /* PCIe inside one CPU socket (PIX, PXB, PHB or NODE) */
    /* k >= 1: k NVLinks joining the two GPUs (NV<k>) */
};

/* --- given (xfer.c) -------------------------------------------------------------------- */

/* Operation number k of the pair (i, j), complete when it returns. Ranks i and
 * j both call it with the same arguments, k = 0, 1, 2, ... in order; the
 * other ranks must not. The harness gives both ranks fresh data for every
 * operation and checks what arrived. */
cl_result lab03_op(cl_comm *comm, lab03_kind kind, int i, int j, size_t bytes, int k);

/* --- written by the student in lab03.c, in the order of the handout --- */

/* The figure of merit of an operation that took `seconds` on average:
 * LAB03_UNI bytes / s, LAB03_BIDIR 2 bytes / s (both in GB/s, 1e9 B/s),
 * LAB03_LATENCY half the round trip in microseconds. This function can't fail. */
double lab03_metric(lab03_kind kind, size_t bytes, double seconds);

/* Measure kind between ranks i and j: m->warmup operations, then m->repeats
 * timed runs of m->iters operations each (lab03_op, k counting up from 0).
 * On rank i store the metric of the median run in *value (the others leave it
 * alone). Ranks other than i and j return at once. */
cl_result lab03_measure(cl_comm *comm, lab03_kind kind, int i, int j, size_t bytes,
                        const lab03_method *m, double *value);

/* The complete n x n matrix of kind, n = cl_comm_size(comm), row-major. LAB03_UNI:
 * every ordered pair i != j. LAB03_BIDIR and LAB03_LATENCY: each pair i < j
 * once, its value stored at [i][j] and [j][i]. Rank i writes the entries of
 * the pairs it timed and no other (the harness merges the ranks' matrices);
 * the diagonal is not read. One pair at a time. */
cl_result lab03_matrix(cl_comm *comm, lab03_kind kind, size_t bytes, const lab03_method *m,
                       double *matrix);

/* What links join the n GPUs of a server, from its three matrices measured
 * with your lab03_matrix: uni and bidir (GB/s) at `bytes`, lat_us (us) with
 * small messages. link_gbps is the bandwidth of one NVLink of these GPUs in
 * one direction (GB/s, NCCL's figure). Writes link[i * n + j] for i != j:
 * LAB03_LINK_SYS, LAB03_LINK_PCI or the NVLink count. */
cl_result lab03_infer(int n, const double *uni, const double *bidir, const double *lat_us,
                      size_t bytes, double link_gbps, int *link);

#endif /* COMMLAB_LAB03_H */
