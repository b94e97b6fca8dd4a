/* harness_gpu.c: lab 24 on real GPUs, the gpu mode: kernels and a bucketed ncclAllReduce on
 * two streams.
 *
 * What DDP does on a GPU: the backward kernels run on one stream; when the last
 * gradient of a bucket has been written, an event lets a second stream, of the
 * highest priority, start that bucket's ncclAllReduce, which NCCL's own kernels
 * carry on while the backward kernels go on. Buckets go out in order. Each
 * kernel is a stand-in sized to the net's time for it, followed by the writes of
 * the gradients it produces (rank + 1 everywhere); the sum is checked on the device.
 */
#include <string.h>

#include "harness_lab24.h"

#include "harness/harness.h"

/* Your buckets on real GPUs (lab24_gpu_steps, below): the net sized from NCCL's AllReduce here,
 * the link measured, your caps and buckets, then the real step. */
cl_result gpu_mode(cl_run *run, cl_comm *c)
{
    static lab24_net net;
    static plan_args p;
    int reps = cl_overlap_repeats(run);
    int layers = (int)num_opt(run, "layers", 16, 16),
        hidden = (int)num_opt(run, "hidden", 1024, 1024);
    double ratio = num_opt(run, "ratio", 2.5, 2.5);
    CL_CHECK(lab24_net_build(&net, layers, hidden, 0));
    cl_overlap o = {0};
    cl_result rc = CL_OK;
    CL_TRY(cl_overlap_alloc(c, &o, (size_t)(net.total_bytes / sizeof(float))));
    double comm;
    CL_TRY(cl_overlap_allreduce(c, &o, &comm)); /* warm-up */
    CL_TRY(cl_overlap_allreduce(c, &o, &comm));
    CL_TRY(lab24_net_scale(&net, ratio * comm));
    memset(&p, 0, sizeof p);
    CL_TRY(build_model(run, c, &net, o.grads, &p.m));
    p.m.quantum_s = 0; /* on a GPU, NCCL moves on by itself */
    cl_call_result res;
    CL_TRY(cl_student_run(c, "plan", &p, sizeof p, 0, &res));
    CL_TRY(res.status);
    CL_TRY(lab24_buckets_check(&p.b, net.params));
    CL_TRY(same_buckets(c, &p.b, net.params));
    cl_report_num(run, "grad_bytes", net.total_bytes);
    cl_report_num(run, "first_cap", p.caps.first_cap);
    cl_report_num(run, "cap", p.caps.cap);
    cl_report_int(run, "last_small", p.caps.last_small);
    cl_report_int(run, "buckets", p.b.n);
    cl_overlap_sample s[CL_OVERLAP_MAX_SAMPLES];
    CL_TRY(lab24_gpu_steps(c, &net, &p.b, reps, s));
    cl_overlap_gpu_row(run, c, s, reps);
done:
    cl_overlap_free(c, &o);
    return rc;
}

#ifndef CL_HAVE_CUDA

cl_result lab24_gpu_steps(cl_comm *c, const lab24_net *n, const lab24_buckets *b, int reps,
                          cl_overlap_sample *out)
{
    (void)c, (void)n, (void)b, (void)reps, (void)out;
    cl_set_error("this build has no CUDA/NCCL");
    return CL_ERR_UNSUPPORTED;
}

#else

#include <string.h>
#include <time.h>

#include "gpu/compute_kernels.h"
#include "gpu/gpu.h"
#include "gpu/gpu_check.h"

#define OUT_FLOATS ((size_t)1 << 20) /* what each stand-in kernel writes */

typedef struct gpu_run {
    int rank, size, blocks;
    ncclComm_t nccl;
    cudaStream_t compute, comm;
    cudaEvent_t ready[LAB24_MAX_PARAMS];
    float *grads, *out;
    unsigned long long *wrong;
    size_t count, off[LAB24_MAX_PARAMS], boff[LAB24_MAX_PARAMS + 1];
    int work[LAB24_MAX_KERNELS];
    int last_kernel[LAB24_MAX_PARAMS]; /* of each bucket: the kernel that completes it */
} gpu_run;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static cl_result slowest(cl_comm *c, double *t) { return cl_agree_max(c, t, 1); }

