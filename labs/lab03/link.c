/* link.c: lab 03's transports: copies through POSIX shared memory with flag hand-over
 * (cpu), cudaMemcpyPeerAsync between GPUs (gpu), and the record of what was done. */
#include "link.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shm.h"

#ifdef CL_HAVE_CUDA
#include <cuda_runtime.h>

#include "gpu/gpu_check.h"
#endif

#define LINE 64

/* Hand-over flags of the ordered pair (src -> dst), each on its own cache line. */
typedef struct pair_flags {
    _Alignas(LINE) _Atomic uint64_t seq; /* written by src: message seq is in dst's window */
    _Alignas(LINE) _Atomic uint64_t ack; /* written by dst: message seq was read */
} pair_flags;

struct lab03_link {
    int gpu;       /* 0: shared memory between ranks, 1: GPUs of this process */
    int rank, n;
    size_t max_bytes;
    long long bad; /* operations whose data arrived wrong */
    /* cpu */
    cl_comm *comm;
    cl_shm shm;
    pair_flags *flags;      /* n x n, [src * n + dst] */
    unsigned char *windows; /* n windows of win_stride bytes: rank r's is written by its peers */
    size_t win_stride;
    unsigned char *src;     /* private, max_bytes, the pattern of this rank */
    uint64_t *seq;          /* n x n local message counters, [src * n + dst] */
    int check_from;         /* the window's last writer, -1 if none */
    int check_dst;          /* gpu: the device written last */
    size_t check_bytes;
    /* gpu */
    void **dsrc, **ddst;
    void **streams;
    /* the trace */
    lab03_record *rec;
    int nrec, caprec;
    lab03_record cur;
};

static unsigned char pattern(int src, size_t k)
{
    return (unsigned char)(k * 7 + (size_t)src * 31 + 1);
}

/* --- the trace ------------------------------------------------------------------------ */

static void trace_close(lab03_link *l)
{
    if (l->cur.ops > 0) {
        if (l->nrec == l->caprec) {
            int cap = l->caprec ? 2 * l->caprec : 64;
            lab03_record *r = realloc(l->rec, (size_t)cap * sizeof *r);
            if (!r)
                return; /* the record is lost; the grader then reports a missing pair */
            l->rec = r;
            l->caprec = cap;
        }
        l->rec[l->nrec++] = l->cur;
    }
    memset(&l->cur, 0, sizeof l->cur);
}

static void trace_op(lab03_link *l, lab03_kind kind, int i, int j, size_t bytes)
{
    lab03_record *c = &l->cur;
    if (c->ops == 0) {
        c->kind = (int)kind, c->i = i, c->j = j, c->bytes = (long long)bytes;
    } else if (c->kind != (int)kind || c->i != i || c->j != j || c->bytes != (long long)bytes) {
        c->mixed = 1;
    }
    c->ops++;
}

double lab03_now(lab03_link *l)
{
    double t = cl_wtime();
    lab03_record *c = &l->cur;
    if (c->nt < LAB03_MAX_T) {
        c->t_ops[c->nt] = c->ops;
        c->t[c->nt++] = t;
    } else {
        c->t_overflow = 1;
    }
    return t;
}

const lab03_record *lab03_link_records(const lab03_link *l, int *n)
{
    *n = l->nrec;
    return l->rec;
}

void lab03_link_clear(lab03_link *l)
{
    l->nrec = 0;
    memset(&l->cur, 0, sizeof l->cur);
}

int lab03_link_rank(const lab03_link *l) { return l->rank; }
long long lab03_link_bad(const lab03_link *l) { return l->bad; }
int lab03_size(const lab03_link *l) { return l->n; }

bool lab03_involves(const lab03_link *l, int i, int j)
{
    return l->gpu || l->rank == i || l->rank == j;
}

bool lab03_times(const lab03_link *l, int i) { return l->gpu || l->rank == i; }

/* --- cpu: shared memory ----------------------------------------------------------------- */

