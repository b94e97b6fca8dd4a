/* fake_cuda.c: a host stand-in for the parts of the CUDA runtime and NCCL that the gpu backend
 * uses, so that common/gpu/p2p_nccl.c runs, one rank, on a machine without a GPU.
 *
 * It is a test double with the properties that matter to the backend's logic:
 *   - work is deferred: a copy, a memset, a kernel or an NCCL group queued on a
 *     stream happens only when the stream is synchronised or an event after it
 *     is polled, one operation per poll (so a missing synchronisation shows as
 *     wrong data, and polling loops really poll);
 *   - streams are independent: draining one never runs another's work, and the
 *     legacy default stream (0) is refused, as the backend must never use it;
 *   - NCCL with one rank: transfers to the rank itself match in posting order
 *     inside one group; a send or receive with no partner in its group never
 *     completes (as on a GPU, where it hangs), and collectives copy.
 * Device memory is host memory. Not thread safe (the backend uses one thread).
 */
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"

enum { COPY, SET, FREE_MEM, REDUCE, GROUP };

typedef struct xfer {
    int is_send, peer;
    void *buf;
    size_t bytes;
    ncclComm_t comm;
} xfer;

typedef struct op {
    int kind;
    void *dst;
    const void *src;
    size_t bytes;
    int value;
    size_t count;
    int dtype, redop;
    xfer *group;
    int ngroup;
} op;

typedef struct fake_stream {
    op *q;
    long head, tail, cap; /* q[head..tail) are queued; ops ever queued: tail */
} fake_stream;

struct CUevent_st {
    fake_stream *s;
    long seq; /* done once the stream has run this many ops */
};

struct ncclComm {
    int alive;
    ncclResult_t async;
};

static fake_stream *streams[64];
static int nstreams;
static char last_nccl[200];

static int devices(void)
{
    const char *v = getenv("COMMLAB_FAKE_GPUS");
    return v ? atoi(v) : 1;
}

/* --- running queued work ------------------------------------------------------------------ */

static int match_group(op *o)
{
    /* Within the group, the k-th send to self meets the k-th receive from self. */
    int ns = 0, nr = 0;
    for (int i = 0; i < o->ngroup; i++)
        o->group[i].is_send ? ns++ : nr++;
    if (ns != nr)
        return 0; /* unmatched: a GPU would wait forever */
    int si = 0, ri = 0;
    for (int k = 0; k < ns; k++) {
        while (!o->group[si].is_send)
            si++;
        while (o->group[ri].is_send)
            ri++;
        xfer *s = &o->group[si++], *r = &o->group[ri++];
        if (s->bytes != r->bytes) {
            s->comm->async = ncclInvalidUsage;
            snprintf(last_nccl, sizeof last_nccl, "a send of %zu bytes met a receive of %zu",
                     s->bytes, r->bytes);
            return 1;
        }
        memcpy(r->buf, s->buf, s->bytes);
    }
    return 1;
}

/* Run the oldest op of s; 0 when it cannot run (an unmatched transfer). */
static int step(fake_stream *s)
{
    op *o = &s->q[s->head % s->cap];
    switch (o->kind) {
    case COPY: memmove(o->dst, o->src, o->bytes); break;
    case SET: memset(o->dst, o->value, o->bytes); break;
    case FREE_MEM: free(o->dst); break;
    case REDUCE:
        cl_reduce_host(o->dst, o->src, o->count, (cl_dtype)o->dtype, (cl_op)o->redop);
        break;
    case GROUP:
        if (!match_group(o))
            return 0;
        free(o->group);
        break;
    }
    s->head++;
    return 1;
}

static void drain(fake_stream *s, long upto)
{
    while (s->head < upto && step(s))
        ;
}

static cudaError_t enqueue(cudaStream_t stream, op o)
{
    fake_stream *s = (fake_stream *)stream;
    if (!s) {
        fprintf(stderr, "fake CUDA: work on the legacy default stream\n");
        return cudaErrorInvalidResourceHandle;
    }
    if (s->tail - s->head == s->cap) {
        long cap = s->cap ? 2 * s->cap : 64;
        op *q = malloc((size_t)cap * sizeof *q);
        if (!q)
            return cudaErrorMemoryAllocation;
        for (long i = s->head; i < s->tail; i++)
            q[i % cap] = s->q[i % s->cap];
        free(s->q);
        s->q = q;
        s->cap = cap;
    }
    s->q[s->tail++ % s->cap] = o;
    return cudaSuccess;
}

/* --- the CUDA runtime ---------------------------------------------------------------------- */

const char *cudaGetErrorName(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    default: return "cudaErrorFake";
    }
}

const char *cudaGetErrorString(cudaError_t e) { return cudaGetErrorName(e); }

