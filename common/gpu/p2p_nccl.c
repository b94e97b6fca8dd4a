/* p2p_nccl.c: the "gpu" backend: one GPU per MPI process, NCCL send/recv on one stream.
 *
 * MPI starts the processes, agrees that every rank has a GPU, and broadcasts
 * NCCL's unique id; all data moves through NCCL on one non-blocking CUDA
 * stream per rank, and every copy and kernel of the rank is ordered on that
 * same stream. Buffers are device memory behind handles (buffers.h), so host
 * code that dereferences one faults at once on every backend alike.
 *
 * Posted transfers are kept until the rank waits or tests: then all of them
 * go to NCCL in one ncclGroupStart/End, so that an isend and an irecv posted
 * together cannot deadlock each other in the stream. A wait polls an event
 * and NCCL's asynchronous error until the deadline, so a peer that died or
 * never posts makes it fail instead of hang.
 */
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buffers.h"
#include "deadline.h"
#include "gpu_check.h"
#include "launch.h"
#include "p2p_backend.h"
#include "reduce_kernels.h"

typedef struct nccl_comm {
    cl_comm base; /* first: the public part */
    MPI_Comm mpi;
    ncclComm_t nccl;
    cudaStream_t stream;
} nccl_comm;

typedef struct pending {
    int is_send, peer;
    void *dev;
    size_t bytes;
} pending;

/* Posts not yet given to NCCL, and the event that ends each request. */
static struct {
    pending *p;
    int n, cap;
    cudaEvent_t *ev; /* by request id - 1; NULL when free */
    int nev, capev;
    nccl_comm *owner; /* the comm the pending posts belong to */
} G;

static const cl_backend_ops nccl_ops;

static nccl_comm *as_nccl(cl_comm *c) { return (nccl_comm *)c; }

/* The device pointer behind [p, p + bytes) of a handle. */
static cl_result dev(const void *p, size_t bytes, void **out)
{
    const cl_buffer *b = cl_buffers_find(p, bytes, -1, "gpu");
    if (!b)
        return CL_ERR_INVALID;
    *out = (char *)b->impl + ((uintptr_t)p - b->base);
    return CL_OK;
}

/* Wait for ev, watching NCCL's asynchronous errors and the deadline. */
static cl_result sync_event(nccl_comm *g, cudaEvent_t ev)
{
    for (unsigned spins = 0;; spins++) {
        cudaError_t e = cudaEventQuery(ev);
        if (e == cudaSuccess)
            return CL_OK;
        if (e != cudaErrorNotReady)
            CL_CUDA_CHECK(e);
        ncclResult_t async = ncclSuccess;
        if (g->nccl)
            CL_NCCL_CHECK(ncclCommGetAsyncError(g->nccl, &async));
        if (async != ncclSuccess) {
            cl_set_error("NCCL: %s (%s)", ncclGetErrorString(async), ncclGetLastError(g->nccl));
            return CL_ERR_BACKEND;
        }
        if (cl_deadline_left() <= 0) {
            cl_set_error("the GPU did not finish before the deadline (a transfer whose peer "
                         "never posts?)");
            return CL_ERR_TIMEOUT;
        }
        if (spins > 1000)
            usleep(50);
    }
}

static cl_result sync_stream(nccl_comm *g)
{
    cudaEvent_t ev;
    CL_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    cl_result rc = CL_OK;
    if (cudaEventRecord(ev, g->stream) != cudaSuccess) {
        cl_set_error("cudaEventRecord failed");
        rc = CL_ERR_BACKEND;
    }
    if (rc == CL_OK)
        rc = sync_event(g, ev);
    cudaEventDestroy(ev);
    return rc;
}

/* Give every pending post to NCCL in one group; each request's event follows it. */
static cl_result flush(void)
{
    if (G.n == 0)
        return CL_OK;
    nccl_comm *g = G.owner;
    CL_NCCL_CHECK(ncclGroupStart());
    for (int i = 0; i < G.n; i++) {
        pending *q = &G.p[i];
        ncclResult_t r = q->is_send ? ncclSend(q->dev, q->bytes, ncclInt8, q->peer, g->nccl, g->stream)
                                    : ncclRecv(q->dev, q->bytes, ncclInt8, q->peer, g->nccl, g->stream);
        if (r != ncclSuccess) {
            ncclGroupEnd();
            G.n = 0;
            cl_set_error("%s: %s", q->is_send ? "ncclSend" : "ncclRecv", ncclGetErrorString(r));
            return CL_ERR_BACKEND;
        }
    }
    G.n = 0;
    CL_NCCL_CHECK(ncclGroupEnd());
    return CL_OK;
}

