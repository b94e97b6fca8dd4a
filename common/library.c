/* library.c: the backend libraries' collectives (the baselines), and NCCL's algorithms over p2p for
 * "sim".
 *
 * On "sim" the baseline is the algorithm NCCL runs, written over the same
 * interface as the student's code and simulated the same way: rings for
 * AllReduce (reduce-scatter then all-gather), ReduceScatter and AllGather; a
 * pipelined chain for Broadcast and Reduce; one group of sends and receives to
 * every peer for AlltoAll(v). Its data is checked like the student's.
 */
#include <string.h>

#include "launch.h"

cl_result cl_launch(const cl_launch_opts *opts, cl_rank_body body, void *arg)
{
    const char *name = opts && opts->backend ? opts->backend : "cpu";
    if (strcmp(name, "cpu") == 0)
        return cl_mpi_launch(opts, body, arg);
    if (strcmp(name, "gpu") == 0)
        return cl_nccl_launch(opts, body, arg);
    if (strcmp(name, "sim") == 0)
        return cl_sim_launch(opts, body, arg);
    cl_set_error("unknown backend '%s' (cpu, gpu, sim)", name);
    return CL_ERR_INVALID;
}

cl_result cl_library_coll(cl_comm *c, cl_coll_kind kind, const cl_coll_args *a)
{
    const char *b = cl_comm_backend(c);
    if (strcmp(b, "cpu") == 0)
        return cl_mpi_library(c, kind, a);
    if (strcmp(b, "gpu") == 0)
        return cl_nccl_library(c, kind, a);
    return cl_p2p_library(c, kind, a);
}

/* --- rings ------------------------------------------------------------------------------- */

#define BLOCK(i, off, len) cl_coll_block(a->count, p, ((i) % p + p) % p, &(off), &(len))

static cl_result ring_allgather_inplace(cl_comm *c, const cl_coll_args *a, char *buf)
{
    int p = cl_comm_size(c), r = cl_comm_rank(c);
    size_t es = cl_dtype_size(a->dtype), so, sl, ro, rl;
    for (int s = 0; s < p - 1; s++) {
        BLOCK(r - s, so, sl);
        BLOCK(r - s - 1, ro, rl);
        CL_CHECK(cl_sendrecv(c, buf + so * es, sl * es, (r + 1) % p, buf + ro * es, rl * es,
                             (r - 1 + p) % p));
    }
    return CL_OK;
}

/* Reduce-scatter of in (count elements) around the ring; this rank's block of
 * the result ends in out. tmp holds two blocks. */
static cl_result ring_reduce_scatter(cl_comm *c, const cl_coll_args *a, const char *in, char *out,
                                     char *tmp)
{
    int p = cl_comm_size(c), r = cl_comm_rank(c);
    size_t es = cl_dtype_size(a->dtype), bmax = a->count / (size_t)p + 1;
    char *part[2] = {tmp, tmp + bmax * es};
    size_t so, sl, ro, rl, mo, ml;
    if (p == 1) {
        BLOCK(r, so, sl);
        return cl_copy_local(c, out, in + so * es, sl * es);
    }
    /* Step s sends the partial sum of block r-1-s and receives that of block r-2-s,
     * adding this rank's part; the last one received is this rank's block, straight
     * into out, unless out is this rank's own block of `in` (an in-place call). */
    BLOCK(r, mo, ml);
    int in_place = out == in + mo * es;
    for (int s = 0; s < p - 1; s++) {
        BLOCK(r - 1 - s, so, sl);
        BLOCK(r - 2 - s, ro, rl);
        const char *src = s == 0 ? in + so * es : part[(s - 1) % 2];
        char *dst = s == p - 2 && !in_place ? out : part[s % 2];
        CL_CHECK(cl_sendrecv(c, src, sl * es, (r + 1) % p, dst, rl * es, (r - 1 + p) % p));
        CL_CHECK(cl_reduce_local(c, dst, in + ro * es, rl, a->dtype, a->op));
    }
    return in_place ? cl_copy_local(c, out, part[(p - 2) % 2], ml * es) : CL_OK;
}

static cl_result ring_allreduce(cl_comm *c, const cl_coll_args *a)
{
    int p = cl_comm_size(c), r = cl_comm_rank(c);
    size_t es = cl_dtype_size(a->dtype), mo, ml;
    char *buf = a->recvbuf;
    if (p == 1)
        return cl_copy_local(c, buf, a->sendbuf, a->count * es);
    BLOCK(r, mo, ml);
    CL_CHECK(ring_reduce_scatter(c, a, a->sendbuf, buf + mo * es, a->scratch));
    return ring_allgather_inplace(c, a, buf);
}

static cl_result ring_allgather(cl_comm *c, const cl_coll_args *a)
{
    int p = cl_comm_size(c), r = cl_comm_rank(c);
    size_t es = cl_dtype_size(a->dtype), mo, ml;
    BLOCK(r, mo, ml);
    CL_CHECK(cl_copy_local(c, (char *)a->recvbuf + mo * es, a->sendbuf, ml * es));
    return ring_allgather_inplace(c, a, a->recvbuf);
}

/* --- chains: Broadcast and Reduce, pipelined in chunks ----------------------------------- */

