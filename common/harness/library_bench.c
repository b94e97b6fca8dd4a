/* library_bench.c: the library's collectives timed (and checked) for the labs' baselines. */
#include "run.h"

/* iters calls of the library's collective after a barrier of all, timed on c's clock:
 * *seconds is one call's time on the slowest rank of all. */
static cl_result timed_calls(cl_comm *c, cl_comm *all, cl_coll_kind kind, const cl_coll_args *a,
                             int iters, double *seconds)
{
    CL_CHECK(cl_barrier(all));
    double t0 = cl_comm_time(c);
    for (int i = 0; i < iters; i++)
        CL_CHECK(cl_library_coll(c, kind, a));
    *seconds = (cl_comm_time(c) - t0) / iters;
    return cl_agree_max(all, seconds, 1);
}

cl_result cl_library_coll_timed(cl_comm *c, cl_coll_kind kind, const cl_coll_args *a,
                                double *seconds)
{
    return timed_calls(c, c, kind, a, 1, seconds);
}

/* Wrong elements of the output of a call on inputs of seed (see cl_library_coll_busbw). */
static cl_result count_wrong(cl_comm *c, cl_coll_kind kind, const float *recv, size_t count,
                             uint64_t seed, size_t *wrong)
{
    int p = cl_comm_size(c);
    if (kind == CL_COLL_ALLREDUCE)
        return cl_count_wrong(c, recv, count, CL_FLOAT32, CL_SUM, seed, 0, p, 0, wrong);
    size_t block = count / (size_t)p, w;
    *wrong = 0;
    for (int i = 0; i < p; i++) {
        CL_CHECK(cl_count_wrong(c, recv + (size_t)i * block, block, CL_FLOAT32, CL_SUM, seed, i,
                                i + 1, (size_t)i * block, &w));
        *wrong += w;
    }
    return CL_OK;
}

cl_result cl_library_coll_busbw(cl_run *run, cl_comm *c, cl_comm *all, cl_coll_kind kind,
                                size_t count, double *busbw, int *repeats, double *wrong)
{
    if (kind != CL_COLL_ALLREDUCE && kind != CL_COLL_ALLGATHER) {
        cl_set_error("cl_library_coll_busbw: AllReduce or AllGather, not %s", cl_coll_name(kind));
        return CL_ERR_INVALID;
    }
    const cl_opts *o = cl_run_opts(run);
    int p = cl_comm_size(c), me = cl_comm_rank(c), gather = kind == CL_COLL_ALLGATHER;
    size_t block = count / (size_t)p, sent = gather ? block : count;
    void *send = NULL, *recv = NULL, *scratch = NULL;
    cl_result rc = CL_OK;
    CL_TRY(cl_mem_alloc(c, sent * sizeof(float), &send));
    CL_TRY(cl_mem_alloc(c, count * sizeof(float), &recv));
    CL_TRY(cl_mem_alloc(c, 4096, &scratch));
    cl_coll_args a = {.sendbuf = send,
                      .recvbuf = recv,
                      .count = count,
                      .dtype = CL_FLOAT32,
                      .op = CL_SUM,
                      .scratch = scratch,
                      .scratch_bytes = 4096};
    size_t bad = 0;
    *repeats =
        o->repeats > CL_LIBRARY_BUSBW_MAX_REPEATS ? CL_LIBRARY_BUSBW_MAX_REPEATS : o->repeats;
    for (int r = 0; r < *repeats; r++) {
        uint64_t seed;
        size_t w;
        double t;
        CL_TRY(cl_fresh_seed(run, c, &seed));
        CL_TRY(
            cl_fill(c, send, sent, CL_FLOAT32, CL_SUM, seed, me, gather ? (size_t)me * block : 0));
        CL_TRY(cl_library_coll(c, kind, &a)); /* the warm-up, checked */
        CL_TRY(count_wrong(c, kind, recv, count, seed, &w));
        bad += w;
        CL_TRY(timed_calls(c, all, kind, &a, o->iters, &t));
        busbw[r] =
            t > 0 ? (double)count * sizeof(float) / t / 1e9 * cl_coll_busbw_factor(kind, p) : 0;
    }
    *wrong = (double)bad;
    CL_TRY(cl_agree_sum(all, wrong, 1));
done:
    if (scratch)
        cl_mem_free(c, scratch);
    if (recv)
        cl_mem_free(c, recv);
    if (send)
        cl_mem_free(c, send);
    return rc;
}
