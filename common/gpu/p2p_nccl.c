/* p2p_nccl.c: the "gpu" backend: one GPU per MPI process, NCCL send/recv.
 *
 * MPI only starts the processes and broadcasts the NCCL unique id; all data
 * moves through NCCL on one CUDA stream per rank. Outside a group each
 * operation is followed by a stream synchronisation, so cl_send/cl_recv are
 * blocking like their MPI counterparts; inside a group they are enqueued
 * between ncclGroupStart and ncclGroupEnd.
 */
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>
#include <stdlib.h>

#include "../p2p_backend.h"
#include "gpu_check.h"
#include "reduce_kernels.h"

typedef struct nccl_comm {
    cl_comm base; /* first: the public part */
    MPI_Comm world;
    ncclComm_t nccl;
    cudaStream_t stream;
} nccl_comm;

static nccl_comm *as_nccl(cl_comm *c) { return (nccl_comm *)c; }

static cl_result finish_if_ungrouped(cl_comm *c)
{
    if (c->group_depth == 0)
        CL_CUDA_CHECK(cudaStreamSynchronize(as_nccl(c)->stream));
    return CL_OK;
}

static cl_result nccl_send(cl_comm *c, const void *buf, size_t bytes, int peer)
{
    CL_NCCL_CHECK(ncclSend(buf, bytes, ncclInt8, peer, as_nccl(c)->nccl, as_nccl(c)->stream));
    return finish_if_ungrouped(c);
}

static cl_result nccl_recv(cl_comm *c, void *buf, size_t bytes, int peer)
{
    CL_NCCL_CHECK(ncclRecv(buf, bytes, ncclInt8, peer, as_nccl(c)->nccl, as_nccl(c)->stream));
    return finish_if_ungrouped(c);
}

static cl_result nccl_group_start(cl_comm *c)
{
    (void)c;
    CL_NCCL_CHECK(ncclGroupStart());
    return CL_OK;
}

static cl_result nccl_group_end(cl_comm *c)
{
    CL_NCCL_CHECK(ncclGroupEnd());
    CL_CUDA_CHECK(cudaStreamSynchronize(as_nccl(c)->stream));
    return CL_OK;
}

static cl_result nccl_barrier(cl_comm *c)
{
    CL_CUDA_CHECK(cudaStreamSynchronize(as_nccl(c)->stream));
    return MPI_Barrier(as_nccl(c)->world) == MPI_SUCCESS ? CL_OK : CL_ERR_BACKEND;
}

static cl_result nccl_mem_alloc(cl_comm *c, size_t bytes, void **out)
{
    (void)c;
    CL_CUDA_CHECK(cudaMalloc(out, bytes ? bytes : 1));
    CL_CUDA_CHECK(cudaMemset(*out, 0, bytes)); /* touch it, as host buffers are */
    return CL_OK;
}

static cl_result nccl_mem_free(cl_comm *c, void *p)
{
    (void)c;
    CL_CUDA_CHECK(cudaFree(p));
    return CL_OK;
}

static cl_result nccl_upload(cl_comm *c, void *dst, const void *src, size_t bytes)
{
    (void)c;
    CL_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    return CL_OK;
}

static cl_result nccl_download(cl_comm *c, void *dst, const void *src, size_t bytes)
{
    CL_CUDA_CHECK(cudaStreamSynchronize(as_nccl(c)->stream));
    CL_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
    return CL_OK;
}

static cl_result nccl_copy_local(cl_comm *c, void *dst, const void *src, size_t bytes)
{
    CL_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, as_nccl(c)->stream));
    return finish_if_ungrouped(c);
}

static cl_result nccl_reduce_local(cl_comm *c, void *inout, const void *in, size_t count,
                                   cl_dtype t, cl_op op)
{
    CL_CUDA_CHECK((cudaError_t)cl_gpu_reduce_launch(inout, in, count, (int)t, (int)op,
                                               as_nccl(c)->stream));
    return finish_if_ungrouped(c);
}

static double nccl_time(cl_comm *c)
{
    cudaStreamSynchronize(as_nccl(c)->stream);
    return MPI_Wtime();
}

