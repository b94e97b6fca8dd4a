/* harness_links.c: the two links of lab 12's staged copy and the record of every byte.
 *
 * A copy over a link starts when it is posted or when the link's previous copy ends,
 * whichever is later, and lasts latency + n / bandwidth: on "cpu" in real time (a wait
 * sleeps until the copy's end), on "sim" in virtual time. On "gpu" the links are real: a
 * CPU copy from pageable memory into pinned staging memory (done when posted), then
 * cudaMemcpyAsync to the GPU on the harness's stream (an event per copy). Data never
 * passes through the student's program: on "cpu" and "sim" the harness records which
 * source bytes each staging buffer holds and where each copy out delivers them; on "gpu"
 * it reads the GPU's copy back.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef CL_HAVE_CUDA
#include <cuda_runtime.h>

#include "gpu/gpu_check.h"
#endif

#include "lab12_harness.h"
#include "p2p_sim.h"

/* =========================================================================================
 * The links of the staged copy
 * ========================================================================================= */

enum { LINK_IN, LINK_OUT };
enum { EMU_REAL_TIME, EMU_VIRTUAL, EMU_GPU };

typedef struct xcopy {
    int link, buf, rec; /* rec: the delivery it makes (out copies) */
    size_t off, n;
    double start, end;
    int waited;
#ifdef CL_HAVE_CUDA
    cudaEvent_t ev;
#endif
} xcopy;

typedef struct delivery { /* bytes [dst, dst + n) of the destination come from src.. */
    size_t dst, src, n;
    int ok; /* 0: read from a buffer not yet filled, or overwritten while read */
} delivery;

#define MAX_READS 16 /* copies out of one filling of a buffer that are watched */

typedef struct slot {
    int filled, by; /* by: the in copy that fills it */
    size_t src, n;
    int reads[MAX_READS], nreads; /* the copies out of it since it was filled */
} slot;

static struct {
    int active, mode;
    lab12_job job;
    int nbuf;
    size_t chunk;
    slot s[LAB12_MAX_BUFS];
    double free_at[2];
    xcopy *x;
    int nx, capx;
    delivery *d;
    int nd, capd;
    size_t through[2]; /* bytes through each link */
    int hazards;
    char why[200];
#ifdef CL_HAVE_CUDA
    unsigned char *src, *staging, *dst; /* pageable, pinned, device */
    cudaStream_t stream;
#endif
} E;

static int emu_mode(const cl_comm *c)
{
    const char *b = cl_comm_backend(c);
    return strcmp(b, "sim") == 0 ? EMU_VIRTUAL : strcmp(b, "gpu") == 0 ? EMU_GPU : EMU_REAL_TIME;
}

static cl_result fail(const char *fmt, const char *what)
{
    cl_set_error(fmt, what);
    return CL_ERR_INVALID;
}

static void hazard(const char *what)
{
    if (!E.hazards++)
        snprintf(E.why, sizeof E.why, "%s", what);
}

