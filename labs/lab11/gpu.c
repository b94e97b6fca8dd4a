/* gpu.c: lab 11's GPU run: the compute kernel and ncclAllReduce, alone and overlapped.
 *
 * One rank per GPU (device = rank modulo the GPUs visible). The kernel is sized
 * so that it lasts about as long as the AllReduce; NCCL_MAX_NCHANNELS (set by
 * the grader) bounds the SMs NCCL takes from it. Times are the slowest rank's.
 */
#include "lab11_gpu.h"

#ifndef CL_HAVE_CUDA

cl_result lab11_gpu_run(size_t count, int repeats, const char *json)
{
    (void)count, (void)repeats, (void)json;
    cl_set_error("this build has no CUDA/NCCL");
    return CL_ERR_UNSUPPORTED;
}

#else

#include <stdlib.h>
#include <string.h>

#include "gpu/gpu_check.h"
#include "lab11_kernels.h"

#define MAX_REPEATS 64

cl_result lab11_gpu_compute(const lab11_task *t, double *out, cudaStream_t s)
{
    int e = lab11_kernel_launch(out, t->count, t->work, t->seed, s);
    if (e != 0) {
        cl_set_error("compute kernel: %s", cudaGetErrorString((cudaError_t)e));
        return CL_ERR_BACKEND;
    }
    return CL_OK;
}

static double slowest(double t)
{
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return t;
}

static cl_result time_compute(lab11_gpu *g, double *next, double *out)
{
    CL_CUDA_CHECK(cudaDeviceSynchronize());
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    CL_CHECK(lab11_gpu_compute(&g->task, next, g->compute));
    CL_CUDA_CHECK(cudaStreamSynchronize(g->compute));
    *out = slowest(MPI_Wtime() - t0);
    return CL_OK;
}

static cl_result time_comm(lab11_gpu *g, const double *grad, double *sum, double *out)
{
    CL_CUDA_CHECK(cudaDeviceSynchronize());
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    CL_NCCL_CHECK(ncclAllReduce(grad, sum, g->task.count, ncclDouble, ncclSum, g->nccl, g->comm));
    CL_CUDA_CHECK(cudaStreamSynchronize(g->comm));
    *out = slowest(MPI_Wtime() - t0);
    return CL_OK;
}

