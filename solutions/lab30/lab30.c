/* lab30.c: the torus AllReduce, and the AllReduce algorithm of each fabric and size.
 *
 * You write two functions, in the order of the handout:
 *   1. lab30_torus_allreduce()  dimension-wise rings on the torus lab30_torus_dims() gives
 *   2. lab30_choose()           the algorithm of each (GPUs, bytes) point of a fabric
 * Only cl_sendrecv/cl_send/cl_recv, cl_reduce_local and cl_copy_local in 1;
 * lab30_probe_time() (lab30.h) in 2.
 */
#include <math.h>
#include <string.h>

#include "lab30.h"

/* BEGIN SOLUTION */
/* Block i of k blocks of len elements: the first len % k blocks have one more. */
static void block(size_t len, int k, int i, size_t *off, size_t *n)
{
    size_t base = len / (size_t)k, extra = len % (size_t)k, x = (size_t)i;
    *off = x * base + (x < extra ? x : extra);
    *n = base + (x < extra ? 1 : 0);
}
/* END SOLUTION */

cl_result lab30_torus_allreduce(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                                cl_dtype t, cl_op op, void *scratch)
{
    /* BEGIN SOLUTION */
    int p = cl_comm_size(comm), r = cl_comm_rank(comm), dims[LAB30_MAX_DIMS];
    int coord[LAB30_MAX_DIMS], stride[LAB30_MAX_DIMS];
    size_t es = cl_dtype_size(t), lo[LAB30_MAX_DIMS + 1], len[LAB30_MAX_DIMS + 1];
    char *out = recvbuf;
    lab30_torus_dims(p, LAB30_MAX_DIMS, dims);
    for (int d = 0, s = 1; d < LAB30_MAX_DIMS; s *= dims[d], d++)
        stride[d] = s, coord[d] = r / s % dims[d];
    CL_CHECK(cl_copy_local(comm, out, sendbuf, count * es));
    lo[0] = 0, len[0] = count;
    /* ReduceScatter along each dimension in turn: each ring narrows the segment a rank
     * owns to its block of it. */
    for (int d = 0; d < LAB30_MAX_DIMS; d++) {
        int k = dims[d], i = coord[d];
        int right = r + ((i + 1) % k - i) * stride[d], left = r + ((i - 1 + k) % k - i) * stride[d];
        for (int s = 0; s < k - 1; s++) {
            size_t so, sn, ro, rn;
            block(len[d], k, (i - s - 1 + 2 * k) % k, &so, &sn);
            block(len[d], k, (i - s - 2 + 2 * k) % k, &ro, &rn);
            CL_CHECK(
                cl_sendrecv(comm, out + (lo[d] + so) * es, sn * es, right, scratch, rn * es, left));
            CL_CHECK(cl_reduce_local(comm, out + (lo[d] + ro) * es, scratch, rn, t, op));
        }
        size_t o, n;
        block(len[d], k, i, &o, &n);
        lo[d + 1] = lo[d] + o, len[d + 1] = n;
    }
    /* AllGather back, the last dimension first: each ring widens the segment again. */
    for (int d = LAB30_MAX_DIMS - 1; d >= 0; d--) {
        int k = dims[d], i = coord[d];
        int right = r + ((i + 1) % k - i) * stride[d], left = r + ((i - 1 + k) % k - i) * stride[d];
        for (int s = 0; s < k - 1; s++) {
            size_t so, sn, ro, rn;
            block(len[d], k, (i - s + k) % k, &so, &sn);
            block(len[d], k, (i - s - 1 + k) % k, &ro, &rn);
            CL_CHECK(cl_sendrecv(comm, out + (lo[d] + so) * es, sn * es, right,
                                 out + (lo[d] + ro) * es, rn * es, left));
        }
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab30) 1: ReduceScatter rings along each dimension of the torus, then AllGather
    // rings back in the reverse order; every message to a neighbour.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* BEGIN SOLUTION */
/* A torus's two algorithms, by the handout's formulas. */
static double torus_model(const lab30_fabric *f, int algo, long p, double bytes)
{
    double B = f->link_gbps * 1e9, h = f->hop_us * 1e-6, t = f->launch_us * 1e-6;
    if (algo == LAB30_RING) /* one ring per link of a chip, each with its share */
        return t + 2.0 * (p - 1) * h + 2.0 * (p - 1) / p * bytes / (2.0 * f->ndims * B);
    int dims[LAB30_MAX_DIMS];
    lab30_torus_dims(p, f->ndims, dims);
    for (int d = 0; d < f->ndims; bytes /= dims[d], d++) /* both directions, half each */
        if (dims[d] > 1)
            t += 2.0 * (dims[d] - 1) * h + 2.0 * (dims[d] - 1) / dims[d] * bytes / (2.0 * B);
    return t;
}

/* How an algorithm's latency grows with the job on a switched fabric: rings (NCCL's ring:
 * a step per GPU), trees a level per doubling of the servers, and the switches' reduction
 * (NVLS with SHARP) the same few hops at any size. */
static double steps(int algo, long gpus, int per_node)
{
    double nodes = (double)gpus / per_node;
    switch (algo) {
    case LAB30_RING: return (double)gpus - 1;
    case LAB30_NVLS: return 0; /* reduced in the switches: the same tiers at any size */
    default: return log2(nodes);
    }
}

/* One algorithm on a switched fabric, from probes: its time at probe_max_gpus GPUs at the
 * probed message sizes, and how much each step of latency (above) adds beyond that job. */
#define NSIZES 5
static const double SIZES[NSIZES] = {65536, 16777216, 134217728, 536870912, 1073741824};

typedef struct fit {
    double t[NSIZES]; /* at SIZES[0 .. n-1], or only the first and last when n == 2 */
    double size[NSIZES];
    double per_step;
    int n, ok;
} fit;

static fit fit_algo(cl_comm *comm, const lab30_fabric *f, int algo)
{
    long p1 = f->probe_max_gpus, p0 = p1 / 8;
    fit x = {0};
    /* NCCL's ring (its latency alone rules it out at scale) and the switches' reduction (its
     * time is latency plus bytes at one rate) need two sizes; the trees change protocol
     * with the size, so they get every size. */
    int full = algo == LAB30_TREE || algo == LAB30_NVLS_TREE;
    for (int i = 0; i < NSIZES; i++) {
        if (!full && i > 0 && i < NSIZES - 1)
            continue;
        x.size[x.n] = SIZES[i];
        if (lab30_probe_time(comm, algo, p1, SIZES[i], &x.t[x.n]) != CL_OK)
            goto refused;
        x.n++;
    }
    double s0 = steps(algo, p0, f->gpus_per_node), s1 = steps(algo, p1, f->gpus_per_node), t0;
    if (s1 > s0) {
        if (lab30_probe_time(comm, algo, p0, SIZES[0], &t0) != CL_OK)
            goto refused;
        x.per_step = (x.t[0] - t0) / (s1 - s0);
    }
    x.ok = 1;
    return x;
refused:
    cl_clear_error();
    x.ok = 0;
    return x;
}

/* The fit's time of `bytes` on gpus GPUs: the probed curve, linear between probed sizes
 * (and beyond the last), shifted by the latency of the extra steps. */
static double fit_time(const fit *x, int algo, const lab30_fabric *f, long gpus, double bytes)
{
    double t = x->t[0];
    for (int i = 1; i < x->n; i++)
        if (bytes > x->size[i - 1] && (bytes <= x->size[i] || i == x->n - 1))
            t = x->t[i - 1] +
                (x->t[i] - x->t[i - 1]) / (x->size[i] - x->size[i - 1]) * (bytes - x->size[i - 1]);
    return t + x->per_step * (steps(algo, gpus, f->gpus_per_node) -
                              steps(algo, f->probe_max_gpus, f->gpus_per_node));
}
/* END SOLUTION */

cl_result lab30_choose(cl_comm *comm, const lab30_fabric *f, int n, const lab30_point *pts,
                       int *algo)
{
    /* BEGIN SOLUTION */
    fit fits[LAB30_NALGOS];
    memset(fits, 0, sizeof fits);
    if (f->kind == LAB30_SWITCHED)
        for (int k = 0; k < LAB30_NALGOS; k++)
            if (f->algos & (1 << k))
                fits[k] = fit_algo(comm, f, k);
    for (int i = 0; i < n; i++) {
        double best = INFINITY;
        algo[i] = -1;
        for (int k = 0; k < LAB30_NALGOS; k++) {
            if (!(f->algos & (1 << k)))
                continue;
            double t;
            if (f->kind == LAB30_TORUS_FABRIC)
                t = torus_model(f, k, pts[i].gpus, pts[i].bytes);
            else if (fits[k].ok)
                t = fit_time(&fits[k], k, f, pts[i].gpus, pts[i].bytes);
            else
                continue;
            if (t < best)
                best = t, algo[i] = k;
        }
        if (algo[i] < 0)
            return CL_ERR_INVALID;
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab30) 2: a cost model of every algorithm of the fabric (the handout's formulas
    // for a torus; probes of small jobs for a switched fabric), and the cheapest at each point.
    (void)comm, (void)f, (void)n, (void)pts, (void)algo;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