/* Kernel i: the stand-in, then the gradients it produces. */
static cl_result kernel(gpu_run *g, const lab24_net *n, int i)
{
    const lab24_kernel *k = &n->kernel[i];
    CL_CUDA_CHECK((cudaError_t)cl_gpu_compute_launch(g->out, OUT_FLOATS, g->work[i],
                                                     (uint64_t)i + 1, g->blocks, g->compute));
    for (int j = 0; j < k->nready; j++) {
        int p = k->ready[j];
        CL_CUDA_CHECK((cudaError_t)cl_gpu_fill_launch(g->grads + g->off[p],
                                                      (size_t)(n->bytes[p] / sizeof(float)),
                                                      (float)(g->rank + 1), g->compute));
    }
    return CL_OK;
}

/* Size each kernel's stand-in to its time on this GPU. */
static cl_result size_kernels(cl_comm *c, gpu_run *g, const lab24_net *n)
{
    int probe = 256;
    double t = 0;
    for (int i = 0; i < 3; i++) {
        CL_CUDA_CHECK(cudaStreamSynchronize(g->compute));
        double t0 = now();
        CL_CUDA_CHECK((cudaError_t)cl_gpu_compute_launch(g->out, OUT_FLOATS, probe, 1, g->blocks,
                                                         g->compute));
        CL_CUDA_CHECK(cudaStreamSynchronize(g->compute));
        t = now() - t0;
    }
    CL_CHECK(slowest(c, &t));
    for (int i = 0; i < n->kernels; i++) {
        double w = probe * n->kernel[i].s / t;
        g->work[i] = w < 1 ? 1 : w > 1e8 ? 100000000 : (int)w;
    }
    return CL_OK;
}

static cl_result sample(cl_comm *c, gpu_run *g, const lab24_net *n, const lab24_buckets *b,
                        cl_overlap_sample *s)
{
    float sum = (float)g->size * (g->size + 1) / 2;
    /* the kernels alone */
    CL_CUDA_CHECK(cudaStreamSynchronize(g->compute));
    CL_CHECK(cl_barrier(c));
    double t0 = now();
    for (int i = 0; i < n->kernels; i++)
        CL_CHECK(kernel(g, n, i));
    CL_CUDA_CHECK(cudaStreamSynchronize(g->compute));
    s->kernels_s = now() - t0;
    CL_CHECK(slowest(c, &s->kernels_s));
    /* NCCL's AllReduce of every gradient alone */
    CL_CHECK(cl_barrier(c));
    t0 = now();
    CL_NCCL_CHECK(
        ncclAllReduce(g->grads, g->grads, g->count, ncclFloat, ncclSum, g->nccl, g->comm));
    CL_CUDA_CHECK(cudaStreamSynchronize(g->comm));
    s->allreduce_s = now() - t0;
    CL_CHECK(slowest(c, &s->allreduce_s));
    /* the step: each bucket's AllReduce once its last kernel has ended, in order */
    CL_CUDA_CHECK(cudaMemsetAsync(g->grads, 0xff, g->count * sizeof(float), g->compute));
    CL_CUDA_CHECK(cudaStreamSynchronize(g->compute));
    CL_CHECK(cl_barrier(c));
    t0 = now();
    int next = 0;
    for (int i = 0; i < n->kernels; i++) {
        CL_CHECK(kernel(g, n, i));
        for (; next < b->n && g->last_kernel[next] <= i; next++) {
            size_t len = g->boff[next + 1] - g->boff[next];
            CL_CUDA_CHECK(cudaEventRecord(g->ready[next], g->compute));
            CL_CUDA_CHECK(cudaStreamWaitEvent(g->comm, g->ready[next], 0));
            CL_NCCL_CHECK(ncclAllReduce(g->grads + g->boff[next], g->grads + g->boff[next], len,
                                        ncclFloat, ncclSum, g->nccl, g->comm));
        }
    }
    CL_CUDA_CHECK(cudaStreamSynchronize(g->comm));
    CL_CUDA_CHECK(cudaStreamSynchronize(g->compute));
    s->step_s = now() - t0;
    CL_CHECK(slowest(c, &s->step_s));
    /* checked on the device */
    unsigned long long wrong = 0;
    CL_CUDA_CHECK(cudaMemsetAsync(g->wrong, 0, sizeof *g->wrong, g->comm));
    CL_CUDA_CHECK((cudaError_t)cl_gpu_count_ne_launch(g->grads, g->count, sum, g->wrong, g->comm));
    CL_CUDA_CHECK(cudaMemcpyAsync(&wrong, g->wrong, sizeof wrong, cudaMemcpyDeviceToHost, g->comm));
    CL_CUDA_CHECK(cudaStreamSynchronize(g->comm));
    s->wrong = (double)wrong;
    return cl_agree_sum(c, &s->wrong, 1);
}

