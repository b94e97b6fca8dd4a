/* gpu.c: lab 11 on real GPUs: kernels and bucketed ncclAllReduce on two streams (harness side).
 *
 * The same step as the model's, for real: every layer's kernel on the stream of
 * the lowest priority, each bucket's ncclAllReduce on a stream of the highest
 * priority once the bucket's last kernel has ended (an event), on an NCCL
 * communicator whose channels (one CTA, so one SM, each) are the plan's. The
 * kernels take the SMs NCCL's channels leave, as the model says. Results are
 * checked on the device, so no element is recomputed on the host.
 */
#include "lab11_gpu.h"

#include "harness/harness.h"

#ifndef CL_HAVE_CUDA

cl_result lab11_gpu_sms(int *sms)
{
    *sms = 0;
    cl_set_error("this build has no CUDA/NCCL");
    return CL_ERR_UNSUPPORTED;
}

cl_result lab11_gpu_steps(cl_comm *c, const lab11_model *m, const lab11_plan *p, int reps,
                          cl_overlap_sample *out)
{
    (void)c, (void)m, (void)p, (void)reps, (void)out;
    cl_set_error("this build has no CUDA/NCCL");
    return CL_ERR_UNSUPPORTED;
}

#else

#include <mpi.h>
#include <string.h>

#include "gpu/compute_kernels.h"
#include "gpu/gpu_check.h"

#define OUT_PER_LAYER ((size_t)1 << 20) /* floats each kernel writes */

typedef struct gpu_run {
    int rank, size, blocks;
    ncclComm_t plan, base;
    cudaStream_t compute, comm;
    cudaEvent_t ready[LAB11_MAX_LAYERS];
    float *grads, *out;
    unsigned long long *wrong;
    size_t count;
    int work[LAB11_MAX_LAYERS];
} gpu_run;

cl_result lab11_gpu_sms(int *sms)
{
    int dev;
    CL_CUDA_CHECK(cudaGetDevice(&dev)); /* the backend chose this rank's GPU */
    CL_CUDA_CHECK(cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev));
    return CL_OK;
}

static double slowest(double t)
{
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return t;
}