static cl_result post(cl_comm *c, int is_send, const void *buf, size_t bytes, int peer, int *req)
{
    void *d;
    CL_CHECK(dev(buf, bytes, &d));
    if (G.n && G.owner != as_nccl(c))
        CL_CHECK(flush()); /* posts of another communicator go first */
    if (G.n == G.cap) {
        int cap = G.cap ? 2 * G.cap : 32;
        pending *q = realloc(G.p, (size_t)cap * sizeof *q);
        if (!q)
            return CL_ERR_NOMEM;
        G.p = q;
        G.cap = cap;
    }
    G.owner = as_nccl(c);
    G.p[G.n++] = (pending){.is_send = is_send, .peer = peer, .dev = d, .bytes = bytes};
    int id = 0;
    for (int i = 0; i < G.nev && !id; i++)
        if (!G.ev[i])
            id = i + 1;
    if (!id) {
        if (G.nev == G.capev) {
            int cap = G.capev ? 2 * G.capev : 64;
            cudaEvent_t *q = realloc(G.ev, (size_t)cap * sizeof *q);
            if (!q)
                return CL_ERR_NOMEM;
            G.ev = q;
            G.capev = cap;
        }
        G.ev[G.nev] = NULL;
        id = ++G.nev;
    }
    CL_CUDA_CHECK(cudaEventCreateWithFlags(&G.ev[id - 1], cudaEventDisableTiming));
    *req = id;
    return CL_OK;
}

static cl_result nccl_isend(cl_comm *c, const void *buf, size_t bytes, int peer, int *req)
{
    return post(c, 1, buf, bytes, peer, req);
}

static cl_result nccl_irecv(cl_comm *c, void *buf, size_t bytes, int peer, int *req)
{
    return post(c, 0, buf, bytes, peer, req);
}

/* All posts so far are in the stream: record each outstanding request's event
 * now (they complete together, in stream order). */
static cl_result flush_and_mark(nccl_comm *g)
{
    CL_CHECK(flush());
    for (int i = 0; i < G.nev; i++)
        if (G.ev[i])
            CL_CUDA_CHECK(cudaEventRecord(G.ev[i], g->stream));
    return CL_OK;
}

static cl_result nccl_wait(cl_comm *c, int n, const int *reqs)
{
    CL_CHECK(flush_and_mark(as_nccl(c)));
    for (int i = 0; i < n; i++) {
        if (reqs[i] < 1 || reqs[i] > G.nev || !G.ev[reqs[i] - 1]) {
            cl_set_error("request %d is not in flight", reqs[i]);
            return CL_ERR_INVALID;
        }
        CL_CHECK(sync_event(as_nccl(c), G.ev[reqs[i] - 1]));
        cudaEventDestroy(G.ev[reqs[i] - 1]);
        G.ev[reqs[i] - 1] = NULL;
    }
    return CL_OK;
}

static cl_result nccl_test(cl_comm *c, int req, int *done)
{
    CL_CHECK(flush_and_mark(as_nccl(c)));
    if (req < 1 || req > G.nev || !G.ev[req - 1]) {
        cl_set_error("request %d is not in flight", req);
        return CL_ERR_INVALID;
    }
    cudaError_t e = cudaEventQuery(G.ev[req - 1]);
    if (e != cudaSuccess && e != cudaErrorNotReady)
        CL_CUDA_CHECK(e);
    *done = e == cudaSuccess;
    if (*done) {
        cudaEventDestroy(G.ev[req - 1]);
        G.ev[req - 1] = NULL;
    }
    return CL_OK;
}

static cl_result nccl_barrier(cl_comm *c)
{
    CL_CHECK(flush());
    CL_CHECK(sync_stream(as_nccl(c)));
    return MPI_Barrier(as_nccl(c)->mpi) == MPI_SUCCESS ? CL_OK : CL_ERR_BACKEND;
}