static void backoff(unsigned *idle)
{
    if (++*idle < 64) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        return;
    }
    *idle = 32;
    sched_yield(); /* ranks may outnumber cores */
}

static void wait_for(_Atomic uint64_t *flag, uint64_t want)
{
    unsigned idle = 0;
    while (atomic_load_explicit(flag, memory_order_acquire) != want)
        backoff(&idle);
}

static unsigned char *window(lab03_link *l, int r)
{
    return l->windows + (size_t)r * l->win_stride;
}

/* Stamp message s into the first and last 8 bytes of our data, copy it into dst's
 * window and raise the flag. */
static void put(lab03_link *l, int dst, size_t bytes, uint64_t s)
{
    if (bytes >= 16) {
        memcpy(l->src, &s, 8);
        memcpy(l->src + bytes - 8, &s, 8);
    } else if (bytes > 0) {
        l->src[0] = (unsigned char)s;
    }
    memcpy(window(l, dst), l->src, bytes);
    atomic_store_explicit(&l->flags[l->rank * l->n + dst].seq, s, memory_order_release);
}

/* Wait for message s from src, check its stamps, remember it for the full check. */
static void take(lab03_link *l, int src, size_t bytes, uint64_t s)
{
    wait_for(&l->flags[src * l->n + l->rank].seq, s);
    const unsigned char *w = window(l, l->rank);
    uint64_t a = 0, b = 0;
    if (bytes >= 16) {
        memcpy(&a, w, 8);
        memcpy(&b, w + bytes - 8, 8);
        l->bad += a != s || b != s;
    } else if (bytes > 0) {
        l->bad += w[0] != (unsigned char)s;
    }
    l->check_from = src;
    l->check_bytes = bytes;
}

