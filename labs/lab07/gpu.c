/* gpu.c: lab 07's GPU run: ranks bound to GPUs by the plan, TP communicators from ncclCommSplit.
 *
 * In the manner of nccl-tests' NCCL_TESTS_SPLIT: one world communicator, then
 * ncclCommSplit(world, tp_color, tp_key) per rank; each TP group AllGathers
 * `bytes` (every rank contributes bytes / tp), verified byte for byte, then
 * timed; busbw = bytes * (tp - 1) / tp / time as nccl-tests computes it.
 */
#include "lab07_gpu.h"

#ifndef CL_HAVE_CUDA

cl_result lab07_gpu_run(const char *topo_path, const lab07_node *node, const lab07_layout *l,
                        const lab07_workload *w, double bytes, int identity, const char *json,
                        int *argc, char ***argv)
{
    (void)topo_path, (void)node, (void)l, (void)w, (void)bytes, (void)identity, (void)json;
    (void)argc, (void)argv;
    cl_set_error("this build has no CUDA/NCCL");
    return CL_ERR_UNSUPPORTED;
}

#else

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu_check.h"

static cl_result load_topology(const char *path, cl_topo *t)
{
    if (path)
        return cl_topo_load(path, t);
    FILE *f = popen("nvidia-smi topo -m", "r");
    if (!f) {
        cl_set_error("cannot run nvidia-smi topo -m");
        return CL_ERR_UNSUPPORTED;
    }
    cl_result rc = cl_topo_parse_smi(f, "nvidia-smi topo -m", t);
    pclose(f);
    return rc;
}

/* The AllGather of the TP group, verified, then timed over iters calls. */
static cl_result allgather(ncclComm_t tp, int tp_rank, int tp_size, size_t bytes,
                           cudaStream_t s, double *busbw, long *wrong)
{
    size_t chunk = bytes / (size_t)tp_size;
    char *buf;
    unsigned char *host = malloc(chunk * (size_t)tp_size);
    if (!host)
        return CL_ERR_NOMEM;
    CL_CUDA_CHECK(cudaMalloc((void **)&buf, chunk * (size_t)tp_size));
    CL_CUDA_CHECK(cudaMemset(buf, 0, chunk * (size_t)tp_size));
    CL_CUDA_CHECK(cudaMemset(buf + chunk * (size_t)tp_rank, tp_rank + 1, chunk));
    CL_NCCL_CHECK(ncclAllGather(buf + chunk * (size_t)tp_rank, buf, chunk, ncclUint8, tp, s));
    CL_CUDA_CHECK(cudaStreamSynchronize(s));
    CL_CUDA_CHECK(cudaMemcpy(host, buf, chunk * (size_t)tp_size, cudaMemcpyDeviceToHost));
    *wrong = 0;
    for (size_t i = 0; i < chunk * (size_t)tp_size; i++)
        *wrong += host[i] != (unsigned char)(i / chunk + 1);
    const int iters = 20;
    for (int i = 0; i < 5; i++) /* warm-up */
        CL_NCCL_CHECK(ncclAllGather(buf + chunk * (size_t)tp_rank, buf, chunk, ncclUint8, tp, s));
    CL_CUDA_CHECK(cudaStreamSynchronize(s));
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        CL_NCCL_CHECK(ncclAllGather(buf + chunk * (size_t)tp_rank, buf, chunk, ncclUint8, tp, s));
    CL_CUDA_CHECK(cudaStreamSynchronize(s));
    double t = (MPI_Wtime() - t0) / iters;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    *busbw = (double)(chunk * (size_t)tp_size) * (tp_size - 1) / tp_size / t / 1e9;
    CL_CUDA_CHECK(cudaFree(buf));
    free(host);
    return CL_OK;
}

static cl_result run(const char *topo_path, const lab07_node *node, const lab07_layout *l,
                     const lab07_workload *w, double bytes, int identity, const char *json)
{
    int rank, size, ndev = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CL_CUDA_CHECK(cudaGetDeviceCount(&ndev));
    if (ndev < size || size != l->tp * l->pp * l->dp || size > LAB07_MAX_GPUS) {
        cl_set_error("%d ranks, %d GPUs, layout %dx%dx%d: need ranks = tp*pp*dp <= GPUs", size,
                     ndev, l->tp, l->pp, l->dp);
        return CL_ERR_INVALID;
    }
    static cl_topo t;
    CL_CHECK(load_topology(topo_path, &t));
    lab07_plan p;
    memset(&p, 0, sizeof p);
    p.ngpus = size;
    CL_CHECK(lab07_choose_plan(&t, size, node, l, w, &p));
    if (identity)
        for (int r = 0; r < size; r++)
            p.gpu_of_rank[r] = r;
    CL_CUDA_CHECK(cudaSetDevice(p.gpu_of_rank[rank]));
    ncclUniqueId id;
    if (rank == 0)
        CL_NCCL_CHECK(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t world, tp;
    CL_NCCL_CHECK(ncclCommInitRank(&world, size, id, rank));
    CL_NCCL_CHECK(ncclCommSplit(world, p.tp_color[rank], p.tp_key[rank], &tp, NULL));
    int tp_rank = -1, tp_size = 0;
    CL_NCCL_CHECK(ncclCommUserRank(tp, &tp_rank));
    CL_NCCL_CHECK(ncclCommCount(tp, &tp_size));
    long bad_split = tp_size != l->tp || tp_rank != p.tp_key[rank];
    cudaStream_t s;
    CL_CUDA_CHECK(cudaStreamCreate(&s));
    double busbw = 0;
    long wrong = 0;
    CL_CHECK(allgather(tp, tp_rank, tp_size, (size_t)bytes, s, &busbw, &wrong));
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &bad_split, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CL_NCCL_CHECK(ncclCommDestroy(tp));
    CL_NCCL_CHECK(ncclCommDestroy(world));
    if (rank != 0)
        return CL_OK;
    cl_json j;
    CL_CHECK(cl_json_open(&j, json));
    cl_json_object_start(&j, NULL);
    cl_json_int(&j, "ranks", size);
    cl_json_bool(&j, "identity", identity);
    long long gpus[LAB07_MAX_GPUS];
    for (int r = 0; r < size; r++)
        gpus[r] = p.gpu_of_rank[r];
    cl_json_int_array(&j, "gpu_of_rank", gpus, (size_t)size);
    cl_json_number(&j, "bytes", bytes);
    cl_json_number(&j, "tp_allgather_busbw_gbps", busbw);
    cl_json_int(&j, "wrong_bytes", wrong);
    cl_json_int(&j, "bad_split_ranks", bad_split);
    cl_json_object_end(&j);
    return cl_json_close(&j);
}

cl_result lab07_gpu_run(const char *topo_path, const lab07_node *node, const lab07_layout *l,
                        const lab07_workload *w, double bytes, int identity, const char *json,
                        int *argc, char ***argv)
{
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        cl_set_error("MPI_Init failed");
        return CL_ERR_BACKEND;
    }
    cl_result rc = run(topo_path, node, l, w, bytes, identity, json);
    MPI_Finalize();
    return rc;
}

#endif /* CL_HAVE_CUDA */