static cl_result nccl_split(cl_comm *c, int color, int key, cl_comm **out)
{
    nccl_comm *g = as_nccl(c);
    CL_CHECK(flush());
    CL_CHECK(sync_stream(g));
    MPI_Comm nm;
    if (MPI_Comm_split(g->mpi, color < 0 ? MPI_UNDEFINED : color, key, &nm) != MPI_SUCCESS) {
        cl_set_error("MPI_Comm_split failed");
        return CL_ERR_BACKEND;
    }
    ncclComm_t nc = NULL;
    CL_NCCL_CHECK(ncclCommSplit(g->nccl, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &nc, NULL));
    if (nm == MPI_COMM_NULL)
        return CL_OK;
    nccl_comm *n = calloc(1, sizeof *n);
    int rank, size;
    MPI_Comm_rank(nm, &rank);
    MPI_Comm_size(nm, &size);
    int *world = malloc((size_t)size * sizeof *world), *mine = malloc((size_t)size * sizeof *mine);
    if (!n || !world || !mine) {
        free(n), free(world), free(mine);
        return CL_ERR_NOMEM;
    }
    MPI_Group gr, wg;
    MPI_Comm_group(nm, &gr);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (int i = 0; i < size; i++)
        mine[i] = i;
    MPI_Group_translate_ranks(gr, size, mine, wg, world);
    MPI_Group_free(&gr);
    MPI_Group_free(&wg);
    free(mine);
    cl_comm_init(&n->base, &nccl_ops, rank, size, c->world_rank);
    n->base.world_of = world;
    n->mpi = nm;
    n->nccl = nc;
    n->stream = g->stream;
    *out = &n->base;
    return CL_OK;
}

static cl_result nccl_comm_free(cl_comm *c)
{
    nccl_comm *g = as_nccl(c);
    if (!c->world_of) {
        cl_set_error("cl_comm_free: the world communicator cannot be freed");
        return CL_ERR_INVALID;
    }
    CL_CHECK(flush());
    ncclCommDestroy(g->nccl);
    MPI_Comm_free(&g->mpi);
    cl_comm_fini(c);
    free(g);
    return CL_OK;
}

static cl_result nccl_agree(cl_comm *c, cl_op op, int64_t *v, int n)
{
    MPI_Op mo = op == CL_SUM ? MPI_SUM : op == CL_MAX ? MPI_MAX : MPI_MIN;
    return MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT64_T, mo, as_nccl(c)->mpi) == MPI_SUCCESS
               ? CL_OK
               : CL_ERR_BACKEND;
}

static cl_result nccl_mem_alloc(cl_comm *c, size_t bytes, void **out)
{
    nccl_comm *g = as_nccl(c);
    void *d = NULL;
    uintptr_t h = cl_handles_take(bytes);
    if (!h) {
        cl_set_error("out of buffer handles");
        return CL_ERR_NOMEM;
    }
    CL_CUDA_CHECK(cudaMalloc(&d, bytes ? bytes : 1));
    /* Touch it on the rank's stream, as host buffers are pre-touched. */
    cudaError_t e = cudaMemsetAsync(d, 0, bytes, g->stream);
    cl_result rc = e == cudaSuccess ? sync_stream(g) : CL_ERR_BACKEND;
    if (rc == CL_OK)
        rc = cl_buffers_add(h, bytes, c->world_rank, d);
    if (rc != CL_OK) {
        cudaFree(d);
        return rc;
    }
    *out = (void *)h;
    return CL_OK;
}

static cl_result nccl_mem_free(cl_comm *c, void *p)
{
    CL_CHECK(flush());
    CL_CHECK(sync_stream(as_nccl(c)));
    cl_buffer b;
    CL_CHECK(cl_buffers_remove((uintptr_t)p, &b));
    CL_CUDA_CHECK(cudaFree(b.impl));
    return CL_OK;
}

/* Host copies go through the rank's stream, so they are ordered with NCCL and
 * the kernels, and finish before the call returns. */
static cl_result nccl_upload(cl_comm *c, void *dst, const void *src, size_t bytes)
{
    void *d;
    CL_CHECK(dev(dst, bytes, &d));
    CL_CHECK(flush());
    CL_CUDA_CHECK(cudaMemcpyAsync(d, src, bytes, cudaMemcpyHostToDevice, as_nccl(c)->stream));
    return sync_stream(as_nccl(c));
}

static cl_result nccl_download(cl_comm *c, void *dst, const void *src, size_t bytes)
{
    void *d;
    CL_CHECK(dev(src, bytes, &d));
    CL_CHECK(flush());
    CL_CUDA_CHECK(cudaMemcpyAsync(dst, d, bytes, cudaMemcpyDeviceToHost, as_nccl(c)->stream));
    return sync_stream(as_nccl(c));
}

/* Local work is ordered on the stream and finished before returning, with
 * memmove semantics for overlapping copies (as on "cpu"). */
