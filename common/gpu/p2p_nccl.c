/* p2p_nccl.c: the "gpu" backend: one GPU per process, NCCL send/recv, two streams per rank.
 *
 * The processes come from boot.h (mpirun's, or this one alone in a build
 * without MPI). Before any NCCL call every rank agrees that it has a GPU of
 * its own (device selection below); rank 0's NCCL id goes to all with its
 * status, so no rank waits in ncclCommInitRank for one that gave up.
 *
 * Streams. Each rank has two non-blocking streams and never uses the legacy
 * default stream:
 *   net    NCCL: the posted transfers and the library's collectives;
 *   local  uploads, downloads, copies and the reduce kernels.
 * Every local operation has finished when its call returns (its stream is
 * synchronised), and a transfer's buffer is the caller's again only once the
 * transfer is waited for; so host order is stream order: an upload is in the
 * buffer before a later send reads it, and a harness's check of a buffer
 * sees the transfer that wrote it. Local work never waits behind a receive
 * whose sender is still to come, as it would on one stream.
 *
 * Transfers. Posts are kept until a wait or a test needs one of them; then
 * the posts of that communicator up to it (in posting order, and every
 * transfer to or from the rank itself, which NCCL wants in one group) go to
 * NCCL as one ncclGroupStart/End, and an event marks the end of that group
 * for each request. Later posts stay queued, so a receive posted early cannot
 * hold the stream ahead of a send this rank must make first.
 *
 * Waits. Every wait polls its event, NCCL's asynchronous error and the run's
 * deadline: a peer that died or never posts ends in a failure with a reason,
 * not a hang. A rank that fails ends the whole job (ncclCommAbort, then the
 * launcher's abort), so the others do not wait for it until the deadline.
 */
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot.h"
#include "buffers.h"
#include "deadline.h"
#include "gpu.h"
#include "gpu_check.h"
#include "launch.h"
#include "p2p_backend.h"
#include "reduce_kernels.h"

typedef struct nccl_comm {
    cl_comm base; /* first: the public part */
    cl_boot *boot;
    ncclComm_t nccl;
} nccl_comm;

/* This process's rank: its device and streams, shared by the world and its splits. */
static struct {
    int device;
    cudaStream_t net, local;
    cudaEvent_t local_done;
} R = {.device = -1};

enum { FREE, QUEUED, IN_STREAM, FAILED };

typedef struct request {
    int state;
    nccl_comm *comm;
    cudaEvent_t ev; /* created on first use, reused */
} request;

typedef struct post {
    nccl_comm *comm;
    int is_send, peer, id;
    void *dev;
    size_t bytes;
} post;

/* Posts not yet given to NCCL (in posting order), and the requests by id - 1. */
static struct {
    post *p;
    int n, cap;
    request *r;
    int nr, capr;
} G;

static const cl_backend_ops nccl_ops;

static nccl_comm *as_nccl(const cl_comm *c) { return (nccl_comm *)c; }

static cl_result not_gpu(const cl_comm *c)
{
    if (c && c->ops == &nccl_ops)
        return CL_OK;
    cl_set_error("not a communicator of the gpu backend (%s)", c ? c->ops->name : "none");
    return CL_ERR_UNSUPPORTED;
}

/* The device pointer behind [p, p + bytes) of a buffer of this rank. */
static cl_result dev(const cl_comm *c, const void *p, size_t bytes, void **out)
{
    const cl_buffer *b = cl_buffers_find(p, bytes, c->world_rank, "gpu");
    if (!b)
        return CL_ERR_INVALID;
    *out = (char *)b->impl + ((uintptr_t)p - b->base);
    return CL_OK;
}

