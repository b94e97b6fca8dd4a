/* p2p_mpi.c: the "cpu" backend: one MPI process per rank, host memory.
 *
 * Outside a group, cl_send/cl_recv are MPI_Send/MPI_Recv. Inside a group
 * they are posted as MPI_Isend/MPI_Irecv and cl_group_end waits for all of
 * them, which is how ncclGroupStart/End behave for send/recv pairs.
 * All messages use one tag, so matching is in posting order per peer pair.
 */
#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "p2p_backend.h"
#include "timing.h"

#define TAG 7
#define MAX_PENDING 1024

typedef struct mpi_comm {
    cl_comm base; /* first: the public part */
    MPI_Comm world;
    int npending;
    MPI_Request pending[MAX_PENDING];
} mpi_comm;

static cl_result mpi_error(const char *what, int err)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(err, text, &len);
    cl_set_error("%s: %s", what, text);
    return CL_ERR_BACKEND;
}

static cl_result check_count(size_t bytes)
{
    if (bytes > INT_MAX) {
        cl_set_error("message of %zu bytes exceeds MPI's int count", bytes);
        return CL_ERR_UNSUPPORTED;
    }
    return CL_OK;
}

static cl_result post(mpi_comm *m, int is_send, void *buf, size_t bytes, int peer)
{
    int err;
    if (m->npending == MAX_PENDING) {
        cl_set_error("more than %d operations in one group", MAX_PENDING);
        return CL_ERR_UNSUPPORTED;
    }
    MPI_Request *req = &m->pending[m->npending];
    if (is_send)
        err = MPI_Isend(buf, (int)bytes, MPI_BYTE, peer, TAG, m->world, req);
    else
        err = MPI_Irecv(buf, (int)bytes, MPI_BYTE, peer, TAG, m->world, req);
    if (err != MPI_SUCCESS)
        return mpi_error(is_send ? "MPI_Isend" : "MPI_Irecv", err);
    m->npending++;
    return CL_OK;
}

static cl_result mpi_send(cl_comm *c, const void *buf, size_t bytes, int peer)
{
    mpi_comm *m = (mpi_comm *)c;
    CL_CHECK(check_count(bytes));
    if (c->group_depth > 0)
        return post(m, 1, (void *)buf, bytes, peer);
    int err = MPI_Send(buf, (int)bytes, MPI_BYTE, peer, TAG, m->world);
    return err == MPI_SUCCESS ? CL_OK : mpi_error("MPI_Send", err);
}

static cl_result mpi_recv(cl_comm *c, void *buf, size_t bytes, int peer)
{
    mpi_comm *m = (mpi_comm *)c;
    CL_CHECK(check_count(bytes));
    if (c->group_depth > 0)
        return post(m, 0, buf, bytes, peer);
    MPI_Status st;
    int err = MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, TAG, m->world, &st);
    if (err != MPI_SUCCESS)
        return mpi_error("MPI_Recv", err);
    int got = 0;
    MPI_Get_count(&st, MPI_BYTE, &got);
    if ((size_t)got != bytes) {
        cl_set_error("rank %d: received %d bytes from %d, expected %zu", c->rank, got, peer, bytes);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

static cl_result mpi_group_start(cl_comm *c)
{
    ((mpi_comm *)c)->npending = 0;
    return CL_OK;
}

static cl_result mpi_group_end(cl_comm *c)
{
    mpi_comm *m = (mpi_comm *)c;
    int n = m->npending;
    m->npending = 0;
    int err = MPI_Waitall(n, m->pending, MPI_STATUSES_IGNORE);
    return err == MPI_SUCCESS ? CL_OK : mpi_error("MPI_Waitall", err);
}

static cl_result mpi_barrier(cl_comm *c)
{
    int err = MPI_Barrier(((mpi_comm *)c)->world);
    return err == MPI_SUCCESS ? CL_OK : mpi_error("MPI_Barrier", err);
}

static cl_result mpi_mem_alloc(cl_comm *c, size_t bytes, void **out)
{
    (void)c;
    /* 4 KiB alignment keeps buffers page-aligned, as device allocations are. */
    void *p = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096 + 4096);
    if (!p) {
        cl_set_error("cannot allocate %zu bytes", bytes);
        return CL_ERR_NOMEM;
    }
    cl_pretouch(p, bytes);
    *out = p;
    return CL_OK;
}