/* A communicator of every rank; with channels > 0, NCCL uses exactly that many. */
static cl_result open_comm(gpu_run *g, int channels, ncclComm_t *out)
{
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    if (g->rank == 0)
        CL_NCCL_CHECK(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    if (channels > 0)
        cfg.minCTAs = cfg.maxCTAs = channels;
    CL_NCCL_CHECK(ncclCommInitRankConfig(out, g->size, id, g->rank, &cfg));
    return CL_OK;
}

static double now(void) { return MPI_Wtime(); }

/* Launch layer l's kernel on the compute stream. */
static cl_result kernel(gpu_run *g, int l)
{
    int e = cl_gpu_compute_launch(g->out + (size_t)l * OUT_PER_LAYER, OUT_PER_LAYER, g->work[l],
                                  (uint64_t)l + 1, g->blocks, g->compute);
    CL_CUDA_CHECK((cudaError_t)e);
    return CL_OK;
}

/* Size each layer's kernel to m->layer_s[l] on this GPU. */
static cl_result size_kernels(gpu_run *g, const lab11_model *m)
{
    int probe = 256;
    double t = 0;
    for (int i = 0; i < 3; i++) {
        CL_CUDA_CHECK(cudaDeviceSynchronize());
        double t0 = now();
        CL_CUDA_CHECK((cudaError_t)cl_gpu_compute_launch(g->out, OUT_PER_LAYER, probe, 1, g->blocks,
                                                         g->compute));
        CL_CUDA_CHECK(cudaStreamSynchronize(g->compute));
        t = now() - t0;
    }
    t = slowest(t);
    for (int l = 0; l < m->layers; l++) {
        double w = probe * m->layer_s[l] / t;
        g->work[l] = w < 1 ? 1 : w > 1e8 ? 100000000 : (int)w;
    }
    return CL_OK;
}

static cl_result sample(gpu_run *g, const lab11_model *m, const lab11_plan *p, cl_overlap_sample *s)
{
    float sum = (float)g->size * (g->size + 1) / 2;
    /* the kernels alone */
    CL_CUDA_CHECK(cudaDeviceSynchronize());
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    for (int l = m->layers - 1; l >= 0; l--)
        CL_CHECK(kernel(g, l));
    CL_CUDA_CHECK(cudaStreamSynchronize(g->compute));
    s->kernels_s = slowest(now() - t0);
    /* NCCL's AllReduce alone, with its own channels */
    CL_CUDA_CHECK(
        (cudaError_t)cl_gpu_fill_launch(g->grads, g->count, (float)(g->rank + 1), g->comm));
    CL_CUDA_CHECK(cudaDeviceSynchronize());
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = now();
    CL_NCCL_CHECK(
        ncclAllReduce(g->grads, g->grads, g->count, ncclFloat, ncclSum, g->base, g->comm));
    CL_CUDA_CHECK(cudaStreamSynchronize(g->comm));
    s->allreduce_s = slowest(now() - t0);
    /* the step: buckets start when their last kernel has ended */
    CL_CUDA_CHECK(
        (cudaError_t)cl_gpu_fill_launch(g->grads, g->count, (float)(g->rank + 1), g->comm));
    CL_CUDA_CHECK(
        cudaMemsetAsync(g->out, 0xff, OUT_PER_LAYER * m->layers * sizeof(float), g->compute));
    CL_CUDA_CHECK(cudaDeviceSynchronize());
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = now();
    size_t start = 0;
    double acc = 0;
    for (int l = m->layers - 1; l >= 0; l--) {
        CL_CHECK(kernel(g, l));
        acc += m->layer_bytes[l];
        if (acc >= p->bucket_bytes || l == 0) {
            size_t n = (size_t)(acc / sizeof(float));
            CL_CUDA_CHECK(cudaEventRecord(g->ready[l], g->compute));
            CL_CUDA_CHECK(cudaStreamWaitEvent(g->comm, g->ready[l], 0));
            CL_NCCL_CHECK(ncclAllReduce(g->grads + start, g->grads + start, n, ncclFloat, ncclSum,
                                        g->plan, g->comm));
            start += n, acc = 0;
        }
    }
    CL_CUDA_CHECK(cudaStreamSynchronize(g->comm));
    CL_CUDA_CHECK(cudaStreamSynchronize(g->compute));
    s->step_s = slowest(now() - t0);
    /* checked on the device */
    unsigned long long wrong[2] = {0, 0};
    CL_CUDA_CHECK(cudaMemset(g->wrong, 0, 2 * sizeof *g->wrong));
    CL_CUDA_CHECK((cudaError_t)cl_gpu_count_ne_launch(g->grads, g->count, sum, g->wrong, g->comm));
    for (int l = 0; l < m->layers; l++)
        CL_CUDA_CHECK((cudaError_t)cl_gpu_count_compute_launch(
            g->out + (size_t)l * OUT_PER_LAYER, OUT_PER_LAYER, g->work[l], (uint64_t)l + 1,
            g->wrong + 1, g->comm));
    CL_CUDA_CHECK(cudaMemcpy(wrong, g->wrong, sizeof wrong, cudaMemcpyDeviceToHost));
    MPI_Allreduce(MPI_IN_PLACE, wrong, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    s->wrong = (double)wrong[0] + (double)wrong[1]; /* the gradients', the kernels' outputs' */
    return CL_OK;
}

static cl_result setup(gpu_run *g, const lab11_model *m, const lab11_plan *p)
{
    int least, greatest, sms;
    CL_CHECK(lab11_gpu_sms(&sms));
    g->blocks = 8 * sms;
    CL_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CL_CUDA_CHECK(cudaStreamCreateWithPriority(&g->compute, cudaStreamNonBlocking, least));
    CL_CUDA_CHECK(cudaStreamCreateWithPriority(&g->comm, cudaStreamNonBlocking, greatest));
    for (int l = 0; l < m->layers; l++)
        CL_CUDA_CHECK(cudaEventCreateWithFlags(&g->ready[l], cudaEventDisableTiming));
    double bytes = 0;
    for (int l = 0; l < m->layers; l++)
        bytes += m->layer_bytes[l];
    g->count = (size_t)(bytes / sizeof(float));
    CL_CUDA_CHECK(cudaMalloc((void **)&g->grads, g->count * sizeof(float)));
    CL_CUDA_CHECK(cudaMalloc((void **)&g->out, OUT_PER_LAYER * m->layers * sizeof(float)));
    CL_CUDA_CHECK(cudaMalloc((void **)&g->wrong, 2 * sizeof *g->wrong));
    CL_CHECK(open_comm(g, p->channels, &g->plan));
    CL_CHECK(open_comm(g, 0, &g->base));
    return size_kernels(g, m);
}

static void teardown(gpu_run *g, const lab11_model *m)
{
    if (g->plan)
        ncclCommDestroy(g->plan);
    if (g->base)
        ncclCommDestroy(g->base);
    for (int l = 0; l < m->layers; l++)
        if (g->ready[l])
            cudaEventDestroy(g->ready[l]);
    cudaFree(g->grads), cudaFree(g->out), cudaFree(g->wrong);
    if (g->compute)
        cudaStreamDestroy(g->compute);
    if (g->comm)
        cudaStreamDestroy(g->comm);
}

cl_result lab11_gpu_steps(cl_comm *c, const lab11_model *m, const lab11_plan *p, int reps,
                          cl_overlap_sample *out)
{
    gpu_run g;
    memset(&g, 0, sizeof g);
    g.rank = cl_comm_rank(c), g.size = cl_comm_size(c);
    cl_result rc = setup(&g, m, p);
    for (int i = 0; rc == CL_OK && i < reps; i++)
        rc = sample(&g, m, p, &out[i]);
    teardown(&g, m);
    return rc;
}

#endif