static cl_result cpu_op(lab03_link *l, lab03_kind kind, int i, int j, size_t bytes)
{
    int me = l->rank, peer = me == i ? j : i;
    uint64_t *out = &l->seq[me * l->n + peer], *in = &l->seq[peer * l->n + me];
    switch (kind) {
    case LAB03_UNI:
        if (me == i) {
            put(l, j, bytes, ++*out);
            wait_for(&l->flags[i * l->n + j].ack, *out);
        } else {
            take(l, i, bytes, ++*in);
            atomic_store_explicit(&l->flags[i * l->n + j].ack, *in, memory_order_release);
        }
        break;
    case LAB03_BIDIR:
        put(l, peer, bytes, ++*out);
        take(l, peer, bytes, ++*in);
        atomic_store_explicit(&l->flags[peer * l->n + me].ack, *in, memory_order_release);
        wait_for(&l->flags[me * l->n + peer].ack, *out);
        break;
    case LAB03_LATENCY: /* the reply is the acknowledgement */
        if (me == i) {
            put(l, j, bytes, ++*out);
            take(l, j, bytes, ++*in);
        } else {
            take(l, i, bytes, ++*in);
            put(l, i, bytes, ++*out);
        }
        break;
    default:
        cl_set_error("unknown operation kind %d", (int)kind);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

/* The whole last message in our window, outside any timed loop. */
static void full_check(lab03_link *l)
{
    if (l->check_from < 0)
        return;
    const unsigned char *w = window(l, l->rank);
    size_t lo = l->check_bytes >= 16 ? 8 : 1, hi = l->check_bytes >= 16 ? l->check_bytes - 8 : 0;
    for (size_t k = lo; k < hi; k++)
        if (w[k] != pattern(l->check_from, k)) {
            l->bad++;
            break;
        }
    l->check_from = -1;
}

cl_result lab03_link_open_cpu(cl_comm *comm, size_t max_bytes, lab03_link **out)
{
    lab03_link *l = calloc(1, sizeof *l);
    if (!l)
        return CL_ERR_NOMEM;
    l->comm = comm;
    l->rank = cl_comm_rank(comm);
    l->n = cl_comm_size(comm);
    l->max_bytes = max_bytes;
    l->check_from = -1;
    size_t nn = (size_t)l->n * (size_t)l->n;
    l->win_stride = (max_bytes + 4095) / 4096 * 4096;
    size_t flags_bytes = (nn * sizeof(pair_flags) + 4095) / 4096 * 4096;
    l->seq = calloc(nn, sizeof *l->seq);
    l->src = aligned_alloc(4096, l->win_stride);
    if (!l->seq || !l->src)
        return CL_ERR_NOMEM;
    for (size_t k = 0; k < max_bytes; k++) /* also pre-touches every page */
        l->src[k] = pattern(l->rank, k);
    CL_CHECK(cl_shm_open_comm(&l->shm, comm, "lab03", flags_bytes + (size_t)l->n * l->win_stride));
    l->flags = l->shm.base;
    l->windows = (unsigned char *)l->shm.base + flags_bytes;
    *out = l;
    return CL_OK;
}

/* --- gpu: peer copies ------------------------------------------------------------------- */

#ifdef CL_HAVE_CUDA
static cl_result gpu_op(lab03_link *l, lab03_kind kind, int i, int j, size_t bytes)
{
    cudaStream_t si = l->streams[i], sj = l->streams[j];
    switch (kind) {
    case LAB03_UNI:
        CL_CUDA_CHECK(cudaMemcpyPeerAsync(l->ddst[j], j, l->dsrc[i], i, bytes, si));
        CL_CUDA_CHECK(cudaStreamSynchronize(si));
        break;
    case LAB03_BIDIR:
        CL_CUDA_CHECK(cudaMemcpyPeerAsync(l->ddst[j], j, l->dsrc[i], i, bytes, si));
        CL_CUDA_CHECK(cudaMemcpyPeerAsync(l->ddst[i], i, l->dsrc[j], j, bytes, sj));
        CL_CUDA_CHECK(cudaStreamSynchronize(si));
        CL_CUDA_CHECK(cudaStreamSynchronize(sj));
        break;
    case LAB03_LATENCY:
        CL_CUDA_CHECK(cudaMemcpyPeerAsync(l->ddst[j], j, l->dsrc[i], i, bytes, si));
        CL_CUDA_CHECK(cudaMemcpyPeerAsync(l->ddst[i], i, l->ddst[j], j, bytes, si));
        CL_CUDA_CHECK(cudaStreamSynchronize(si));
        break;
    default:
        cl_set_error("unknown operation kind %d", (int)kind);
        return CL_ERR_INVALID;
    }
    l->check_from = i;
    l->check_dst = kind == LAB03_LATENCY ? i : j;
    l->check_bytes = bytes;
    return CL_OK;
}

/* The first bytes of the last destination equal the source's pattern. */
static cl_result gpu_check(lab03_link *l)
{
    int dst_dev = l->check_dst;
    unsigned char host[4096];
    size_t n = l->check_bytes < sizeof host ? l->check_bytes : sizeof host;
    if (l->check_from < 0 || n == 0)
        return CL_OK;
    CL_CUDA_CHECK(cudaMemcpy(host, l->ddst[dst_dev], n, cudaMemcpyDeviceToHost));
    for (size_t k = 0; k < n; k++)
        if (host[k] != pattern(l->check_from, k)) {
            l->bad++;
            break;
        }
    l->check_from = -1;
    return CL_OK;
}

cl_result lab03_link_open_gpu(size_t max_bytes, lab03_link **out)
{
    int n = 0;
    CL_CUDA_CHECK(cudaGetDeviceCount(&n));
    if (n < 1) {
        cl_set_error("no GPU");
        return CL_ERR_UNSUPPORTED;
    }
    lab03_link *l = calloc(1, sizeof *l);
    if (!l)
        return CL_ERR_NOMEM;
    l->gpu = 1;
    l->n = n;
    l->max_bytes = max_bytes;
    l->check_from = -1;
    l->dsrc = calloc((size_t)n, sizeof(void *));
    l->ddst = calloc((size_t)n, sizeof(void *));
    l->streams = calloc((size_t)n, sizeof(void *));
    unsigned char *host = malloc(max_bytes);
    if (!l->dsrc || !l->ddst || !l->streams || !host)
        return CL_ERR_NOMEM;
    for (int d = 0; d < n; d++) {
        for (size_t k = 0; k < max_bytes; k++)
            host[k] = pattern(d, k);
        CL_CUDA_CHECK(cudaSetDevice(d));
        for (int p = 0; p < n; p++) {
            int can = 0;
            if (p != d && cudaDeviceCanAccessPeer(&can, d, p) == cudaSuccess && can) {
                cudaError_t e = cudaDeviceEnablePeerAccess(p, 0);
                if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
                    CL_CUDA_CHECK(e);
            }
        }
        CL_CUDA_CHECK(cudaMalloc(&l->dsrc[d], max_bytes));
        CL_CUDA_CHECK(cudaMalloc(&l->ddst[d], max_bytes));
        CL_CUDA_CHECK(cudaMemcpy(l->dsrc[d], host, max_bytes, cudaMemcpyHostToDevice));
        CL_CUDA_CHECK(cudaStreamCreateWithFlags((cudaStream_t *)&l->streams[d],
                                           cudaStreamNonBlocking));
    }
    free(host);
    *out = l;
    return CL_OK;
}
#else
cl_result lab03_link_open_gpu(size_t max_bytes, lab03_link **out)
{
    (void)max_bytes, (void)out;
    cl_set_error("built without CUDA");
    return CL_ERR_UNSUPPORTED;
}
#endif

/* --- common ----------------------------------------------------------------------------- */

cl_result lab03_op(lab03_link *l, lab03_kind kind, int i, int j, size_t bytes)
{
    if (i < 0 || j < 0 || i >= l->n || j >= l->n || i == j || bytes > l->max_bytes) {
        cl_set_error("lab03_op(%d, %d, %zu bytes): endpoints must differ and lie in 0..%d, "
                     "bytes <= %zu", i, j, bytes, l->n - 1, l->max_bytes);
        return CL_ERR_INVALID;
    }
    if (!lab03_involves(l, i, j)) {
        cl_set_error("rank %d called lab03_op for the pair (%d, %d) it is not part of",
                     l->rank, i, j);
        return CL_ERR_INVALID;
    }
    trace_op(l, kind, i, j, bytes);
#ifdef CL_HAVE_CUDA
    if (l->gpu)
        return gpu_op(l, kind, i, j, bytes);
#endif
    return cpu_op(l, kind, i, j, bytes);
}

cl_result lab03_sync(lab03_link *l)
{
    trace_close(l);
#ifdef CL_HAVE_CUDA
    if (l->gpu) {
        CL_CHECK(gpu_check(l));
        for (int d = 0; d < l->n; d++) {
            CL_CUDA_CHECK(cudaSetDevice(d));
            CL_CUDA_CHECK(cudaDeviceSynchronize());
        }
        return CL_OK;
    }
#endif
    full_check(l);
    return cl_barrier(l->comm);
}

cl_result lab03_link_close(lab03_link *l)
{
    cl_result rc = CL_OK;
    if (!l)
        return CL_OK;
#ifdef CL_HAVE_CUDA
    if (l->gpu)
        for (int d = 0; d < l->n; d++) {
            cudaSetDevice(d);
            cudaFree(l->dsrc[d]);
            cudaFree(l->ddst[d]);
            cudaStreamDestroy(l->streams[d]);
        }
#endif
    if (!l->gpu)
        rc = cl_shm_detach(&l->shm);
    free(l->dsrc);
    free(l->ddst);
    free(l->streams);
    free(l->seq);
    free(l->src);
    free(l->rec);
    free(l);
    return rc;
}
