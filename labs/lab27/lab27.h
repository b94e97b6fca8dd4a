/* lab27.h: types and functions of lab 27 (a benchmark harness in the manner of nccl-tests).
 * The driver (driver.c) calls the functions you write in lab27.c; lab27_ops.c gives you
 * the collective under test and the data checks (the harness performs them). */
#ifndef COMMLAB_LAB27_H
#define COMMLAB_LAB27_H

#include "coll.h"
#include "commlab.h"

/* The collectives this harness benchmarks: kind is CL_COLL_ALLREDUCE or CL_COLL_ALLGATHER
 * (coll.h). */

/* --- given (lab27_ops.c): every call goes to the harness, which performs it --- */

/* The collective under test, as the library runs it (MPI on cpu, NCCL on gpu, NCCL's
 * algorithm simulated on sim), on float elements, sum for AllReduce. count is the total:
 * AllReduce: sendbuf and recvbuf hold count elements; AllGather: sendbuf holds
 * count / nranks elements (this rank's block), recvbuf count. In place: AllReduce with
 * sendbuf == recvbuf, AllGather with sendbuf == recvbuf + rank * (count / nranks). */
cl_result lab27_coll(cl_comm *c, cl_coll_kind kind, const void *sendbuf, void *recvbuf,
                     size_t count);

/* Fill count floats of buf with this rank's fresh inputs, element k being the input of
 * global index first + k. Every call draws new data (on every rank alike, when every
 * rank fills once per check). */
cl_result lab27_fill(cl_comm *c, void *buf, size_t count, size_t first);

/* *wrong = elements of buf[0..count) that differ from the sum, over ranks lo..hi-1, of
 * their inputs of the latest fill at global indices first, first + 1, ...
 * (one rank's own block: lo = that rank, hi = lo + 1). */
cl_result lab27_check(cl_comm *c, const void *buf, size_t count, int lo, int hi, size_t first,
                      long long *wrong);

/* --- written by the student in lab27.c, in the order of the handout --- */

/* The counts of one row, as nccl-tests' getCollByteCount and getBw define them. */
typedef struct lab27_sizes {
    size_t count;      /* the "count" column: the count argument (AllGather: per rank) */
    size_t sendcount;  /* elements of sendbuf */
    size_t recvcount;  /* elements of recvbuf */
    size_t size_bytes; /* the "size" column: max(send, recv) bytes */
    double bw_bytes;   /* the bytes algbw divides by the time */
    double bus_factor; /* busbw = algbw * bus_factor */
} lab27_sizes;
void lab27_sizes_of(cl_coll_kind kind, size_t bytes, int nranks, lab27_sizes *s);

/* One measurement: out-of-place ([0]) and in-place ([1]). */
typedef struct lab27_result {
    lab27_sizes s;
    double time_us[2];         /* per call, averaged over the ranks */
    double algbw[2], busbw[2]; /* GB/s (1e9 bytes per second) */
    long long wrong[2];        /* wrong elements, summed over the ranks */
} lab27_result;

/* Time and check one collective at one size (bytes), on buffers sendbuf and recvbuf of
 * at least the row's send and receive counts: warmup untimed calls, then iters timed
 * calls, then one checked call, out-of-place then in-place. Every rank calls it. */
cl_result lab27_bench(cl_comm *c, cl_coll_kind kind, size_t bytes, int warmup, int iters,
                      void *sendbuf, void *recvbuf, lab27_result *r);

/* The benchmark's parameters, as nccl-tests' command line gives them. */
typedef struct lab27_config {
    cl_coll_kind kind;
    size_t min_bytes, max_bytes;
    int factor; /* sizes min, min * factor, ... <= max */
    int warmup, iters;
} lab27_config;

/* The whole run: every size, every rank; rank 0 writes nccl-tests' report into
 * text[0..cap) (NUL-terminated; other ranks leave it empty). */
cl_result lab27_sweep(cl_comm *c, const lab27_config *cfg, char *text, size_t cap);

/* The record of one change: paired samples (before[i] and after[i] measured back to
 * back, the same quantity, higher is better, e.g. busbw). */
typedef struct lab27_effect {
    double median_before, median_after;
    double effect; /* the median of the ratios after[i] / before[i] */
    double lo, hi; /* the spread: the smallest and largest ratio */
    int verdict;   /* +1 the change helps, -1 it hurts, 0 these samples cannot tell */
} lab27_effect;
cl_result lab27_compare(const double *before, const double *after, int n, lab27_effect *e);

#endif /* COMMLAB_LAB27_H */
