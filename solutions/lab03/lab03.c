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
    /* BEGIN SOLUTION */
    switch (kind) {
    case LAB03_UNI: return (double)bytes / seconds / 1e9;
    case LAB03_BIDIR: return 2.0 * (double)bytes / seconds / 1e9;
    case LAB03_LATENCY: return seconds / 2.0 * 1e6;
    }
    return NAN;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab03) 1: the figure of merit of one operation that took `seconds`.
    //   Bandwidths in GB/s (1e9 bytes per second); a bidirectional operation moves
    //   `bytes` each way; a latency operation is a round trip, and latency is one way, in us.
    (void)kind, (void)bytes, (void)seconds;
    return -1.0;
    END SKELETON */
}
/* BEGIN SOLUTION */

/* The median of n values (n <= LAB03_MAX_REPEATS); the array is sorted in place. */
static double median(double *v, int n)
{
    for (int a = 1; a < n; a++)
        for (int b = a; b > 0 && v[b - 1] > v[b]; b--) {
            double t = v[b];
            v[b] = v[b - 1];
            v[b - 1] = t;
        }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}
/* END SOLUTION */

cl_result lab03_measure(cl_comm *comm, lab03_kind kind, int i, int j, size_t bytes,
                        const lab03_method *m, double *value)
{
    /* BEGIN SOLUTION */
    int me = cl_comm_rank(comm);
    if (me != i && me != j)
        return CL_OK;
    if (m->repeats < 1 || m->repeats > LAB03_MAX_REPEATS || m->iters < 1 || m->warmup < 0) {
        cl_set_error("method: warmup %d, iters %d, repeats %d", m->warmup, m->iters, m->repeats);
        return CL_ERR_INVALID;
    }
    int k = 0;
    /* Warm-up: first-touch faults, cold caches and a peer not yet scheduled are
     * not the link; these operations are not timed. */
    for (; k < m->warmup; k++)
        CL_CHECK(lab03_op(comm, kind, i, j, bytes, k));
    double per_op[LAB03_MAX_REPEATS];
    for (int r = 0; r < m->repeats; r++) {
        double t0 = cl_comm_time(comm);
        for (int n = 0; n < m->iters; n++, k++)
            CL_CHECK(lab03_op(comm, kind, i, j, bytes, k));
        per_op[r] = (cl_comm_time(comm) - t0) / m->iters;
    }
    /* The median run: a run another process interrupted does not move it. */
    if (me == i)
        *value = lab03_metric(kind, bytes, median(per_op, m->repeats));
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab03) 2: the measurement of one pair, on ranks i and j (others return).
    //   m->warmup operations, then m->repeats runs of m->iters operations each, with
    //   k = 0, 1, 2, ... across all of them. Time each run on your rank's clock; on
    //   rank i, *value is the metric of the median run's time per operation.
    (void)comm, (void)kind, (void)i, (void)j, (void)bytes, (void)m, (void)value;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab03_matrix(cl_comm *comm, lab03_kind kind, size_t bytes, const lab03_method *m,
                       double *matrix)
{
    /* BEGIN SOLUTION */
    int n = cl_comm_size(comm), me = cl_comm_rank(comm);
    int symmetric = kind != LAB03_UNI;
    for (int i = 0; i < n; i++)
        for (int j = symmetric ? i + 1 : 0; j < n; j++) {
            if (i == j)
                continue;
            /* One pair at a time: two pairs measured together share the memory
             * system (or a PCIe switch) and each sees less than its link. */
            CL_CHECK(cl_barrier(comm));
            double v = NAN;
            CL_CHECK(lab03_measure(comm, kind, i, j, bytes, m, &v));
            if (me == i) {
                matrix[i * n + j] = v;
                if (symmetric)
                    matrix[j * n + i] = v;
            }
        }
    return cl_barrier(comm);
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab03) 3: the complete matrix.
    //   LAB03_UNI: every ordered pair (i, j), i != j. LAB03_BIDIR and LAB03_LATENCY:
    //   each pair i < j once, the value stored at [i][j] and [j][i]. Only one pair
    //   may be measured at a time, and only rank i writes the pair's entries.
    (void)comm, (void)kind, (void)bytes, (void)m, (void)matrix;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab03_infer(int n, const double *uni, const double *bidir, const double *lat_us,
                      size_t bytes, double link_gbps, int *link)
{
    /* BEGIN SOLUTION */
    (void)bidir;
    if (n < 1 || n > LAB03_MAX_RANKS || !(link_gbps > 0)) {
        cl_set_error("infer: %d GPUs, NVLink %g GB/s", n, link_gbps);
        return CL_ERR_INVALID;
    }
    /* A bandwidth measured with `bytes` still carries the start-up latency:
     * t = latency + bytes / bandwidth. Take the latency out before reading links. */
    double bw[LAB03_MAX_RANKS * LAB03_MAX_RANKS], lat_min = INFINITY, pci_max = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j) {
                double t = (double)bytes / (uni[i * n + j] * 1e9) - lat_us[i * n + j] * 1e-6;
                bw[i * n + j] = t > 0 ? (double)bytes / t / 1e9 : uni[i * n + j];
                lat_min = fmin(lat_min, lat_us[i * n + j]);
            }
    /* NVLink pairs answer sooner than PCIe ones and carry a whole number of links;
     * a PCIe or SMP path is no multiple of an NVLink. */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (i == j)
                continue;
            double links = bw[i * n + j] / link_gbps;
            int nv = lround(links) >= 1 && fabs(links - (double)lround(links)) < 0.15 &&
                     lat_us[i * n + j] < 1.1 * lat_min;
            link[i * n + j] = nv ? (int)lround(links) : LAB03_LINK_PCI;
            if (!nv)
                pci_max = fmax(pci_max, bw[i * n + j]);
        }
    /* Without NVLink, the pairs that cross the SMP interconnect are the slow
     * cluster: well below the fastest PCIe pair. */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j && link[i * n + j] == LAB03_LINK_PCI && bw[i * n + j] < 0.9 * pci_max)
                link[i * n + j] = LAB03_LINK_SYS;
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab03) 4: read the links from the matrices.
    //   For every pair i != j write the NVLink count, LAB03_LINK_PCI or LAB03_LINK_SYS.
    (void)n, (void)uni, (void)bidir, (void)lat_us, (void)bytes, (void)link_gbps, (void)link;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
