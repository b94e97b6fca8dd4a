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
    // TODO(lab03) 1: GB/s is 1e9 bytes per second. A bidirectional operation moves
    //   `bytes` each way; a latency operation is a round trip (one way is half).
    (void)kind, (void)bytes, (void)seconds;
    return -1.0;
}

cl_result lab03_measure(lab03_link *l, lab03_kind kind, int i, int j, size_t bytes,
                        const lab03_method *m, double *value)
{
    // TODO(lab03) 2: the measurement of one pair.
    //   1. m->warmup calls of lab03_op() that are not timed;
    //   2. m->repeats runs: read lab03_now(), m->iters calls of lab03_op(), read
    //      lab03_now() again; keep each run's time per operation;
    //   3. if lab03_times(l, i): *value = lab03_metric() of the MEDIAN run
    //      (cl_median() from common/stats.h).
    //   Every involved process runs the same loop (the peer must answer each op).
    (void)l, (void)kind, (void)i, (void)j, (void)bytes, (void)m, (void)value;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab03_matrix(lab03_link *l, lab03_kind kind, size_t bytes, const lab03_method *m,
                       double *matrix)
{
    // TODO(lab03) 3: the complete matrix.
    //   The diagonal is 0. LAB03_UNI: every ordered pair (i, j), i != j. LAB03_BIDIR and
    //   LAB03_LATENCY: each pair i < j once, the value stored at [i][j] and [j][i].
    //   Before each pair every process calls lab03_sync(); then the processes that
    //   lab03_involves() measure it with lab03_measure(), and the one that
    //   lab03_times(l, i) writes the entries. End with one more lab03_sync().
    (void)l, (void)kind, (void)bytes, (void)m, (void)matrix;
    return CL_ERR_NOT_IMPLEMENTED;
}
