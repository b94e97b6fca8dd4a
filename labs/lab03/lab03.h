/* lab03.h: types and functions of lab 03 (the bandwidth and latency matrix).
 *
 * Like CUDA's p2pBandwidthLatencyTest and nvbandwidth, you measure every pair
 * of endpoints: on cpu, MPI processes that copy into each other's window of
 * POSIX shared memory and hand over with flags; on gpu, the GPUs of one
 * process with cudaMemcpyPeerAsync. The driver (driver.c, link.c) provides
 * the transfers; you write the methodology: warm-up, timed repeats, the
 * median, the metric, and the complete matrix.
 */
#ifndef COMMLAB_LAB03_H
#define COMMLAB_LAB03_H

#include <stdbool.h>
#include <stddef.h>

#include "commlab.h"

typedef enum lab03_kind {
    LAB03_UNI = 0,     /* i copies `bytes` to j: bandwidth i -> j (GB/s) */
    LAB03_BIDIR = 1,   /* i -> j and j -> i at once: bandwidth of both together (GB/s) */
    LAB03_LATENCY = 2, /* a small message i -> j and back: one-way latency (us) */
} lab03_kind;

/* How to time one pair: `warmup` untimed operations, then `repeats` timed
 * runs of `iters` operations each. */
typedef struct lab03_method {
    int warmup;
    int iters;
    int repeats; /* <= LAB03_MAX_REPEATS */
} lab03_method;

#define LAB03_MAX_REPEATS 64

typedef struct lab03_link lab03_link; /* the driver's transport; opaque */

/* --- provided by the driver (link.c) --- */

/* Endpoints in the matrix: MPI ranks (cpu) or GPUs (gpu). This function can't fail. */
int lab03_size(const lab03_link *l);

/* Whether this process takes part in operations between i and j (cpu: it is
 * rank i or rank j; gpu: always). This function can't fail. */
bool lab03_involves(const lab03_link *l, int i, int j);

/* Whether this process times operations whose first endpoint is i (cpu: it is
 * rank i; gpu: always). This function can't fail. */
bool lab03_times(const lab03_link *l, int i);

/* Every process waits here until all have arrived (cpu: a barrier; gpu: all
 * devices idle). Call it before measuring each pair, on every process: it
 * also closes the driver's record of the previous pair. */
cl_result lab03_sync(lab03_link *l);

/* One operation of `kind` between i and j, complete when it returns; every
 * process for which lab03_involves(l, i, j) is true must make the same calls.
 * LAB03_UNI copies i -> j, LAB03_BIDIR copies both ways at once, and
 * LAB03_LATENCY sends `bytes` i -> j and back. Data is verified by the driver. */
cl_result lab03_op(lab03_link *l, lab03_kind kind, int i, int j, size_t bytes);

/* The clock (seconds), for the timing process: read it only through this
 * function. This function can't fail. */
double lab03_now(lab03_link *l);

/* --- written by the student in lab03.c, in the order of the handout --- */

/* The figure of merit of an operation that took `seconds` on average:
 * LAB03_UNI bytes / s, LAB03_BIDIR 2 bytes / s (both in GB/s, 1e9 B/s),
 * LAB03_LATENCY half the round trip in microseconds. This function can't fail. */
double lab03_metric(lab03_kind kind, size_t bytes, double seconds);

/* Measure kind between i and j: m->warmup operations untimed, then m->repeats
 * timed runs of m->iters operations; on the timing process store the metric
 * of the median run in *value (others leave it alone). */
cl_result lab03_measure(lab03_link *l, lab03_kind kind, int i, int j, size_t bytes,
                        const lab03_method *m, double *value);

/* The complete n x n matrix of kind (row-major, n = lab03_size(l)). The
 * diagonal is 0. LAB03_UNI measures every ordered pair; LAB03_BIDIR and
 * LAB03_LATENCY measure each pair i < j once and store the value at [i][j] and
 * [j][i]. Each process writes only the entries it timed; the driver merges them. */
cl_result lab03_matrix(lab03_link *l, lab03_kind kind, size_t bytes, const lab03_method *m,
                       double *matrix);

#endif /* COMMLAB_LAB03_H */
