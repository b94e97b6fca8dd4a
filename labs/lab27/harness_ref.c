/* harness_ref.c: lab 27's reference benchmark: nccl-tests' TimeTest and BenchTime (v2.17.1
 * src/common.cu) as the handout states them, run by the harness in the same run as the
 * student's. */
#include <string.h>

#include "lab27_harness.h"
#include "lab27_wire.h"

/* Seconds per call of iters calls after warmup untimed ones and a barrier; averaged over
 * the ranks (nccl-tests' -a 1). The timed calls go through the student's program, as the
 * student's own do (the lab's "ref_loop" entry); the harness times the entry on its own
 * clock and counts the calls it performed. */
static cl_result timed(cl_comm *c, cl_coll_kind kind, const void *send, void *recv, size_t count,
                       int warmup, int iters, double *us)
{
    for (int i = 0; i < warmup; i++)
        CL_CHECK(lab27_coll_op(c, kind, send, recv, count));
    lab27_loop_args a = {
        .kind = kind, .iters = iters, .sendbuf = send, .recvbuf = recv, .count = count};
    cl_call_result res;
    CL_CHECK(cl_barrier(c));
    uint64_t before = lab27_colls(c);
    CL_CHECK(cl_student_run(c, "ref_loop", &a, sizeof a, CL_ALLOW_LAB | CL_CALL_UNTRACED, &res));
    if (res.status != CL_OK || lab27_colls(c) - before != (uint64_t)iters) {
        cl_set_error("the reference's timed loop: %s (%llu calls of %d)",
                     res.status != CL_OK ? res.error : "calls missing",
                     (unsigned long long)(lab27_colls(c) - before), iters);
        return CL_ERR_MISMATCH;
    }
    /* picoseconds, whole numbers, for an exact sum over the ranks */
    double ps[1] = {res.seconds / iters * 1e12};
    CL_CHECK(cl_agree_sum(c, ps, 1));
    *us = ps[0] / 1e6 / cl_comm_size(c);
    return CL_OK;
}

static cl_result ref_bench(cl_comm *c, cl_coll_kind kind, size_t bytes, int warmup, int iters,
                           char *send, char *recv, lab27_ref_row *row)
{
    int p = cl_comm_size(c), r = cl_comm_rank(c);
    size_t count = bytes / sizeof(float), block;
    if (kind == CL_COLL_ALLGATHER)
        count = (count / (size_t)p) & ~(size_t)3; /* nccl-tests: a 16-byte multiple per rank */
    block = count;
    size_t total = kind == CL_COLL_ALLGATHER ? block * (size_t)p : count;
    row->count = block;
    row->sendcount = block;
    row->recvcount = total;
    row->size = total * sizeof(float);
    for (int ip = 0; ip < 2; ip++) {
        char *in = ip ? recv + (kind == CL_COLL_ALLGATHER ? (size_t)r * block * 4 : 0) : send;
        CL_CHECK(timed(c, kind, in, recv, total, warmup, iters, &row->us[ip]));
        /* the check: fresh inputs, one call, every element of every rank's output */
        CL_CHECK(lab27_fill_op(c, in, block, kind == CL_COLL_ALLGATHER ? (size_t)r * block : 0));
        CL_CHECK(lab27_coll_op(c, kind, in, recv, total));
        long long w = 0, x;
        if (kind == CL_COLL_ALLREDUCE)
            CL_CHECK(lab27_check_op(c, recv, total, 0, p, 0, &w));
        else
            for (int j = 0; j < p; j++) {
                CL_CHECK(lab27_check_op(c, recv + (size_t)j * block * 4, block, j, j + 1,
                                        (size_t)j * block, &x));
                w += x;
            }
        double v[1] = {(double)w};
        CL_CHECK(cl_agree_sum(c, v, 1));
        row->wrong[ip] = (long long)v[0];
        row->corrupted[ip] = lab27_corruption_of(kind, total, ip, p).k;
    }
    return CL_OK;
}

/* nccl-tests' warm-up (every size from the smallest, doubling), then each size measured. */
cl_result lab27_ref_sweep(cl_comm *c, const lab27_config *cfg, lab27_ref_row ref[][9], int k)
{
    int p = cl_comm_size(c);
    char *send = NULL, *recv = NULL;
    cl_result rc = CL_OK;
    CL_TRY(cl_mem_alloc(c, cfg->max_bytes, (void **)&send));
    CL_TRY(cl_mem_alloc(c, cfg->max_bytes, (void **)&recv));
    for (size_t w = cfg->min_bytes; w <= cfg->max_bytes; w *= 2) {
        size_t n = w / 4;
        if (cfg->kind == CL_COLL_ALLGATHER)
            n = ((n / (size_t)p) & ~(size_t)3) * (size_t)p;
        for (int j = 0; j < cfg->warmup && n; j++)
            CL_TRY(lab27_coll_op(c, cfg->kind, send, recv, n));
    }
    int i = 0;
    for (size_t b = cfg->min_bytes; b <= cfg->max_bytes; b *= (size_t)cfg->factor, i++)
        CL_TRY(ref_bench(c, cfg->kind, b, 1, cfg->iters, send, recv, &ref[i][k]));
done:
    if (send)
        cl_mem_free(c, send);
    if (recv)
        cl_mem_free(c, recv);
    return rc;
}