cudaError_t cudaGetDeviceCount(int *n)
{
    *n = devices();
    return *n > 0 ? cudaSuccess : cudaErrorNoDevice;
}

cudaError_t cudaSetDevice(int d)
{
    return d >= 0 && d < devices() ? cudaSuccess : cudaErrorInvalidDevice;
}

cudaError_t cudaGetDevice(int *d)
{
    *d = 0;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetPCIBusId(char *bus, int len, int d)
{
    snprintf(bus, (size_t)len, "00000000:%02X:00.0", 0x10 + d);
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int d)
{
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "fake GPU %d", d);
    p->major = 9;
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *v)
{
    *v = 0;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *v)
{
    *v = 0;
    return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
    (void)flags;
    fake_stream *f = calloc(1, sizeof *f);
    if (!f || nstreams == 64)
        return cudaErrorMemoryAllocation;
    streams[nstreams++] = f;
    *s = (cudaStream_t)f;
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    fake_stream *f = (fake_stream *)s;
    for (int i = 0; i < nstreams; i++)
        if (streams[i] == f)
            streams[i] = streams[--nstreams];
    free(f->q);
    free(f);
    return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags)
{
    (void)flags;
    *e = calloc(1, sizeof **e);
    return *e ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    free(e);
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    if (!s)
        return cudaErrorInvalidResourceHandle;
    e->s = (fake_stream *)s;
    e->seq = e->s->tail;
    return cudaSuccess;
}

/* One operation per poll: callers must really poll. */
cudaError_t cudaEventQuery(cudaEvent_t e)
{
    if (!e->s || e->s->head >= e->seq)
        return cudaSuccess;
    step(e->s);
    return e->s->head >= e->seq ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaGetLastError(void) { return cudaSuccess; }

cudaError_t cudaMalloc(void **p, size_t n)
{
    *p = malloc(n ? n : 1);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

/* cudaFree waits for the whole device. */
cudaError_t cudaFree(void *p)
{
    for (int i = 0; i < nstreams; i++)
        drain(streams[i], streams[i]->tail);
    free(p);
    return cudaSuccess;
}

cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t s)
{
    if (!s)
        return cudaErrorInvalidResourceHandle;
    return cudaMalloc(p, n);
}

cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
    return enqueue(s, (op){.kind = FREE_MEM, .dst = p});
}

cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s)
{
    return enqueue(s, (op){.kind = SET, .dst = p, .value = v, .bytes = n});
}

cudaError_t cudaMemcpyAsync(void *d, const void *src, size_t n, enum cudaMemcpyKind k,
                            cudaStream_t s)
{
    (void)k;
    return enqueue(s, (op){.kind = COPY, .dst = d, .src = src, .bytes = n});
}

/* The backend's reduce kernel (reduce_kernels.h), queued like a kernel. */
int cl_gpu_reduce_launch(void *inout, const void *in, size_t count, int dtype, int op_,
                         void *stream)
{
    if (dtype < 0 || dtype >= CL_DTYPE_COUNT || op_ < 0 || op_ >= CL_OP_COUNT)
        return cudaErrorInvalidValue;
    return enqueue(
        (cudaStream_t)stream,
        (op){
            .kind = REDUCE, .dst = inout, .src = in, .count = count, .dtype = dtype, .redop = op_});
}

/* --- NCCL, one rank ------------------------------------------------------------------------ */

static int depth;
static xfer *pending;
static int npending, cappending;
static cudaStream_t pending_stream;

const char *ncclGetErrorString(ncclResult_t r)
{
    switch (r) {
    case ncclSuccess: return "no error";
    case ncclInvalidArgument: return "invalid argument";
    case ncclInvalidUsage: return "invalid usage";
    default: return "fake NCCL error";
    }
}

const char *ncclGetLastError(ncclComm_t c)
{
    (void)c;
    return last_nccl;
}

ncclResult_t ncclGetVersion(int *v)
{
    *v = 0;
    return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    memset(id, 0, sizeof *id);
    return ncclSuccess;
}

static ncclResult_t new_comm(ncclComm_t *c)
{
    *c = calloc(1, sizeof **c);
    if (!*c)
        return ncclSystemError;
    (*c)->alive = 1;
    return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *c, int nranks, ncclUniqueId id, int rank)
{
    (void)id;
    if (nranks != 1 || rank != 0) {
        snprintf(last_nccl, sizeof last_nccl, "the fake NCCL has one rank");
        return ncclInvalidArgument;
    }
    return new_comm(c);
}

ncclResult_t ncclCommSplit(ncclComm_t c, int color, int key, ncclComm_t *out, ncclConfig_t *cfg)
{
    (void)key, (void)cfg;
    if (!c || !c->alive)
        return ncclInvalidArgument;
    *out = NULL;
    return color == NCCL_SPLIT_NOCOLOR ? ncclSuccess : new_comm(out);
}