static cl_result nccl_types(cl_dtype t, cl_op op, ncclDataType_t *nt, ncclRedOp_t *no)
{
    static const ncclDataType_t types[CL_DTYPE_COUNT] = {ncclInt32, ncclInt64, ncclFloat32,
                                                         ncclFloat64};
    static const ncclRedOp_t ops[CL_OP_COUNT] = {ncclSum, ncclProd, ncclMax, ncclMin};
    if ((unsigned)t >= CL_DTYPE_COUNT || (unsigned)op >= CL_OP_COUNT) {
        cl_set_error("bad data type %d or reduction %d", (int)t, (int)op);
        return CL_ERR_INVALID;
    }
    *nt = types[t];
    *no = ops[op];
    return CL_OK;
}

static cl_result nccl_baseline_allreduce(cl_comm *c, const void *sendbuf, void *recvbuf,
                                         size_t count, cl_dtype t, cl_op op)
{
    ncclDataType_t nt;
    ncclRedOp_t no;
    CL_CHECK(nccl_types(t, op, &nt, &no));
    CL_NCCL_CHECK(ncclAllReduce(sendbuf, recvbuf, count, nt, no, as_nccl(c)->nccl, as_nccl(c)->stream));
    CL_CUDA_CHECK(cudaStreamSynchronize(as_nccl(c)->stream));
    return CL_OK;
}

/* Pick this process's GPU: the local rank among processes on this node. */
static cl_result select_device(MPI_Comm world, int *device)
{
    int ngpus = 0;
    cudaError_t e = cudaGetDeviceCount(&ngpus);
    if (e != cudaSuccess || ngpus <= 0) {
        cl_set_error("no usable GPU (%s)", e != cudaSuccess ? cudaGetErrorName(e) : "0 devices");
        return CL_ERR_UNSUPPORTED;
    }
    MPI_Comm node;
    int local_rank, local_size;
    MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_size(node, &local_size);
    MPI_Comm_free(&node);
    if (local_size > ngpus) {
        cl_set_error("needs %d GPUs on this node, found %d", local_size, ngpus);
        return CL_ERR_UNSUPPORTED;
    }
    *device = local_rank;
    return CL_OK;
}

static cl_result nccl_open(nccl_comm *g)
{
    int device;
    ncclUniqueId id;
    CL_CHECK(select_device(g->world, &device));
    CL_CUDA_CHECK(cudaSetDevice(device));
    CL_CUDA_CHECK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    if (g->base.rank == 0)
        CL_NCCL_CHECK(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, g->world);
    CL_NCCL_CHECK(ncclCommInitRank(&g->nccl, g->base.size, id, g->base.rank));
    return CL_OK;
}

static cl_result nccl_launch(const cl_launch_opts *opts, cl_rank_body body, void *arg)
{
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized && MPI_Init(opts->argc, opts->argv) != MPI_SUCCESS) {
        cl_set_error("MPI_Init failed");
        return CL_ERR_BACKEND;
    }
    nccl_comm *g = calloc(1, sizeof *g);
    if (!g)
        return CL_ERR_NOMEM;
    g->base.ops = &cl_backend_nccl;
    MPI_Comm_dup(MPI_COMM_WORLD, &g->world);
    MPI_Comm_rank(g->world, &g->base.rank);
    MPI_Comm_size(g->world, &g->base.size);

    cl_result rc = nccl_open(g);
    /* Every rank must agree before any NCCL call: a rank without a GPU
     * would leave the others blocked in ncclCommInitRank. */
    int ok = rc == CL_OK, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, g->world);
    if (rc == CL_OK && !all_ok) {
        cl_set_error("another rank has no usable GPU");
        rc = CL_ERR_UNSUPPORTED;
    }
    if (rc == CL_OK) {
        rc = body(&g->base, arg);
        if (rc != CL_OK) {
            cl_report_failure(__FILE__, __LINE__, "rank body", rc);
            MPI_Abort(MPI_COMM_WORLD, cl_exit_status(rc));
        }
    }
    if (g->nccl)
        ncclCommDestroy(g->nccl);
    MPI_Comm_free(&g->world);
    free(g);
    MPI_Finalize();
    return rc;
}

const cl_backend_ops cl_backend_nccl = {
    .name = "gpu",
    .launch = nccl_launch,
    .send = nccl_send,
    .recv = nccl_recv,
    .group_start = nccl_group_start,
    .group_end = nccl_group_end,
    .barrier = nccl_barrier,
    .mem_alloc = nccl_mem_alloc,
    .mem_free = nccl_mem_free,
    .mem_upload = nccl_upload,
    .mem_download = nccl_download,
    .reduce_local = nccl_reduce_local,
    .copy_local = nccl_copy_local,
    .time = nccl_time,
    .baseline_allreduce = nccl_baseline_allreduce,
};