static cl_result mpi_mem_free(cl_comm *c, void *p)
{
    (void)c;
    free(p);
    return CL_OK;
}

static cl_result mpi_copy(cl_comm *c, void *dst, const void *src, size_t bytes)
{
    (void)c;
    memmove(dst, src, bytes);
    return CL_OK;
}

static cl_result mpi_reduce_local(cl_comm *c, void *inout, const void *in, size_t count,
                                  cl_dtype t, cl_op op)
{
    (void)c;
    return cl_reduce_host(inout, in, count, t, op);
}

static double mpi_time(cl_comm *c)
{
    (void)c;
    return MPI_Wtime();
}

static cl_result mpi_types(cl_dtype t, cl_op op, MPI_Datatype *mt, MPI_Op *mo)
{
    static const MPI_Op ops[CL_OP_COUNT] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN};
    switch (t) {
    case CL_INT32: *mt = MPI_INT32_T; break;
    case CL_INT64: *mt = MPI_INT64_T; break;
    case CL_FLOAT32: *mt = MPI_FLOAT; break;
    case CL_FLOAT64: *mt = MPI_DOUBLE; break;
    default: cl_set_error("bad data type %d", (int)t); return CL_ERR_INVALID;
    }
    if ((unsigned)op >= CL_OP_COUNT) {
        cl_set_error("bad reduction %d", (int)op);
        return CL_ERR_INVALID;
    }
    *mo = ops[op];
    return CL_OK;
}

static cl_result mpi_baseline_allreduce(cl_comm *c, const void *sendbuf, void *recvbuf,
                                        size_t count, cl_dtype t, cl_op op)
{
    MPI_Datatype mt;
    MPI_Op mo;
    CL_CHECK(mpi_types(t, op, &mt, &mo));
    CL_CHECK(check_count(count));
    int err = MPI_Allreduce(sendbuf == recvbuf ? MPI_IN_PLACE : sendbuf, recvbuf, (int)count, mt,
                            mo, ((mpi_comm *)c)->world);
    return err == MPI_SUCCESS ? CL_OK : mpi_error("MPI_Allreduce", err);
}

static cl_result mpi_launch(const cl_launch_opts *opts, cl_rank_body body, void *arg)
{
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized && MPI_Init(opts->argc, opts->argv) != MPI_SUCCESS) {
        cl_set_error("MPI_Init failed");
        return CL_ERR_BACKEND;
    }
    mpi_comm *m = calloc(1, sizeof *m);
    if (!m)
        return CL_ERR_NOMEM;
    m->base.ops = &cl_backend_mpi;
    MPI_Comm_dup(MPI_COMM_WORLD, &m->world);
    MPI_Comm_set_errhandler(m->world, MPI_ERRORS_RETURN);
    MPI_Comm_rank(m->world, &m->base.rank);
    MPI_Comm_size(m->world, &m->base.size);

    cl_result rc = body(&m->base, arg);
    if (rc != CL_OK) {
        /* Peers may be blocked waiting for this rank: stop them all now
         * rather than leave the job to its time limit. */
        cl_report_failure(__FILE__, __LINE__, "rank body", rc);
        MPI_Abort(MPI_COMM_WORLD, cl_exit_status(rc));
    }
    MPI_Comm_free(&m->world);
    free(m);
    MPI_Finalize();
    return rc;
}

const cl_backend_ops cl_backend_mpi = {
    .name = "cpu",
    .launch = mpi_launch,
    .send = mpi_send,
    .recv = mpi_recv,
    .group_start = mpi_group_start,
    .group_end = mpi_group_end,
    .barrier = mpi_barrier,
    .mem_alloc = mpi_mem_alloc,
    .mem_free = mpi_mem_free,
    .mem_upload = mpi_copy,
    .mem_download = mpi_copy,
    .reduce_local = mpi_reduce_local,
    .copy_local = mpi_copy,
    .time = mpi_time,
    .baseline_allreduce = mpi_baseline_allreduce,
};