ncclResult_t ncclCommDestroy(ncclComm_t c)
{
    if (!c || !c->alive)
        return ncclInvalidArgument;
    c->alive = 0;
    free(c);
    return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t c) { return ncclCommDestroy(c); }

ncclResult_t ncclCommGetAsyncError(ncclComm_t c, ncclResult_t *r)
{
    if (!c || !c->alive)
        return ncclInvalidArgument;
    *r = c->async;
    return ncclSuccess;
}

ncclResult_t ncclGroupStart(void)
{
    depth++;
    return ncclSuccess;
}

ncclResult_t ncclGroupEnd(void)
{
    if (depth == 0)
        return ncclInvalidUsage;
    if (--depth > 0 || npending == 0)
        return ncclSuccess;
    op o = {.kind = GROUP, .group = pending, .ngroup = npending};
    cudaStream_t s = pending_stream;
    pending = NULL;
    npending = cappending = 0;
    return enqueue(s, o) == cudaSuccess ? ncclSuccess : ncclUnhandledCudaError;
}

static ncclResult_t p2p(int is_send, const void *buf, size_t count, ncclDataType_t t, int peer,
                        ncclComm_t c, cudaStream_t s)
{
    static const size_t sizes[] = {
        [ncclInt8] = 1,   [ncclUint8] = 1,   [ncclInt32] = 4,   [ncclUint32] = 4, [ncclInt64] = 8,
        [ncclUint64] = 8, [ncclFloat16] = 2, [ncclFloat32] = 4, [ncclFloat64] = 8};
    if (!c || !c->alive || peer != 0 || !s || (npending && s != pending_stream)) {
        snprintf(last_nccl, sizeof last_nccl, "bad p2p call (peer %d, stream %p)", peer, (void *)s);
        return ncclInvalidArgument;
    }
    if (npending == cappending) {
        int cap = cappending ? 2 * cappending : 16;
        xfer *q = realloc(pending, (size_t)cap * sizeof *q);
        if (!q)
            return ncclSystemError;
        pending = q;
        cappending = cap;
    }
    pending[npending++] = (xfer){
        .is_send = is_send, .peer = peer, .buf = (void *)buf, .bytes = count * sizes[t], .comm = c};
    pending_stream = s;
    if (depth == 0) { /* a call outside a group is a group of its own */
        depth = 1;
        return ncclGroupEnd();
    }
    return ncclSuccess;
}

ncclResult_t ncclSend(const void *b, size_t n, ncclDataType_t t, int peer, ncclComm_t c,
                      cudaStream_t s)
{
    return p2p(1, b, n, t, peer, c, s);
}

ncclResult_t ncclRecv(void *b, size_t n, ncclDataType_t t, int peer, ncclComm_t c, cudaStream_t s)
{
    return p2p(0, b, n, t, peer, c, s);
}

static size_t type_size(ncclDataType_t t)
{
    return t == ncclInt8 || t == ncclUint8                         ? 1
           : t == ncclFloat16                                      ? 2
           : t == ncclInt64 || t == ncclUint64 || t == ncclFloat64 ? 8
                                                                   : 4;
}

static ncclResult_t copy(const void *s, void *r, size_t count, ncclDataType_t t, ncclComm_t c,
                         cudaStream_t st)
{
    if (!c || !c->alive || !st)
        return ncclInvalidArgument;
    if (s == r)
        return ncclSuccess;
    return enqueue(st, (op){.kind = COPY, .dst = r, .src = s, .bytes = count * type_size(t)}) ==
                   cudaSuccess
               ? ncclSuccess
               : ncclUnhandledCudaError;
}

ncclResult_t ncclAllReduce(const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op_,
                           ncclComm_t c, cudaStream_t st)
{
    (void)op_;
    return copy(s, r, n, t, c, st);
}

ncclResult_t ncclReduceScatter(const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op_,
                               ncclComm_t c, cudaStream_t st)
{
    (void)op_;
    return copy(s, r, n, t, c, st);
}

ncclResult_t ncclAllGather(const void *s, void *r, size_t n, ncclDataType_t t, ncclComm_t c,
                           cudaStream_t st)
{
    return copy(s, r, n, t, c, st);
}

ncclResult_t ncclBroadcast(const void *s, void *r, size_t n, ncclDataType_t t, int root,
                           ncclComm_t c, cudaStream_t st)
{
    return root == 0 ? copy(s, r, n, t, c, st) : ncclInvalidArgument;
}

ncclResult_t ncclReduce(const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op_,
                        int root, ncclComm_t c, cudaStream_t st)
{
    (void)op_;
    return root == 0 ? copy(s, r, n, t, c, st) : ncclInvalidArgument;
}