/* Wait for ev within the deadline, watching comm's asynchronous NCCL errors. */
static cl_result sync_event(const nccl_comm *g, cudaEvent_t ev, const char *what)
{
    for (unsigned spins = 0;; spins++) {
        cudaError_t e = cudaEventQuery(ev);
        if (e == cudaSuccess)
            return CL_OK;
        if (e != cudaErrorNotReady) {
            cl_set_error("%s: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
            return cl_cuda_result(e);
        }
        ncclResult_t async = ncclSuccess;
        if (g && g->nccl && spins % 64 == 0)
            CL_NCCL_CHECK(ncclCommGetAsyncError(g->nccl, &async));
        if (async != ncclSuccess && async != ncclInProgress) {
            const char *why = ncclGetLastError(g->nccl);
            cl_set_error("%s: NCCL: %s%s%s", what, ncclGetErrorString(async),
                         why && *why ? ": " : "", why ? why : "");
            return CL_ERR_BACKEND;
        }
        if (cl_deadline_left() <= 0) {
            cl_set_error("%s: the GPU did not finish before the deadline (a transfer whose "
                         "peer never posts its side?)",
                         what);
            return CL_ERR_TIMEOUT;
        }
        if (spins > 1000)
            usleep(50);
    }
}

/* Everything queued on a stream so far has finished (within the deadline). */
static cl_result sync_stream(const nccl_comm *g, cudaStream_t s, const char *what)
{
    cudaEvent_t ev = R.local_done;
    cudaError_t e = cudaEventRecord(ev, s);
    if (e != cudaSuccess) {
        cl_set_error("%s: cudaEventRecord: %s", what, cudaGetErrorName(e));
        return cl_cuda_result(e);
    }
    return sync_event(g, ev, what);
}

/* --- transfers ----------------------------------------------------------------------------- */

static int queued_index(int id)
{
    for (int i = 0; i < G.n; i++)
        if (G.p[i].id == id)
            return i;
    return -1;
}

/* Give NCCL, as one group, g's queued posts up to index upto (-1: all of them)
 * and g's transfers with the rank itself; record each one's event after it. */
static cl_result flush(nccl_comm *g, int upto)
{
    int me = g->base.rank, n = 0, keep = 0;
    for (int i = 0; i < G.n; i++)
        if (G.p[i].comm == g && (upto < 0 || i <= upto || G.p[i].peer == me))
            n++;
    if (n == 0)
        return CL_OK;
    post *sel = malloc((size_t)n * sizeof *sel);
    if (!sel)
        return CL_ERR_NOMEM;
    n = 0;
    for (int i = 0; i < G.n; i++) {
        if (G.p[i].comm == g && (upto < 0 || i <= upto || G.p[i].peer == me))
            sel[n++] = G.p[i];
        else
            G.p[keep++] = G.p[i];
    }
    G.n = keep;
    ncclResult_t r = ncclGroupStart();
    for (int i = 0; i < n && r == ncclSuccess; i++) {
        post q = sel[i];
        r = q.is_send ? ncclSend(q.dev, q.bytes, ncclInt8, q.peer, g->nccl, R.net)
                      : ncclRecv(q.dev, q.bytes, ncclInt8, q.peer, g->nccl, R.net);
    }
    ncclResult_t end = ncclGroupEnd();
    cl_result rc = CL_OK;
    if (r == ncclSuccess)
        r = end;
    if (r != ncclSuccess) {
        const char *why = ncclGetLastError(g->nccl);
        cl_set_error("ncclSend/ncclRecv of a group of %d transfers: %s%s%s", n,
                     ncclGetErrorString(r), why && *why ? ": " : "", why ? why : "");
        rc = CL_ERR_BACKEND;
    }
    for (int i = 0; i < n; i++) {
        request *q = &G.r[sel[i].id - 1];
        cudaError_t e = rc == CL_OK ? cudaEventRecord(q->ev, R.net) : cudaSuccess;
        if (rc == CL_OK && e != cudaSuccess) {
            cl_set_error("cudaEventRecord after a group of transfers: %s", cudaGetErrorName(e));
            rc = cl_cuda_result(e);
        }
        q->state = rc == CL_OK ? IN_STREAM : FAILED;
    }
    free(sel);
    return rc;
}

static cl_result new_request(nccl_comm *g, int *id)
{
    int k = -1;
    for (int i = 0; i < G.nr && k < 0; i++)
        if (G.r[i].state == FREE)
            k = i;
    if (k < 0) {
        if (G.nr == G.capr) {
            int cap = G.capr ? 2 * G.capr : 64;
            request *q = realloc(G.r, (size_t)cap * sizeof *q);
            if (!q)
                return CL_ERR_NOMEM;
            G.r = q;
            G.capr = cap;
        }
        G.r[G.nr] = (request){.state = FREE};
        k = G.nr++;
    }
    if (!G.r[k].ev)
        CL_CUDA_CHECK(cudaEventCreateWithFlags(&G.r[k].ev, cudaEventDisableTiming));
    G.r[k].comm = g;
    *id = k + 1;
    return CL_OK;
}

static cl_result post_one(cl_comm *c, int is_send, const void *buf, size_t bytes, int peer,
                          int *req)
{
    void *d;
    CL_CHECK(dev(c, buf, bytes, &d));
    if (G.n == G.cap) {
        int cap = G.cap ? 2 * G.cap : 32;
        post *q = realloc(G.p, (size_t)cap * sizeof *q);
        if (!q)
            return CL_ERR_NOMEM;
        G.p = q;
        G.cap = cap;
    }
    int id;
    CL_CHECK(new_request(as_nccl(c), &id));
    G.r[id - 1].state = QUEUED;
    G.p[G.n++] = (post){
        .comm = as_nccl(c), .is_send = is_send, .peer = peer, .id = id, .dev = d, .bytes = bytes};
    *req = id;
    return CL_OK;
}

static cl_result nccl_isend(cl_comm *c, const void *buf, size_t bytes, int peer, int *req)
{
    return post_one(c, 1, buf, bytes, peer, req);
}

static cl_result nccl_irecv(cl_comm *c, void *buf, size_t bytes, int peer, int *req)
{
    return post_one(c, 0, buf, bytes, peer, req);
}

static request *request_of(int id)
{
    if (id < 1 || id > G.nr || G.r[id - 1].state == FREE) {
        cl_set_error("request %d is not in flight", id);
        return NULL;
    }
    return &G.r[id - 1];
}

/* Every queued request among ids goes to NCCL: one group per communicator,
 * up to the latest of them, so that a rank's sends and receives of one wait
 * run together. */
static cl_result flush_for(int n, const int *ids)
{
    for (;;) {
        int best = -1;
        for (int i = 0; i < n; i++) {
            int k = queued_index(ids[i]);
            if (k > best)
                best = k;
        }
        if (best < 0)
            return CL_OK;
        CL_CHECK(flush(G.p[best].comm, best));
    }
}

static cl_result nccl_wait(cl_comm *c, int n, const int *reqs)
{
    (void)c;
    for (int i = 0; i < n; i++)
        if (!request_of(reqs[i]))
            return CL_ERR_INVALID;
    CL_CHECK(flush_for(n, reqs));
    for (int i = 0; i < n; i++) {
        request *q = &G.r[reqs[i] - 1];
        if (q->state == FAILED) {
            q->state = FREE;
            cl_set_error("request %d: its transfer could not be given to NCCL", reqs[i]);
            return CL_ERR_BACKEND;
        }
        CL_CHECK(sync_event(q->comm, q->ev, "waiting for a transfer"));
        q->state = FREE;
    }
    return CL_OK;
}

static cl_result nccl_test(cl_comm *c, int req, int *done)
{
    (void)c;
    request *q = request_of(req);
    if (!q)
        return CL_ERR_INVALID;
    CL_CHECK(flush_for(1, &req));
    if (q->state == FAILED) {
        q->state = FREE;
        cl_set_error("request %d: its transfer could not be given to NCCL", req);
        return CL_ERR_BACKEND;
    }
    cudaError_t e = cudaEventQuery(q->ev);
    if (e != cudaSuccess && e != cudaErrorNotReady)
        CL_CUDA_CHECK(e);
    ncclResult_t async = ncclSuccess;
    CL_NCCL_CHECK(ncclCommGetAsyncError(q->comm->nccl, &async));
    if (async != ncclSuccess && async != ncclInProgress) {
        cl_set_error("NCCL: %s", ncclGetErrorString(async));
        return CL_ERR_BACKEND;
    }
    *done = e == cudaSuccess;
    if (*done)
        q->state = FREE;
    return CL_OK;
}

static cl_result nccl_barrier(cl_comm *c) { return cl_boot_barrier(as_nccl(c)->boot); }

/* --- communicators ---------------------------------------------------------------------------- */

static cl_result nccl_split(cl_comm *c, int color, int key, cl_comm **out)
{
    nccl_comm *g = as_nccl(c);
    cl_boot *nb = NULL;
    int *world = NULL;
    CL_CHECK(cl_boot_split(g->boot, color, key, &nb, &world));
    /* Every rank of c calls ncclCommSplit, the ones that join no group too. */
    ncclComm_t nc = NULL;
    ncclResult_t r = ncclCommSplit(g->nccl, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &nc, NULL);
    if (r != ncclSuccess) {
        const char *why = ncclGetLastError(g->nccl);
        cl_set_error("ncclCommSplit: %s%s%s", ncclGetErrorString(r), why && *why ? ": " : "",
                     why ? why : "");
        cl_boot_free(nb);
        free(world);
        return CL_ERR_BACKEND;
    }
    if (!nb)
        return CL_OK;
    nccl_comm *n = calloc(1, sizeof *n);
    if (!n) {
        ncclCommDestroy(nc);
        cl_boot_free(nb);
        free(world);
        return CL_ERR_NOMEM;
    }
    cl_comm_init(&n->base, &nccl_ops, cl_boot_rank(nb), cl_boot_size(nb), c->world_rank);
    n->base.world_of = world;
    n->boot = nb;
    n->nccl = nc;
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
    for (int i = 0; i < G.nr; i++)
        if (G.r[i].state != FREE && G.r[i].comm == g) {
            cl_set_error("cl_comm_free: request %d of this communicator is still in flight "
                         "(wait for it first)",
                         i + 1);
            return CL_ERR_INVALID;
        }
    CL_CHECK(sync_stream(g, R.net, "freeing a communicator"));
    CL_NCCL_CHECK(ncclCommDestroy(g->nccl));
    cl_boot_free(g->boot);
    cl_comm_fini(c);
    free(g);
    return CL_OK;
}

static cl_result nccl_agree(cl_comm *c, cl_op op, int64_t *v, int n)
{
    return cl_boot_agree(as_nccl(c)->boot, op, v, n);
}

/* --- buffers and local work: the local stream, finished before returning ---------------------- */

static cl_result local_done(const char *what) { return sync_stream(NULL, R.local, what); }

static cl_result nccl_mem_alloc(cl_comm *c, size_t bytes, void **out)
{
    void *d = NULL;
    CL_CUDA_CHECK(cudaMalloc(&d, bytes ? bytes : 1));
    uintptr_t h = cl_handles_take(bytes);
    cl_result rc = CL_OK;
    if (!h) {
        cl_set_error("out of buffer handles");
        rc = CL_ERR_NOMEM;
    }
    /* Touch it, as host buffers are pre-touched. */
    cudaError_t e = rc == CL_OK ? cudaMemsetAsync(d, 0, bytes ? bytes : 1, R.local) : cudaSuccess;
    if (e != cudaSuccess) {
        cl_set_error("cudaMemsetAsync of a new buffer: %s", cudaGetErrorName(e));
        rc = cl_cuda_result(e);
    }
    if (rc == CL_OK)
        rc = local_done("clearing a new buffer");
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
    const cl_buffer *b = cl_buffers_find(p, 0, c->world_rank, "cl_mem_free");
    if (!b)
        return CL_ERR_INVALID;
    for (int i = 0; i < G.n; i++)
        if ((uintptr_t)G.p[i].dev >= (uintptr_t)b->impl &&
            (uintptr_t)G.p[i].dev < (uintptr_t)b->impl + (b->bytes ? b->bytes : 1)) {
            cl_set_error("cl_mem_free: a transfer of this buffer is still posted (wait for it "
                         "first)");
            return CL_ERR_INVALID;
        }
    /* cudaFree waits for the whole device: first let the transfers finish, within the deadline. */
    CL_CHECK(sync_stream(as_nccl(c), R.net, "freeing a buffer"));
    cl_buffer gone;
    CL_CHECK(cl_buffers_remove((uintptr_t)p, &gone));
    CL_CUDA_CHECK(cudaFree(gone.impl));
    return CL_OK;
}

static cl_result nccl_upload(cl_comm *c, void *dst, const void *src, size_t bytes)
{
    void *d;
    CL_CHECK(dev(c, dst, bytes, &d));
    CL_CUDA_CHECK(cudaMemcpyAsync(d, src, bytes, cudaMemcpyHostToDevice, R.local));
    return local_done("cl_mem_upload");
}

static cl_result nccl_download(cl_comm *c, void *dst, const void *src, size_t bytes)
{
    void *d;
    CL_CHECK(dev(c, src, bytes, &d));
    CL_CUDA_CHECK(cudaMemcpyAsync(dst, d, bytes, cudaMemcpyDeviceToHost, R.local));
    return local_done("cl_mem_download");
}

/* memmove semantics, as on "cpu": overlapping ranges go through a temporary. */
static cl_result nccl_copy_local(cl_comm *c, void *dst, const void *src, size_t bytes)
{
    void *dd, *ds;
    CL_CHECK(dev(c, dst, bytes, &dd));
    CL_CHECK(dev(c, src, bytes, &ds));
    const char *a = ds, *b = dd;
    if (a < b + bytes && b < a + bytes) {
        void *tmp = NULL;
        /* A stream-ordered temporary; where memory pools are missing, a plain one. */
        int pooled = cudaMallocAsync(&tmp, bytes, R.local) == cudaSuccess;
        if (!pooled) {
            cudaGetLastError(); /* clear the failed attempt */
            CL_CUDA_CHECK(cudaMalloc(&tmp, bytes));
        }
        cudaError_t e = cudaMemcpyAsync(tmp, ds, bytes, cudaMemcpyDeviceToDevice, R.local);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(dd, tmp, bytes, cudaMemcpyDeviceToDevice, R.local);
        if (pooled) {
            cudaError_t f = cudaFreeAsync(tmp, R.local);
            CL_CUDA_CHECK(e != cudaSuccess ? e : f);
            return local_done("cl_copy_local");
        }
        cl_result rc = e == cudaSuccess ? local_done("cl_copy_local") : cl_cuda_result(e);
        if (e != cudaSuccess)
            cl_set_error("cl_copy_local: %s", cudaGetErrorName(e));
        cudaFree(tmp);
        return rc;
    } else {
        CL_CUDA_CHECK(cudaMemcpyAsync(dd, ds, bytes, cudaMemcpyDeviceToDevice, R.local));
    }
    return local_done("cl_copy_local");
}

static cl_result nccl_reduce_local(cl_comm *c, void *inout, const void *in, size_t count,
                                   cl_dtype t, cl_op op)
{
    void *dio, *din;
    size_t es = cl_dtype_size(t);
    CL_CHECK(dev(c, inout, count * es, &dio));
    CL_CHECK(dev(c, in, count * es, &din));
    CL_CUDA_CHECK((cudaError_t)cl_gpu_reduce_launch(dio, din, count, (int)t, (int)op, R.local));
    return local_done("cl_reduce_local");
}

/* The wall clock once this rank's queued GPU work has finished. It cannot
 * fail: a stream that does not finish in time shows in the next operation. */
static double nccl_time(cl_comm *c)
{
    if (sync_stream(as_nccl(c), R.net, "reading the clock") != CL_OK)
        cl_report_failure(__FILE__, __LINE__, "cl_comm_time", CL_ERR_TIMEOUT);
    return cl_boot_time();
}

/* --- NCCL's collectives: the baselines --------------------------------------------------- */

static cl_result nccl_types(cl_dtype t, cl_op op, ncclDataType_t *nt, ncclRedOp_t *no)
{
    /* Indexed by cl_dtype and cl_op (dtype.h): int32, int64, float, double; sum, prod, max, min. */
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

static cl_result alltoall(nccl_comm *g, cl_coll_kind kind, const cl_coll_args *a, ncclDataType_t nt)
{
    size_t es = cl_dtype_size(a->dtype), p = (size_t)g->base.size, b = a->count / p;
    int vector = kind == CL_COLL_ALLTOALLV;
    void *sd[p ? p : 1], *rd[p ? p : 1];
    for (size_t j = 0; j < p; j++) {
        size_t so = vector ? a->sdispls[j] : j * b, sl = vector ? a->sendcounts[j] : b;
        size_t ro = vector ? a->rdispls[j] : j * b, rl = vector ? a->recvcounts[j] : b;
        CL_CHECK(dev(&g->base, (const char *)a->sendbuf + so * es, sl * es, &sd[j]));
        CL_CHECK(dev(&g->base, (char *)a->recvbuf + ro * es, rl * es, &rd[j]));
    }
    ncclResult_t r = ncclGroupStart();
    for (size_t j = 0; j < p && r == ncclSuccess; j++) {
        size_t sl = vector ? a->sendcounts[j] : b, rl = vector ? a->recvcounts[j] : b;
        r = ncclSend(sd[j], sl, nt, (int)j, g->nccl, R.net);
        if (r == ncclSuccess)
            r = ncclRecv(rd[j], rl, nt, (int)j, g->nccl, R.net);
    }
    ncclResult_t end = ncclGroupEnd();
    CL_NCCL_CHECK(r != ncclSuccess ? r : end);
    return CL_OK;
}

cl_result cl_nccl_library(cl_comm *c, cl_coll_kind kind, const cl_coll_args *a)
{
    CL_CHECK(not_gpu(c));
    nccl_comm *g = as_nccl(c);
    ncclDataType_t nt;
    ncclRedOp_t no;
    CL_CHECK(nccl_types(a->dtype, cl_coll_reduces(kind) ? a->op : CL_SUM, &nt, &no));
    size_t es = cl_dtype_size(a->dtype), p = (size_t)c->size, n = a->count;
    void *s = NULL, *r = NULL;
    size_t sbytes = kind == CL_COLL_ALLGATHER ? n / p * es : n * es;
    size_t rbytes = kind == CL_COLL_REDUCESCATTER ? n / p * es : n * es;
    if ((kind == CL_COLL_REDUCESCATTER || kind == CL_COLL_ALLGATHER || kind == CL_COLL_ALLTOALL) &&
        n % p) {
        cl_set_error("NCCL's %s needs a count that divides evenly over the ranks",
                     cl_coll_name(kind));
        return CL_ERR_UNSUPPORTED;
    }
    if (kind != CL_COLL_ALLTOALL && kind != CL_COLL_ALLTOALLV) {
        int reads_send = kind != CL_COLL_BROADCAST || c->rank == a->root;
        int writes_recv = kind != CL_COLL_REDUCE || c->rank == a->root;
        if (reads_send)
            CL_CHECK(dev(c, a->sendbuf, sbytes, &s));
        if (writes_recv)
            CL_CHECK(dev(c, a->recvbuf, rbytes, &r));
    }
    CL_CHECK(flush(g, -1)); /* NCCL sees this rank's operations in the order they were made */
    switch (kind) {
    case CL_COLL_ALLREDUCE: CL_NCCL_CHECK(ncclAllReduce(s, r, n, nt, no, g->nccl, R.net)); break;
    case CL_COLL_REDUCESCATTER:
        CL_NCCL_CHECK(ncclReduceScatter(s, r, n / p, nt, no, g->nccl, R.net));
        break;
    case CL_COLL_ALLGATHER: CL_NCCL_CHECK(ncclAllGather(s, r, n / p, nt, g->nccl, R.net)); break;
    case CL_COLL_BROADCAST:
        CL_NCCL_CHECK(ncclBroadcast(s, r, n, nt, a->root, g->nccl, R.net));
        break;
    case CL_COLL_REDUCE: CL_NCCL_CHECK(ncclReduce(s, r, n, nt, no, a->root, g->nccl, R.net)); break;
    case CL_COLL_ALLTOALL:
    case CL_COLL_ALLTOALLV: CL_CHECK(alltoall(g, kind, a, nt)); break;
    default: cl_set_error("no NCCL collective for kind %d", (int)kind); return CL_ERR_INVALID;
    }
    return sync_stream(g, R.net, cl_coll_name(kind));
}

/* --- what labs may use (gpu.h) -------------------------------------------------------------- */

cl_result cl_gpu_device(const cl_comm *c, int *device)
{
    CL_CHECK(not_gpu(c));
    *device = R.device;
    return CL_OK;
}

cl_result cl_gpu_stream(const cl_comm *c, void **stream)
{
    CL_CHECK(not_gpu(c));
    *stream = R.net;
    return CL_OK;
}

cl_result cl_gpu_nccl(const cl_comm *c, void **nccl_comm)
{
    CL_CHECK(not_gpu(c));
    *nccl_comm = as_nccl(c)->nccl;
    return CL_OK;
}

cl_result cl_gpu_pointer(const cl_comm *c, const void *buf, size_t bytes, void **d)
{
    CL_CHECK(not_gpu(c));
    return dev(c, buf, bytes, d);
}

cl_result cl_gpu_sync(cl_comm *c)
{
    CL_CHECK(not_gpu(c));
    return sync_stream(as_nccl(c), R.net, "cl_gpu_sync");
}

/* --- launch ------------------------------------------------------------------------------- */

#define BUS_ID_BYTES 32

/* This process's GPU: its index among the processes of its node, each on a
 * GPU of its own. With fewer visible GPUs than processes (a launcher that
 * gives each process its own CUDA_VISIBLE_DEVICES) the choice wraps, and the
 * PCI bus ids decide whether two processes would share one. */
static cl_result select_device(cl_boot *world, int *device)
{
    int ngpus = 0;
    cudaError_t e = cudaGetDeviceCount(&ngpus);
    if (e != cudaSuccess || ngpus <= 0) {
        cl_set_error("no usable GPU (%s)", e != cudaSuccess ? cudaGetErrorName(e) : "0 devices");
        return CL_ERR_UNSUPPORTED;
    }
    int local_rank, local_size;
    char one = 0, *ones = NULL;
    CL_CHECK(cl_boot_node(world, &one, 0, ones, &local_rank, &local_size));
    *device = local_rank % ngpus;
    char mine[BUS_ID_BYTES] = "", *all = calloc((size_t)local_size, BUS_ID_BYTES);
    if (!all)
        return CL_ERR_NOMEM;
    e = cudaDeviceGetPCIBusId(mine, BUS_ID_BYTES, *device);
    if (e != cudaSuccess) {
        free(all);
        cl_set_error("cudaDeviceGetPCIBusId(%d): %s", *device, cudaGetErrorName(e));
        return cl_cuda_result(e);
    }
    cl_result rc = cl_boot_node(world, mine, BUS_ID_BYTES, all, &local_rank, &local_size);
    for (int i = 0; rc == CL_OK && i < local_size; i++)
        if (i != local_rank && strncmp(all + (size_t)i * BUS_ID_BYTES, mine, BUS_ID_BYTES) == 0) {
            cl_set_error("needs a GPU per process: %d processes on this node see %d GPU(s), and "
                         "node ranks %d and %d would share %s",
                         local_size, ngpus, i < local_rank ? i : local_rank,
                         i < local_rank ? local_rank : i, mine);
            rc = CL_ERR_UNSUPPORTED;
        }
    free(all);
    return rc;
}

static cl_result open_device(cl_boot *world)
{
    CL_CHECK(select_device(world, &R.device));
    CL_CUDA_CHECK(cudaSetDevice(R.device));
    CL_CUDA_CHECK(cudaStreamCreateWithFlags(&R.net, cudaStreamNonBlocking));
    CL_CUDA_CHECK(cudaStreamCreateWithFlags(&R.local, cudaStreamNonBlocking));
    CL_CUDA_CHECK(cudaEventCreateWithFlags(&R.local_done, cudaEventDisableTiming));
    return CL_OK;
}

/* Every rank learns whether all could go on; if not, all give the reason of
 * the first rank that could not, and its result. */
static cl_result agree_all(cl_boot *world, cl_result mine)
{
    int rank = cl_boot_rank(world), size = cl_boot_size(world);
    int64_t first = mine == CL_OK ? size : rank;
    CL_CHECK(cl_boot_agree(world, CL_MIN, &first, 1));
    if (first == size)
        return CL_OK;
    struct {
        int64_t rc;
        char why[300];
    } msg = {.rc = mine};
    snprintf(msg.why, sizeof msg.why, "%s", cl_last_error());
    CL_CHECK(cl_boot_bcast(world, &msg, sizeof msg, (int)first));
    if (first == rank || size == 1)
        cl_set_error("%s", msg.why);
    else
        cl_set_error("rank %d: %s", (int)first, msg.why);
    return (cl_result)msg.rc;
}

static cl_result init_nccl(nccl_comm *g)
{
    int rank = g->base.rank, size = g->base.size;
    struct {
        int64_t rc;
        char why[200];
        ncclUniqueId id;
    } msg;
    memset(&msg, 0, sizeof msg);
    if (rank == 0) {
        ncclResult_t r = ncclGetUniqueId(&msg.id);
        if (r != ncclSuccess) {
            msg.rc = CL_ERR_BACKEND;
            snprintf(msg.why, sizeof msg.why, "ncclGetUniqueId: %s: %s", ncclGetErrorString(r),
                     ncclGetLastError(NULL));
        }
    }
    CL_CHECK(cl_boot_bcast(g->boot, &msg, sizeof msg, 0));
    if (msg.rc != CL_OK) {
        cl_set_error("%s", msg.why);
        return (cl_result)msg.rc;
    }
    CL_NCCL_CHECK(ncclCommInitRank(&g->nccl, size, msg.id, rank));
    return CL_OK;
}

static void close_world(nccl_comm *g)
{
    if (g->nccl) {
        if (sync_stream(g, R.net, "closing") != CL_OK)
            ncclCommAbort(g->nccl);
        else
            ncclCommDestroy(g->nccl);
    }
    if (R.local_done)
        cudaEventDestroy(R.local_done);
    for (int i = 0; i < G.nr; i++)
        if (G.r[i].ev)
            cudaEventDestroy(G.r[i].ev);
    if (R.net)
        cudaStreamDestroy(R.net);
    if (R.local)
        cudaStreamDestroy(R.local);
    free(G.p);
    free(G.r);
    memset(&G, 0, sizeof G);
    cl_boot_free(g->boot);
    cl_comm_fini(&g->base);
    free(g);
}

cl_result cl_nccl_launch(const cl_launch_opts *opts, cl_rank_body body, void *arg)
{
    /* Device numbers as nvidia-smi shows them, before the first CUDA call. */
    setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
    cl_boot *world = NULL;
    CL_CHECK(cl_boot_start(opts->argc, opts->argv, &world));
    nccl_comm *g = calloc(1, sizeof *g);
    if (!g) {
        cl_boot_free(world);
        cl_boot_finish();
        return CL_ERR_NOMEM;
    }
    int rank = cl_boot_rank(world), size = cl_boot_size(world);
    g->boot = world;
    cl_comm_init(&g->base, &nccl_ops, rank, size, rank);

    /* Every rank has a GPU of its own, or none goes on: a rank that is missing
     * would leave the others blocked in ncclCommInitRank. */
    cl_result rc = agree_all(world, open_device(world));
    int started = rc == CL_OK;
    if (rc == CL_OK)
        rc = init_nccl(g);
    if (rc == CL_OK) {
        char doing[96];
        snprintf(doing, sizeof doing, "rank %d ran on GPU %d", rank, R.device);
        cl_deadline_doing(doing);
        rc = body(&g->base, arg);
    }
    /* A rank that failed after the agreement ends the job: its peers may wait
     * for it inside NCCL, where only the launcher can stop them. */
    if (rc != CL_OK && size > 1 && started) {
        /* Nothing collective from here on: a peer may never come. */
        cl_report_failure(__FILE__, __LINE__, "this rank", rc);
        if (g->nccl)
            ncclCommAbort(g->nccl);
        cl_boot_abort(cl_exit_status(rc));
    }
    close_world(g);
    cl_boot_finish();
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
