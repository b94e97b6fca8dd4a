/* lab30.h: types and functions of lab 30 (the future: torus fabrics, in-network reduction,
 * AllReduce at 1K to 32K GPUs). The harness (driver.c) calls the functions you write in
 * lab30.c; probe.c gives you lab30_probe_time(), the simulator's time of one AllReduce. */
#ifndef COMMLAB_LAB30_H
#define COMMLAB_LAB30_H

#include "commlab.h"

#define LAB30_MAX_DIMS   3
#define LAB30_MAX_POINTS 32

/* The AllReduce algorithms of the lab. On a switched fabric: NCCL's ring, double binary
 * tree, NVLS-Tree (NVLink SHARP in every server, trees between servers) and NVLS across
 * servers (the reduction done by the InfiniBand switches too: SHARP). On a torus: one
 * bidirectional ring through every chip, or the dimension-wise rings you write. */
typedef enum lab30_algo {
    LAB30_RING,
    LAB30_TREE,
    LAB30_NVLS_TREE,
    LAB30_NVLS,
    LAB30_TORUS,
    LAB30_NALGOS
} lab30_algo;

enum { LAB30_SWITCHED, LAB30_TORUS_FABRIC };

/* One fabric (handout, "四种网络"). */
typedef struct lab30_fabric {
    char name[32];
    int kind;  /* LAB30_SWITCHED or LAB30_TORUS_FABRIC */
    int algos; /* the algorithms that run on it: bit (1 << lab30_algo) */
    /* switched: servers of gpus_per_node GPUs on an NVSwitch, one NIC per GPU */
    int gpus_per_node;
    double nvlink_gbps; /* one GPU's NVSwitch port, GB/s per direction */
    double nic_gbps;    /* one NIC, GB/s per direction */
    int sharp;          /* in-network reduction in the fabric's switches */
    /* torus: chips joined to their 2 * ndims neighbours */
    int ndims;
    double link_gbps;   /* one link, GB/s per direction */
    double hop_us;      /* latency of one step over one link */
    double launch_us;   /* fixed cost of one call */
    int probe_max_gpus; /* the largest job lab30_probe_time() simulates */
    int budget;         /* calls of lab30_probe_time() per case */
} lab30_fabric;

/* One AllReduce: gpus GPUs, bytes per GPU (nccl-tests' size). */
typedef struct lab30_point {
    long gpus;
    double bytes;
} lab30_point;

/* The torus of n chips in ndims dimensions (as balanced as n allows, largest first):
 * chip r has coordinates c[0] = r % dims[0], c[1] = r / dims[0] % dims[1], ... */
static inline void lab30_torus_dims(long n, int ndims, int *dims)
{
    long prime[64];
    int np = 0;
    long f = n;
    for (long q = 2; q * q <= f; q++) /* prime factors, smallest first */
        while (f % q == 0 && np < 63) {
            prime[np++] = q;
            f /= q;
        }
    if (f > 1)
        prime[np++] = f;
    for (int d = 0; d < ndims; d++)
        dims[d] = 1;
    for (int i = np - 1; i >= 0; i--) { /* largest factor first, into the smallest dim */
        int small = 0;
        for (int d = 1; d < ndims; d++)
            if (dims[d] < dims[small])
                small = d;
        dims[small] *= (int)prime[i];
    }
    for (int a = 0; a < ndims; a++) /* largest first */
        for (int b = a + 1; b < ndims; b++)
            if (dims[b] > dims[a]) {
                int t = dims[a];
                dims[a] = dims[b], dims[b] = t;
            }
}

/* --- given (probe.c) --------------------------------------------------------------------- */

/* The simulated time (seconds) of one AllReduce of `bytes` on `gpus` GPUs of this case's
 * fabric with algorithm algo; gpus at most fabric->probe_max_gpus. Each call counts against
 * the case's budget. CL_ERR_INVALID (with the reason) otherwise. */
cl_result lab30_probe_time(cl_comm *comm, int algo, long gpus, double bytes, double *time_s);

/* --- written by the student in lab30.c, in the order of the handout ------------------------ */

/* AllReduce of count elements over the ranks of comm arranged as the torus
 * lab30_torus_dims(size, 3, dims): dimension-wise rings, every message to a torus
 * neighbour. recvbuf gets the reduction; scratch holds at least count elements. */
cl_result lab30_torus_allreduce(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                                cl_dtype t, cl_op op, void *scratch);

/* The algorithm of each of the n points on fabric f (one of f->algos), into algo[i]. */
cl_result lab30_choose(cl_comm *comm, const lab30_fabric *f, int n, const lab30_point *pts,
                       int *algo);

#endif /* COMMLAB_LAB30_H */