static cl_result run(lab11_gpu *g, int rank, int size, int repeats, const char *json)
{
    size_t n = g->task.count, bytes = n * sizeof(double);
    double *grad, *sum, *next;
    double *host = malloc(bytes), *want = malloc(bytes);
    if (!host || !want)
        return CL_ERR_NOMEM;
    CL_CUDA_CHECK(cudaMalloc((void **)&grad, bytes));
    CL_CUDA_CHECK(cudaMalloc((void **)&sum, bytes));
    CL_CUDA_CHECK(cudaMalloc((void **)&next, bytes));
    CL_CHECK(cl_data_fill(host, 0, n, CL_FLOAT64, CL_SUM, rank, 1));
    CL_CUDA_CHECK(cudaMemcpy(grad, host, bytes, cudaMemcpyHostToDevice));
    double comm = 0, probe = 0;
    for (int i = 0; i < 3; i++) /* warm-up, then size the kernel to the AllReduce */
        CL_CHECK(time_comm(g, grad, sum, &comm));
    g->task.work = 64;
    CL_CHECK(time_compute(g, next, &probe));
    CL_CHECK(time_compute(g, next, &probe));
    double work = 64.0 * comm / probe;
    MPI_Bcast(&work, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    g->task.work = work < 1 ? 1 : work > 1e7 ? 10000000 : (int)work;
    lab11_compute(&g->task, want, 0, n);

    double comp[MAX_REPEATS], com[MAX_REPEATS], over[MAX_REPEATS];
    long wrong_sum = 0, wrong_next = 0;
    int done = 0;
    cl_result status = CL_OK;
    cl_clear_error();
    for (int r = 0; r < repeats && status == CL_OK; r++, done++) {
        CL_CHECK(time_compute(g, next, &comp[r]));
        CL_CHECK(time_comm(g, grad, sum, &com[r]));
        uint64_t seed = cl_data_hash(0x1100 + (uint64_t)r);
        CL_CHECK(cl_data_fill(host, 0, n, CL_FLOAT64, CL_SUM, rank, seed));
        CL_CUDA_CHECK(cudaMemcpy(grad, host, bytes, cudaMemcpyHostToDevice));
        CL_CUDA_CHECK(cudaMemset(sum, 0xff, bytes));
        CL_CUDA_CHECK(cudaMemset(next, 0xff, bytes));
        CL_CUDA_CHECK(cudaDeviceSynchronize());
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        status = lab11_overlap_step_gpu(g, grad, sum, next);
        CL_CUDA_CHECK(cudaDeviceSynchronize());
        over[r] = slowest(MPI_Wtime() - t0);
        if (status != CL_OK)
            break;
        size_t w = 0;
        CL_CUDA_CHECK(cudaMemcpy(host, sum, bytes, cudaMemcpyDeviceToHost));
        CL_CHECK(cl_data_check(host, 0, n, CL_FLOAT64, CL_SUM, size, seed, &w));
        wrong_sum += (long)w;
        CL_CUDA_CHECK(cudaMemcpy(host, next, bytes, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; i++)
            wrong_next += memcmp(&host[i], &want[i], sizeof host[i]) != 0;
    }
    MPI_Allreduce(MPI_IN_PLACE, &wrong_sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &wrong_next, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        const char *nch = getenv("NCCL_MAX_NCHANNELS");
        cl_json j;
        CL_CHECK(cl_json_open(&j, json));
        cl_json_object_start(&j, NULL);
        cl_json_string(&j, "backend", "gpu");
        cl_json_int(&j, "ranks", size);
        cl_json_int(&j, "count", (long long)n);
        cl_json_int(&j, "work", g->task.work);
        cl_json_string(&j, "nccl_max_nchannels", nch ? nch : "");
        cl_json_string(&j, "status", cl_result_str(status));
        cl_json_string(&j, "error", cl_last_error());
        cl_json_int(&j, "steps", done);
        cl_json_int(&j, "wrong_sum", wrong_sum);
        cl_json_int(&j, "wrong_next", wrong_next);
        cl_json_number_array(&j, "compute_s", comp, (size_t)done);
        cl_json_number_array(&j, "comm_s", com, (size_t)done);
        cl_json_number_array(&j, "overlap_s", over, (size_t)done);
        cl_json_object_end(&j);
        CL_CHECK(cl_json_close(&j));
    }
    cudaFree(grad), cudaFree(sum), cudaFree(next);
    free(host), free(want);
    return CL_OK;
}

cl_result lab11_gpu_run(size_t count, int repeats, const char *json)
{
    int rank, size, ndev = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (repeats > MAX_REPEATS)
        repeats = MAX_REPEATS;
    CL_CUDA_CHECK(cudaGetDeviceCount(&ndev));
    if (ndev < 1) {
        cl_set_error("no GPU");
        return CL_ERR_UNSUPPORTED;
    }
    CL_CUDA_CHECK(cudaSetDevice(rank % ndev));
    lab11_gpu g;
    memset(&g, 0, sizeof g);
    g.task = (lab11_task){.count = count, .seed = 0x1ab11};
    ncclUniqueId id;
    if (rank == 0)
        CL_NCCL_CHECK(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    CL_NCCL_CHECK(ncclCommInitRank(&g.nccl, size, id, rank));
    cl_result rc = lab11_gpu_streams(&g);
    if (rc == CL_OK)
        rc = run(&g, rank, size, repeats, json);
    ncclCommDestroy(g.nccl);
    return rc;
}

#endif /* CL_HAVE_CUDA */