static cl_result setup(cl_comm *c, gpu_run *g, const lab24_net *n, const lab24_buckets *b)
{
    int least, greatest, dev, sms;
    void *nccl;
    CL_CHECK(cl_gpu_device(c, &dev));
    CL_CHECK(cl_gpu_nccl(c, &nccl));
    g->nccl = (ncclComm_t)nccl;
    CL_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    g->blocks = 8 * sms;
    CL_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CL_CUDA_CHECK(cudaStreamCreateWithPriority(&g->compute, cudaStreamNonBlocking, least));
    CL_CUDA_CHECK(cudaStreamCreateWithPriority(&g->comm, cudaStreamNonBlocking, greatest));
    for (int k = 0; k < b->n; k++)
        CL_CUDA_CHECK(cudaEventCreateWithFlags(&g->ready[k], cudaEventDisableTiming));
    size_t largest;
    lab24_layout(n, b, g->off, &largest);
    int kernel_of[LAB24_MAX_PARAMS];
    for (int i = 0; i < n->kernels; i++)
        for (int j = 0; j < n->kernel[i].nready; j++)
            kernel_of[n->kernel[i].ready[j]] = i;
    g->boff[0] = 0;
    for (int k = 0; k < b->n; k++) {
        g->last_kernel[k] = k ? g->last_kernel[k - 1] : 0; /* buckets go out in order */
        g->boff[k + 1] = g->boff[k];
        for (int j = b->start[k]; j < b->start[k + 1]; j++) {
            int p = b->param[j];
            g->boff[k + 1] += (size_t)(n->bytes[p] / sizeof(float));
            if (kernel_of[p] > g->last_kernel[k])
                g->last_kernel[k] = kernel_of[p];
        }
    }
    g->count = g->boff[b->n];
    CL_CUDA_CHECK(cudaMalloc((void **)&g->grads, g->count * sizeof(float)));
    CL_CUDA_CHECK(cudaMalloc((void **)&g->out, OUT_FLOATS * sizeof(float)));
    CL_CUDA_CHECK(cudaMalloc((void **)&g->wrong, sizeof *g->wrong));
    CL_CUDA_CHECK(cudaDeviceSynchronize()); /* the backend's queued work too */
    return size_kernels(c, g, n);
}

static void teardown(gpu_run *g, const lab24_buckets *b)
{
    for (int k = 0; k < b->n; k++)
        if (g->ready[k])
            cudaEventDestroy(g->ready[k]);
    cudaFree(g->grads), cudaFree(g->out), cudaFree(g->wrong);
    if (g->compute)
        cudaStreamDestroy(g->compute);
    if (g->comm)
        cudaStreamDestroy(g->comm);
}

cl_result lab24_gpu_steps(cl_comm *c, const lab24_net *n, const lab24_buckets *b, int reps,
                          cl_overlap_sample *out)
{
    static gpu_run g;
    memset(&g, 0, sizeof g);
    g.rank = cl_comm_rank(c), g.size = cl_comm_size(c);
    cl_result rc = setup(c, &g, n, b);
    for (int i = 0; rc == CL_OK && i < reps; i++)
        rc = sample(c, &g, n, b, &out[i]);
    teardown(&g, b);
    return rc;
}

#endif