static int grow(void **p, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return 0;
    int n = *cap ? 2 * *cap : 256;
    void *q = realloc(*p, (size_t)n * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

void links_open(const cl_comm *c, const lab12_job *job)
{
#ifdef CL_HAVE_CUDA
    for (int i = 0; i < E.nx; i++)
        if (E.x[i].ev)
            cudaEventDestroy(E.x[i].ev);
#endif
    E.active = 1, E.mode = emu_mode(c), E.job = *job;
    E.nbuf = 0, E.chunk = 0, E.nx = 0, E.nd = 0, E.hazards = 0, E.why[0] = '\0';
    E.through[0] = E.through[1] = 0;
    memset(E.s, 0, sizeof E.s);
    E.free_at[0] = E.free_at[1] = 0;
}

static cl_result emu_stage(cl_comm *c, int nbuf, size_t chunk)
{
    if (nbuf < 1 || nbuf > LAB12_MAX_BUFS || chunk == 0 ||
        chunk > E.job.staging_bytes / (size_t)nbuf) {
        cl_set_error("lab12_stage(%d, %zu): 1..%d buffers whose total fits %zu bytes of staging",
                     nbuf, chunk, LAB12_MAX_BUFS, E.job.staging_bytes);
        return CL_ERR_INVALID;
    }
    for (int i = 0; i < E.nx; i++)
        if (!E.x[i].waited)
            return fail("lab12_stage: %s", "copies are still in flight (wait for them first)");
    (void)c;
    E.nbuf = nbuf, E.chunk = chunk;
    memset(E.s, 0, sizeof E.s);
    return CL_OK;
}

/* When the copy starts and ends on its link (cpu, sim); the GPU's copies time themselves. */
static void schedule(cl_comm *c, xcopy *x, const lab12_link *l)
{
    double now = cl_comm_time(c);
    x->start = now > E.free_at[x->link] ? now : E.free_at[x->link];
    x->end = x->start + l->latency_s + (double)x->n / l->bandwidth_Bps;
    E.free_at[x->link] = x->end;
}

static cl_result emu_post(cl_comm *c, int link, lab12_op *op)
{
    const char *name = link == LINK_IN ? "lab12_copy_in" : "lab12_copy_out";
    size_t limit = E.job.bytes;
    if (!E.nbuf)
        return fail("%s before lab12_stage", name);
    if (op->buf < 0 || op->buf >= E.nbuf || op->n == 0 || op->n > E.chunk || op->offset > limit ||
        op->n > limit - op->offset) {
        cl_set_error("%s(buf %d, offset %llu, %llu bytes): buffers 0..%d of %zu bytes, within "
                     "the %zu bytes of the copy",
                     name, op->buf, (unsigned long long)op->offset, (unsigned long long)op->n,
                     E.nbuf - 1, E.chunk, limit);
        return CL_ERR_INVALID;
    }
    if (grow((void **)&E.x, &E.capx, E.nx + 1, sizeof *E.x) ||
        grow((void **)&E.d, &E.capd, E.nd + 1, sizeof *E.d))
        return CL_ERR_NOMEM;
    if (E.nx >= 1 << 20)
        return fail("%s: more than a million copies", name);
    xcopy *x = &E.x[E.nx];
    memset(x, 0, sizeof *x);
    x->link = link, x->buf = op->buf, x->off = op->offset, x->n = op->n, x->rec = -1;
    slot *s = &E.s[op->buf];
    if (E.mode != EMU_GPU)
        schedule(c, x, link == LINK_IN ? &E.job.in : &E.job.out);
    if (link == LINK_IN) {
        /* Refilling a buffer that an earlier copy out of it is still reading. */
        for (int i = 0; i < s->nreads; i++) {
            xcopy *o = &E.x[s->reads[i]];
            int reading = o->end > x->start;
#ifdef CL_HAVE_CUDA
            if (E.mode == EMU_GPU)
                reading = cudaEventQuery(o->ev) == cudaErrorNotReady;
#endif
            if (reading) {
                E.d[o->rec].ok = 0;
                hazard("a staging buffer was refilled while a copy out of it was still running");
            }
        }
#ifdef CL_HAVE_CUDA
        if (E.mode == EMU_GPU) {
            x->start = cl_comm_time(c);
            memcpy(E.staging + (size_t)op->buf * E.chunk, E.src + op->offset, op->n);
            x->end = cl_comm_time(c);
        }
#endif
        *s = (slot){.filled = 1, .by = E.nx, .src = op->offset, .n = op->n};
    } else {
        delivery *d = &E.d[E.nd];
        *d = (delivery){.dst = op->offset, .src = s->src, .n = op->n, .ok = 1};
        if (!s->filled || op->n > s->n) {
            d->ok = 0;
            hazard("a copy out of a staging buffer read bytes no copy had put there");
        } else if (E.mode != EMU_GPU && E.x[s->by].end > x->start) {
            d->ok = 0;
            hazard("a copy out of a staging buffer started before the copy into it had ended");
        }
#ifdef CL_HAVE_CUDA
        if (E.mode == EMU_GPU) {
            CL_CUDA_CHECK(cudaEventCreateWithFlags(&x->ev, cudaEventDisableTiming));
            CL_CUDA_CHECK(cudaMemcpyAsync(E.dst + op->offset, E.staging + (size_t)op->buf * E.chunk,
                                          op->n, cudaMemcpyHostToDevice, E.stream));
            CL_CUDA_CHECK(cudaEventRecord(x->ev, E.stream));
            x->start = cl_comm_time(c);
        }
#endif
        x->rec = E.nd++;
        if (s->nreads < MAX_READS)
            s->reads[s->nreads++] = E.nx;
    }
    E.through[link] += op->n;
    op->id = ++E.nx;
    return CL_OK;
}

static cl_result emu_wait(cl_comm *c, lab12_op *op)
{
    if (op->id < 1 || op->id > E.nx || E.x[op->id - 1].waited)
        return fail("lab12_wait: %s", "no such copy in flight (waited for twice?)");
    xcopy *x = &E.x[op->id - 1];
    x->waited = 1;
    double left = x->end - cl_comm_time(c);
    switch (E.mode) {
    case EMU_VIRTUAL:
        if (left > 0)
            cl_sim_compute(c, left);
        break;
    case EMU_REAL_TIME:
        if (left > 0) {
            struct timespec ts = {.tv_sec = (time_t)left,
                                  .tv_nsec = (long)((left - floor(left)) * 1e9)};
            while (nanosleep(&ts, &ts) != 0)
                ;
        }
        break;
    default:
#ifdef CL_HAVE_CUDA
        if (x->link == LINK_OUT) {
            CL_CUDA_CHECK(cudaEventSynchronize(x->ev));
            x->end = cl_comm_time(c);
        }
#endif
        break;
    }
    return CL_OK;
}

cl_result links_op(cl_comm *c, int code, lab12_op *op)
{
    if (code < LAB12_OP_STAGE || code > LAB12_OP_WAIT) {
        cl_set_error("lab12: unknown link operation %d", code);
        return CL_ERR_INVALID;
    }
    if (!E.active)
        return fail("%s", "the links exist only during a staged copy");
    switch (code) {
    case LAB12_OP_STAGE: return emu_stage(c, op->buf, op->n);
    case LAB12_OP_IN: return emu_post(c, LINK_IN, op);
    case LAB12_OP_OUT: return emu_post(c, LINK_OUT, op);
    default: return emu_wait(c, op);
    }
}

static int by_dst(const void *a, const void *b)
{
    const delivery *x = a, *y = b;
    return x->dst < y->dst ? -1 : x->dst > y->dst;
}

/* Bytes of the destination that do not hold their source bytes, once every copy is over. */
static cl_result wrong_bytes(size_t *wrong)
{
    size_t right = 0, at = 0;
#ifdef CL_HAVE_CUDA
    if (E.mode == EMU_GPU) {
        CL_CUDA_CHECK(cudaStreamSynchronize(E.stream));
        unsigned char *back = malloc(E.job.bytes ? E.job.bytes : 1);
        if (!back)
            return CL_ERR_NOMEM;
        CL_CUDA_CHECK(cudaMemcpy(back, E.dst, E.job.bytes, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < E.job.bytes; i++)
            right += back[i] == E.src[i];
        free(back);
        *wrong = E.job.bytes - right;
        return CL_OK;
    }
#endif
    /* Where every byte came from: deliveries must tile the destination, each from the
     * same offset of the source, none spoilt. */
    qsort(E.d, (size_t)E.nd, sizeof *E.d, by_dst);
    for (int i = 0; i < E.nd; i++) {
        const delivery *d = &E.d[i];
        if (d->dst >= at && d->ok && d->src == d->dst)
            right += d->n;
        at = d->dst + d->n > at ? d->dst + d->n : at;
    }
    *wrong = E.job.bytes - (right < E.job.bytes ? right : E.job.bytes);
    return CL_OK;
}

/* Seconds both links were busy at once (cpu, sim): each link's copies follow one another
 * in posting order, so the two lists are walked side by side. */
static double overlap_s(void)
{
    double both = 0;
    int i = 0, j = 0;
    for (;;) {
        while (i < E.nx && E.x[i].link != LINK_IN)
            i++;
        while (j < E.nx && E.x[j].link != LINK_OUT)
            j++;
        if (i == E.nx || j == E.nx)
            return both;
        double a = fmax(E.x[i].start, E.x[j].start), b = fmin(E.x[i].end, E.x[j].end);
        both += b > a ? b - a : 0;
        if (E.x[i].end < E.x[j].end)
            i++;
        else
            j++;
    }
}

int links_real(const cl_comm *c) { return emu_mode(c) == EMU_GPU; }

cl_result links_close(outcome *o)
{
    E.active = 0;
    for (int i = 0; i < E.nx; i++)
        if (!E.x[i].waited && o->status == CL_OK) {
            o->status = CL_ERR_INVALID;
            snprintf(o->error, sizeof o->error,
                     "returned with copies still in flight (every "
                     "copy needs its lab12_wait)");
        }
    CL_CHECK(wrong_bytes(&o->wrong));
    if (o->status == CL_OK && E.hazards)
        snprintf(o->error, sizeof o->error, "%d hazard(s): %s", E.hazards, E.why);
    o->bytes_in = E.through[LINK_IN], o->bytes_out = E.through[LINK_OUT];
    o->hazards = E.hazards;
    o->overlap_s = E.mode == EMU_GPU ? 0 : overlap_s();
    return CL_OK;
}

/* The baseline: one staging buffer as large as the staging memory, filled and drained in
 * turn, through the same links. */
cl_result links_baseline(cl_comm *c, const lab12_job *job, outcome *o)
{
    memset(o, 0, sizeof *o);
    links_open(c, job);
    size_t chunk = job->staging_bytes;
    double t0 = cl_comm_time(c);
    CL_CHECK(emu_stage(c, 1, chunk));
    for (size_t off = 0; off < job->bytes; off += chunk) {
        lab12_op op = {
            .buf = 0, .offset = off, .n = job->bytes - off < chunk ? job->bytes - off : chunk};
        CL_CHECK(emu_post(c, LINK_IN, &op));
        CL_CHECK(emu_wait(c, &op));
        op.id = 0;
        CL_CHECK(emu_post(c, LINK_OUT, &op));
        CL_CHECK(emu_wait(c, &op));
    }
    o->seconds = cl_comm_time(c) - t0, o->chunk = chunk, o->nbuf = 1;
    return links_close(o);
}

/* The harness's own recurrence, for the modelled time of a plan. */
double ref_pipeline(size_t bytes, size_t chunk, int nbuf, lab12_link in, lab12_link out)
{
    double r = 0, w[LAB12_MAX_BUFS] = {0}, last = 0;
    size_t k = 0;
    for (size_t off = 0; chunk && nbuf > 0 && off < bytes; off += chunk, k++) {
        double n = (double)(bytes - off < chunk ? bytes - off : chunk);
        double freed = k >= (size_t)nbuf ? w[k % (size_t)nbuf] : 0;
        r = fmax(r, freed) + in.latency_s + n / in.bandwidth_Bps;
        last = w[k % (size_t)nbuf] = fmax(last, r) + out.latency_s + n / out.bandwidth_Bps;
    }
    return last;
}

/* --- GPU buffers ----------------------------------------------------------------------- */

#ifdef CL_HAVE_CUDA
cl_result gpu_setup(const lab12_job *job)
{
    if (!E.src) {
        E.src = malloc(job->bytes ? job->bytes : 1);
        if (!E.src)
            return CL_ERR_NOMEM;
        cl_pretouch(E.src, job->bytes);
        /* Pinned for DMA (cudaHostAlloc), allocated once, outside every timed copy. */
        CL_CUDA_CHECK(cudaHostAlloc((void **)&E.staging, job->staging_bytes, cudaHostAllocDefault));
        CL_CUDA_CHECK(cudaMalloc((void **)&E.dst, job->bytes ? job->bytes : 1));
        CL_CUDA_CHECK(cudaStreamCreateWithFlags(&E.stream, cudaStreamNonBlocking));
    }
    return CL_OK;
}

void gpu_teardown(void)
{
    if (E.staging)
        cudaFreeHost(E.staging);
    if (E.dst)
        cudaFree(E.dst);
    if (E.stream)
        cudaStreamDestroy(E.stream);
    free(E.src);
    E.src = E.staging = E.dst = NULL;
    E.stream = NULL;
}

/* Fresh source bytes, and a destination that holds none of them. */
cl_result gpu_fresh(uint64_t seed, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        E.src[i] = (unsigned char)cl_data_hash(seed ^ i);
    CL_CUDA_CHECK(cudaMemsetAsync(E.dst, 0, bytes ? bytes : 1, E.stream));
    CL_CUDA_CHECK(cudaStreamSynchronize(E.stream));
    return CL_OK;
}

/* The links' figures, measured on this machine: a CPU copy of the whole source into the
 * pinned staging memory (it does not fit in any cache), and host-to-device copies. */
cl_result gpu_figures(cl_comm *c, lab12_job *job)
{
    size_t chunk = job->staging_bytes, small = 4096;
    double t0 = cl_comm_time(c);
    for (size_t off = 0; off < job->bytes; off += chunk)
        memcpy(E.staging, E.src + off, job->bytes - off < chunk ? job->bytes - off : chunk);
    double t_in = cl_comm_time(c) - t0;
    t0 = cl_comm_time(c);
    for (size_t off = 0; off < job->bytes; off += chunk)
        CL_CUDA_CHECK(cudaMemcpyAsync(E.dst + off, E.staging,
                                      job->bytes - off < chunk ? job->bytes - off : chunk,
                                      cudaMemcpyHostToDevice, E.stream));
    CL_CUDA_CHECK(cudaStreamSynchronize(E.stream));
    double t_out = cl_comm_time(c) - t0;
    t0 = cl_comm_time(c);
    for (int i = 0; i < 100; i++) {
        CL_CUDA_CHECK(cudaMemcpyAsync(E.dst, E.staging, small, cudaMemcpyHostToDevice, E.stream));
        CL_CUDA_CHECK(cudaStreamSynchronize(E.stream));
    }
    double lat_out = (cl_comm_time(c) - t0) / 100;
    job->in = (lab12_link){.bandwidth_Bps = (double)job->bytes / t_in, .latency_s = 1e-6};
    job->out = (lab12_link){.bandwidth_Bps = (double)job->bytes / t_out, .latency_s = lat_out};
    return CL_OK;
}
#else
cl_result gpu_setup(const lab12_job *job)
{
    (void)job;
    cl_set_error("built without CUDA");
    return CL_ERR_UNSUPPORTED;
}

void gpu_teardown(void) {}

cl_result gpu_fresh(uint64_t seed, size_t bytes)
{
    (void)seed, (void)bytes;
    cl_set_error("built without CUDA");
    return CL_ERR_UNSUPPORTED;
}

cl_result gpu_figures(cl_comm *c, lab12_job *job)
{
    (void)c, (void)job;
    cl_set_error("built without CUDA");
    return CL_ERR_UNSUPPORTED;
}
#endif
