/* harness_bench.c: lab 09's bench mode: rank 0 to rank 1 through the student's ring, in the
 * geometry the student chose, against MPI's send/receive and memcpy.
 */
#include <stdio.h>
#include <string.h>

#include "lab09_harness.h"

#define MAX_REPEATS 64
#define BUDGET      ((size_t)4 << 20) /* shared memory per ring: NCCL_BUFFSIZE's default */

/* The geometry: --nslots and --chunk, or the student's lab09_geometry(). */
static cl_result bench_geometry(cl_run *run, cl_comm *c, uint64_t *nslots, size_t *chunk)
{
    geometry_args g = {
        .budget = BUDGET, .nslots = opt_u64(run, "nslots", 0), .chunk = opt_u64(run, "chunk", 0)};
    int64_t v[2] = {0, 0};
    if (!g.nslots || !g.chunk) {
        cl_call_result res;
        CL_CHECK(cl_student_run(c, "geometry", &g, sizeof g, 0, &res));
        if (res.status != CL_OK) {
            cl_set_error("lab09_geometry: %s", res.error);
            return res.status;
        }
    }
    if (cl_comm_rank(c) == 0)
        v[0] = (int64_t)g.nslots, v[1] = (int64_t)g.chunk;
    CL_CHECK(cl_agree(c, CL_MAX, v, 2)); /* rank 0's answer */
    *nslots = (uint64_t)v[0], *chunk = (size_t)v[1];
    if (rings_check(*nslots, *chunk, BUDGET) != CL_OK) {
        char why[256];
        snprintf(why, sizeof why, "%s", cl_last_error());
        cl_set_error("lab09_geometry chose %s", why);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

/* One transfer of fresh bytes, timed by `how`: 0 the student's ring, 1 MPI's
 * send and receive, 2 memcpy on rank 0. *t: its time (max over the ranks);
 * *bad: wrong bytes at the receiver. */
static cl_result once(cl_run *run, cl_comm *c, int how, unsigned char *src, unsigned char *dst,
                      size_t n, double *t, int64_t *bad)
{
    int rank = cl_comm_rank(c);
    uint64_t seed;
    CL_CHECK(cl_fresh_seed(run, c, &seed));
    if (rank == 0)
        fill(src, n, seed, 0, 0);
    else
        fill(dst, n, seed, 1, 0); /* bytes that are not rank 0's */
    CL_CHECK(cl_barrier(c));
    *t = 0;
    if (how == 0) {
        transfer_args a = {.L = rings, .send = rank == 0, .buf = rank == 0 ? src : dst, .bytes = n};
        cl_call_result res;
        CL_CHECK(cl_student_run(c, "transfer", &a, sizeof a, 0, &res));
        if (res.status != CL_OK) {
            cl_set_error("your transfer on rank %d: %s", rank, res.error);
            return res.status;
        }
        *t = res.seconds;
    } else if (how == 1) {
        double t0 = cl_comm_time(c);
        CL_CHECK(rank == 0 ? cl_send(c, src, n, 1) : cl_recv(c, dst, n, 0));
        *t = cl_comm_time(c) - t0;
    } else if (rank == 0) {
        double t0 = cl_comm_time(c);
        memcpy(dst, src, n);
        __asm__ volatile("" ::"r"(dst) : "memory");
        *t = cl_comm_time(c) - t0;
    }
    if ((how < 2 && rank == 1) || (how == 2 && rank == 0))
        *bad += (int64_t)count_wrong(dst, n, seed, 0, 0);
    return cl_agree_max(c, t, 1);
}

cl_result bench_mode(cl_run *run, cl_comm *c)
{
    const cl_opts *o = cl_run_opts(run);
    size_t n = o->bytes, chunk = 0;
    uint64_t nslots = 0;
    int reps = o->repeats > MAX_REPEATS ? MAX_REPEATS : o->repeats;
    if (cl_comm_size(c) != 2 || n < 1) {
        cl_set_error("bench runs on 2 ranks with --bytes of 1 or more");
        return CL_ERR_INVALID;
    }
    CL_CHECK(bench_geometry(run, c, &nslots, &chunk));
    CL_CHECK(rings_open(c, 1, BUDGET, nslots, chunk, 0));
    unsigned char *src, *dst;
    CL_CHECK(cl_mem_alloc(c, n, (void **)&src));
    CL_CHECK(cl_mem_alloc(c, n, (void **)&dst));
    /* A sample of each method is the fastest of `iters` transfers (another
     * process can only slow one down), the three methods taking turns, so that
     * the samples of one round pair up: at least 4, and about 5 ms of each at 10 GB/s. */
    int iters = (int)(50e6 / (double)n);
    iters = iters < 4 ? 4 : iters > 1000 ? 1000 : iters;
    double gbps[3][MAX_REPEATS];
    int64_t bad = 0;
    for (int k = -1; k < reps; k++) { /* k = -1: a warm-up, checked, not kept */
        double best[3] = {1e300, 1e300, 1e300}, t;
        for (int i = 0; i < iters; i++)
            for (int j = 0; j < 3; j++) {
                int how = (j + i + 3) % 3;
                CL_CHECK(once(run, c, how, src, dst, n, &t, &bad));
                if (t < best[how])
                    best[how] = t;
            }
        for (int how = 0; k >= 0 && how < 3; how++)
            gbps[how][k] = (double)n / best[how] / 1e9;
    }
    CL_CHECK(cl_agree(c, CL_SUM, &bad, 1));
    cl_report_str(run, "units", "bytes, bandwidths in GB/s");
    cl_row *row = cl_row_begin(run, c);
    cl_col_int(row, "bytes", (long long)n);
    cl_col_int(row, "iters", iters);
    cl_col_int(row, "nslots", (long long)nslots);
    cl_col_int(row, "chunk", (long long)chunk);
    cl_col_nums(row, "ring_gbps", gbps[0], (size_t)reps, "%.2f");
    cl_col_nums(row, "mpi_gbps", gbps[1], (size_t)reps, "%.2f");
    cl_col_nums(row, "memcpy_gbps", gbps[2], (size_t)reps, "%.2f");
    cl_col_int(row, "corrupt_bytes", bad);
    cl_row_end(row);
    CL_CHECK(cl_mem_free(c, src));
    return cl_mem_free(c, dst);
}
