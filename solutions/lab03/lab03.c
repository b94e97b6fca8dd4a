/* lab03.c: lab 03, the bandwidth and latency matrix.
 *
 * You write how to measure: warm-up, timed repeats, the median, bandwidth or
 * latency from a time, and the complete matrix over every pair, in the manner
 * of CUDA's p2pBandwidthLatencyTest and nvbandwidth. Read
 * labs/lab03/README.md first; the TODOs below are in the order of its
 * sections. Build with `make lab03`, grade with `./grade lab03`.
 */
#include <math.h>

#include "lab03.h"

double lab03_metric(lab03_kind kind, size_t bytes, double seconds)
{
    /* BEGIN SOLUTION */
    switch (kind) {
    case LAB03_UNI: return (double)bytes / seconds / 1e9;
    case LAB03_BIDIR: return 2.0 * (double)bytes / seconds / 1e9;
    case LAB03_LATENCY: return seconds / 2.0 * 1e6;
    }
    return NAN;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab03) 1: GB/s is 1e9 bytes per second. A bidirectional operation moves
    //   `bytes` each way; a latency operation is a round trip (one way is half).
    (void)kind, (void)bytes, (void)seconds;
    return -1.0;
    END SKELETON */
}

cl_result lab03_measure(lab03_link *l, lab03_kind kind, int i, int j, size_t bytes,
                        const lab03_method *m, double *value)
{
    /* BEGIN SOLUTION */
    double per_op[LAB03_MAX_REPEATS];
    if (m->repeats < 1 || m->repeats > LAB03_MAX_REPEATS || m->iters < 1 || m->warmup < 0)
        return CL_ERR_INVALID;
    /* Warm-up: caches, page tables and the peer's wake-up are not what we measure. */
    for (int k = 0; k < m->warmup; k++)
        CL_CHECK(lab03_op(l, kind, i, j, bytes));
    for (int r = 0; r < m->repeats; r++) {
        double t0 = lab03_now(l);
        for (int k = 0; k < m->iters; k++)
            CL_CHECK(lab03_op(l, kind, i, j, bytes));
        per_op[r] = (lab03_now(l) - t0) / m->iters;
    }
    /* The median ignores the odd run that another process interrupted. */
    if (lab03_times(l, i))
        *value = lab03_metric(kind, bytes, cl_median(per_op, (size_t)m->repeats));
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab03) 2: the measurement of one pair.
    //   1. m->warmup calls of lab03_op() that are not timed;
    //   2. m->repeats runs: read lab03_now(), m->iters calls of lab03_op(), read
    //      lab03_now() again; keep each run's time per operation;
    //   3. if lab03_times(l, i): *value = lab03_metric() of the MEDIAN run
    //      (cl_median() from common/stats.h).
    //   Every involved process runs the same loop (the peer must answer each op).
    (void)l, (void)kind, (void)i, (void)j, (void)bytes, (void)m, (void)value;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab03_matrix(lab03_link *l, lab03_kind kind, size_t bytes, const lab03_method *m,
                       double *matrix)
{
    /* BEGIN SOLUTION */
    int n = lab03_size(l);
    int symmetric = kind != LAB03_UNI;
    for (int i = 0; i < n; i++)
        matrix[i * n + i] = 0.0; /* no self-copy: nvbandwidth prints N/A there */
    for (int i = 0; i < n; i++)
        for (int j = symmetric ? i + 1 : 0; j < n; j++) {
            if (i == j)
                continue;
            /* One pair at a time: pairs measured together would share the memory bus. */
            CL_CHECK(lab03_sync(l));
            if (!lab03_involves(l, i, j))
                continue;
            double v = NAN;
            CL_CHECK(lab03_measure(l, kind, i, j, bytes, m, &v));
            if (lab03_times(l, i)) {
                matrix[i * n + j] = v;
                if (symmetric)
                    matrix[j * n + i] = v;
            }
        }
    return lab03_sync(l);
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab03) 3: the complete matrix.
    //   The diagonal is 0. LAB03_UNI: every ordered pair (i, j), i != j. LAB03_BIDIR and
    //   LAB03_LATENCY: each pair i < j once, the value stored at [i][j] and [j][i].
    //   Before each pair every process calls lab03_sync(); then the processes that
    //   lab03_involves() measure it with lab03_measure(), and the one that
    //   lab03_times(l, i) writes the entries. End with one more lab03_sync().
    (void)l, (void)kind, (void)bytes, (void)m, (void)matrix;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