static cl_result nccl_copy_local(cl_comm *c, void *dst, const void *src, size_t bytes)
{
    nccl_comm *g = as_nccl(c);
    void *dd, *ds;
    CL_CHECK(dev(dst, bytes, &dd));
    CL_CHECK(dev(src, bytes, &ds));
    CL_CHECK(flush());
    const char *a = ds, *b = dd;
    if (a < b + bytes && b < a + bytes) { /* overlap: through a temporary */
        void *tmp;
        CL_CUDA_CHECK(cudaMallocAsync(&tmp, bytes, g->stream));
        CL_CUDA_CHECK(cudaMemcpyAsync(tmp, ds, bytes, cudaMemcpyDeviceToDevice, g->stream));
        CL_CUDA_CHECK(cudaMemcpyAsync(dd, tmp, bytes, cudaMemcpyDeviceToDevice, g->stream));
        CL_CUDA_CHECK(cudaFreeAsync(tmp, g->stream));
    } else {
        CL_CUDA_CHECK(cudaMemcpyAsync(dd, ds, bytes, cudaMemcpyDeviceToDevice, g->stream));
    }
    return sync_stream(g);
}

static cl_result nccl_reduce_local(cl_comm *c, void *inout, const void *in, size_t count,
                                   cl_dtype t, cl_op op)
{
    void *dio, *din;
    size_t es = cl_dtype_size(t);
    CL_CHECK(dev(inout, count * es, &dio));
    CL_CHECK(dev(in, count * es, &din));
    CL_CHECK(flush());
    CL_CUDA_CHECK((cudaError_t)cl_gpu_reduce_launch(dio, din, count, (int)t, (int)op,
                                                    as_nccl(c)->stream));
    return sync_stream(as_nccl(c));
}

static double nccl_time(cl_comm *c)
{
    flush();
    sync_stream(as_nccl(c));
    return MPI_Wtime();
}

/* --- NCCL's collectives: the baselines --------------------------------------------------- */

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

cl_result cl_nccl_library(cl_comm *c, cl_coll_kind kind, const cl_coll_args *a)
{
    nccl_comm *g = as_nccl(c);
    ncclDataType_t nt;
    ncclRedOp_t no;
    CL_CHECK(nccl_types(a->dtype, cl_coll_reduces(kind) ? a->op : CL_SUM, &nt, &no));
    size_t es = cl_dtype_size(a->dtype), p = (size_t)c->size, n = a->count;
    void *s = NULL, *r = NULL;
    size_t sbytes = kind == CL_COLL_ALLGATHER ? n / p * es : kind == CL_COLL_ALLTOALLV ? 0 : n * es;
    size_t rbytes = kind == CL_COLL_REDUCESCATTER ? n / p * es : kind == CL_COLL_ALLTOALLV ? 0 : n * es;
    if ((kind == CL_COLL_REDUCESCATTER || kind == CL_COLL_ALLGATHER || kind == CL_COLL_ALLTOALL) &&
        n % p) {
        cl_set_error("NCCL's %s needs a count that divides evenly over the ranks",
                     cl_coll_name(kind));
        return CL_ERR_UNSUPPORTED;
    }
    if (kind != CL_COLL_ALLTOALLV) {
        int reads_send = kind != CL_COLL_BROADCAST || c->rank == a->root;
        if (reads_send && sbytes)
            CL_CHECK(dev(a->sendbuf, sbytes, &s));
        CL_CHECK(dev(a->recvbuf, rbytes, &r));
    }
    CL_CHECK(flush());
    switch (kind) {
    case CL_COLL_ALLREDUCE: CL_NCCL_CHECK(ncclAllReduce(s, r, n, nt, no, g->nccl, g->stream)); break;
    case CL_COLL_REDUCESCATTER:
        CL_NCCL_CHECK(ncclReduceScatter(s, r, n / p, nt, no, g->nccl, g->stream));
        break;
    case CL_COLL_ALLGATHER: CL_NCCL_CHECK(ncclAllGather(s, r, n / p, nt, g->nccl, g->stream)); break;
    case CL_COLL_BROADCAST:
        CL_NCCL_CHECK(ncclBroadcast(s, r, n, nt, a->root, g->nccl, g->stream));
        break;
    case CL_COLL_REDUCE:
        CL_NCCL_CHECK(ncclReduce(s, r, n, nt, no, a->root, g->nccl, g->stream));
        break;
    case CL_COLL_ALLTOALL:
    case CL_COLL_ALLTOALLV: {
        CL_NCCL_CHECK(ncclGroupStart());
        for (size_t j = 0; j < p; j++) {
            size_t so = kind == CL_COLL_ALLTOALL ? j * (n / p) : a->sdispls[j];
            size_t sl = kind == CL_COLL_ALLTOALL ? n / p : a->sendcounts[j];
            size_t ro = kind == CL_COLL_ALLTOALL ? j * (n / p) : a->rdispls[j];
            size_t rl = kind == CL_COLL_ALLTOALL ? n / p : a->recvcounts[j];
            void *sd, *rd;
            if (dev((const char *)a->sendbuf + so * es, sl * es, &sd) != CL_OK ||
                dev((char *)a->recvbuf + ro * es, rl * es, &rd) != CL_OK) {
                ncclGroupEnd();
                return CL_ERR_INVALID;
            }
            ncclSend(sd, sl, nt, (int)j, g->nccl, g->stream);
            ncclRecv(rd, rl, nt, (int)j, g->nccl, g->stream);
        }
        CL_NCCL_CHECK(ncclGroupEnd());
        break;
    }
    default: cl_set_error("no NCCL collective for kind %d", (int)kind); return CL_ERR_INVALID;
    }
    return sync_stream(g);
}