cl_result cl_p2p_chain_broadcast(cl_comm *c, const cl_coll_args *a, size_t chunk_bytes)
{
    int p = cl_comm_size(c), r = cl_comm_rank(c), pos = (r - a->root + p) % p;
    size_t es = cl_dtype_size(a->dtype), n = a->count;
    size_t chunk = chunk_bytes / es ? chunk_bytes / es : 1, nchunks = (n + chunk - 1) / chunk;
    char *out = a->recvbuf;
    if (pos == 0)
        CL_CHECK(cl_copy_local(c, out, a->sendbuf, n * es));
    for (size_t k = 0; k <= nchunks && p > 1; k++) {
        CL_CHECK(cl_group_start(c));
        if (k > 0 && pos < p - 1) {
            size_t o = (k - 1) * chunk;
            CL_CHECK(cl_send(c, out + o * es, (n - o < chunk ? n - o : chunk) * es, (r + 1) % p));
        }
        if (k < nchunks && pos > 0) {
            size_t o = k * chunk;
            CL_CHECK(
                cl_recv(c, out + o * es, (n - o < chunk ? n - o : chunk) * es, (r - 1 + p) % p));
        }
        CL_CHECK(cl_group_end(c));
    }
    return CL_OK;
}

/* The partial sums flow root+1 -> root+2 -> ... -> root, a chunk at a time;
 * acc (scratch, count elements) holds this rank's partial sums. */
static cl_result chain_reduce(cl_comm *c, const cl_coll_args *a)
{
    int p = cl_comm_size(c), r = cl_comm_rank(c), pos = (r - a->root - 1 + 2 * p) % p;
    size_t es = cl_dtype_size(a->dtype), n = a->count;
    size_t chunk = cl_pipeline_chunk(n * es) / es, nchunks = (n + chunk - 1) / chunk;
    char *acc = r == a->root ? a->recvbuf : a->scratch;
    const char *in = a->sendbuf;
    if (p == 1 || pos == 0)
        CL_CHECK(cl_copy_local(c, acc, in, n * es));
    for (size_t k = 0; k <= nchunks && p > 1; k++) {
        size_t so = (k - 1) * chunk, ro = k * chunk;
        CL_CHECK(cl_group_start(c));
        if (k > 0 && pos < p - 1)
            CL_CHECK(
                cl_send(c, acc + so * es, (n - so < chunk ? n - so : chunk) * es, (r + 1) % p));
        if (k < nchunks && pos > 0)
            CL_CHECK(
                cl_recv(c, acc + ro * es, (n - ro < chunk ? n - ro : chunk) * es, (r - 1 + p) % p));
        CL_CHECK(cl_group_end(c));
        if (k < nchunks && pos > 0)
            CL_CHECK(cl_reduce_local(c, acc + ro * es, in + ro * es,
                                     n - ro < chunk ? n - ro : chunk, a->dtype, a->op));
    }
    return CL_OK;
}

/* --- AlltoAll: one group, every peer at once -------------------------------------------- */

static cl_result all_to_all(cl_comm *c, const cl_coll_args *a, int vector)
{
    int p = cl_comm_size(c), r = cl_comm_rank(c);
    size_t es = cl_dtype_size(a->dtype), b = vector ? 0 : a->count / (size_t)p;
    const char *in = a->sendbuf;
    char *out = a->recvbuf;
#define SOFF(j) ((vector ? a->sdispls[j] : (size_t)(j)*b) * es)
#define SLEN(j) ((vector ? a->sendcounts[j] : b) * es)
#define ROFF(j) ((vector ? a->rdispls[j] : (size_t)(j)*b) * es)
#define RLEN(j) ((vector ? a->recvcounts[j] : b) * es)
    CL_CHECK(cl_copy_local(c, out + ROFF(r), in + SOFF(r), SLEN(r)));
    CL_CHECK(cl_group_start(c));
    for (int k = 1; k < p; k++) {
        int to = (r + k) % p, from = (r - k + p) % p;
        CL_CHECK(cl_send(c, in + SOFF(to), SLEN(to), to));
        CL_CHECK(cl_recv(c, out + ROFF(from), RLEN(from), from));
    }
    return cl_group_end(c);
#undef SOFF
#undef SLEN
#undef ROFF
#undef RLEN
}

cl_result cl_p2p_library(cl_comm *c, cl_coll_kind kind, const cl_coll_args *a)
{
    switch (kind) {
    case CL_COLL_ALLREDUCE: return ring_allreduce(c, a);
    case CL_COLL_REDUCESCATTER:
        return ring_reduce_scatter(c, a, a->sendbuf, a->recvbuf, a->scratch);
    case CL_COLL_ALLGATHER: return ring_allgather(c, a);
    case CL_COLL_BROADCAST:
        return cl_p2p_chain_broadcast(c, a, cl_pipeline_chunk(a->count * cl_dtype_size(a->dtype)));
    case CL_COLL_REDUCE: return chain_reduce(c, a);
    case CL_COLL_ALLTOALL: return all_to_all(c, a, 0);
    case CL_COLL_ALLTOALLV: return all_to_all(c, a, 1);
    default: break;
    }
    cl_set_error("no library %s", cl_coll_name(kind));
    return CL_ERR_UNSUPPORTED;
}

size_t cl_pipeline_chunk(size_t bytes)
{
    size_t c = bytes / 32, lo = (size_t)64 << 10, hi = (size_t)4 << 20;
    return c < lo ? lo : c > hi ? hi : c;
}
