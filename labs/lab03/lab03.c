/* lab03.c: lab 03, the bandwidth and latency matrix.
 *
 * You write how to measure: bandwidth or latency from a time, warm-up, timed
 * runs and their median, the complete matrix over every pair, in the manner
 * of CUDA's p2pBandwidthLatencyTest and nvbandwidth; then you read a server's
 * links from its matrices. Read labs/lab03/README.md first; the TODOs below
 * are in the order of its sections. Build with `make lab03`, grade with
 * `./grade lab03`.
 */
#include <math.h>
#include <string.h>

#include "lab03.h"

double lab03_metric(lab03_kind kind, size_t bytes, double seconds)
{
    // TODO(lab03) 1: the figure of merit of one operation that took `seconds`.
    //   Bandwidths in GB/s (1e9 bytes per second); a bidirectional operation moves
    //   `bytes` each way; a latency operation is a round trip, and latency is one way, in us.
    (void)kind, (void)bytes, (void)seconds;
    return -1.0;
}

cl_result lab03_measure(cl_comm *comm, lab03_kind kind, int i, int j, size_t bytes,
                        const lab03_method *m, double *value)
{
    // TODO(lab03) 2: the measurement of one pair, on ranks i and j (others return).
    //   m->warmup operations, then m->repeats runs of m->iters operations each, with
    //   k = 0, 1, 2, ... across all of them. Time each run on your rank's clock; on
    //   rank i, *value is the metric of the median run's time per operation.
    (void)comm, (void)kind, (void)i, (void)j, (void)bytes, (void)m, (void)value;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab03_matrix(cl_comm *comm, lab03_kind kind, size_t bytes, const lab03_method *m,
                       double *matrix)
{
    // TODO(lab03) 3: the complete matrix.
    //   LAB03_UNI: every ordered pair (i, j), i != j. LAB03_BIDIR and LAB03_LATENCY:
    //   each pair i < j once, the value stored at [i][j] and [j][i]. Only one pair
    //   may be measured at a time, and only rank i writes the pair's entries.
    (void)comm, (void)kind, (void)bytes, (void)m, (void)matrix;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab03_infer(int n, const double *uni, const double *bidir, const double *lat_us,
                      size_t bytes, double link_gbps, int *link)
{
    // TODO(lab03) 4: read the links from the matrices.
    //   For every pair i != j write the NVLink count, LAB03_LINK_PCI or LAB03_LINK_SYS.
    (void)n, (void)uni, (void)bidir, (void)lat_us, (void)bytes, (void)link_gbps, (void)link;
    return CL_ERR_NOT_IMPLEMENTED;
}