/* --- launch ------------------------------------------------------------------------------- */

/* This process's GPU: its rank among the processes of its node. */
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

static cl_result open_device(nccl_comm *g)
{
    int device;
    CL_CHECK(select_device(g->mpi, &device));
    CL_CUDA_CHECK(cudaSetDevice(device));
    CL_CUDA_CHECK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    return CL_OK;
}

cl_result cl_nccl_launch(const cl_launch_opts *opts, cl_rank_body body, void *arg)
{
    setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 0); /* device numbers as nvidia-smi shows them */
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized && MPI_Init(opts->argc, opts->argv) != MPI_SUCCESS) {
        cl_set_error("MPI_Init failed");
        return CL_ERR_BACKEND;
    }
    nccl_comm *g = calloc(1, sizeof *g);
    if (!g)
        return CL_ERR_NOMEM;
    int rank, size;
    MPI_Comm_dup(MPI_COMM_WORLD, &g->mpi);
    MPI_Comm_rank(g->mpi, &rank);
    MPI_Comm_size(g->mpi, &size);
    cl_comm_init(&g->base, &nccl_ops, rank, size, rank);

    /* Every rank agrees that it has a GPU before any NCCL call: a rank without
     * one would leave the others blocked in ncclCommInitRank. */
    cl_result rc = open_device(g);
    char why[256];
    snprintf(why, sizeof why, "%s", cl_last_error());
    int ok = rc == CL_OK, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, g->mpi);
    if (rc == CL_OK && !all_ok) {
        cl_set_error("another rank has no usable GPU");
        rc = CL_ERR_UNSUPPORTED;
    } else if (rc != CL_OK) {
        cl_set_error("%s", why);
    }
    if (all_ok) {
        ncclUniqueId id;
        memset(&id, 0, sizeof id);
        if (rank == 0 && ncclGetUniqueId(&id) != ncclSuccess)
            rc = CL_ERR_BACKEND;
        MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, g->mpi);
        if (rc == CL_OK && ncclCommInitRank(&g->nccl, size, id, rank) != ncclSuccess) {
            cl_set_error("ncclCommInitRank failed");
            rc = CL_ERR_BACKEND;
        }
    }
    if (rc == CL_OK)
        rc = body(&g->base, arg);
    if (rc != CL_OK && rc != CL_ERR_UNSUPPORTED && size > 1) {
        cl_report_failure(__FILE__, __LINE__, "rank body", rc);
        if (g->nccl)
            ncclCommAbort(g->nccl);
        MPI_Abort(MPI_COMM_WORLD, cl_exit_status(rc));
    }
    if (g->nccl)
        ncclCommDestroy(g->nccl);
    if (g->stream)
        cudaStreamDestroy(g->stream);
    MPI_Comm_free(&g->mpi);
    cl_comm_fini(&g->base);
    free(g);
    MPI_Finalize();
    return rc;
}

static const cl_backend_ops nccl_ops = {
    .name = "gpu",
    .isend = nccl_isend,
    .irecv = nccl_irecv,
    .wait = nccl_wait,
    .test = nccl_test,
    .barrier = nccl_barrier,
    .split = nccl_split,
    .comm_free = nccl_comm_free,
    .agree = nccl_agree,
    .mem_alloc = nccl_mem_alloc,
    .mem_free = nccl_mem_free,
    .mem_upload = nccl_upload,
    .mem_download = nccl_download,
    .reduce_local = nccl_reduce_local,
    .copy_local = nccl_copy_local,
    .time = nccl_time,
};
