/* lab11.h: types and functions of lab 11 (overlapping communication with computation).
 * The driver (driver.c, netem.c, compute.c, gpu.c, kernels.cu) calls the functions you
 * write in lab11.c. */
#ifndef COMMLAB_LAB11_H
#define COMMLAB_LAB11_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "commlab.h"

/* One step's computation: out[i] for i < count, each element `work` rounds of
 * integer mixing (exact: every value is an integer below 2^24). */
typedef struct lab11_task {
    size_t count;       /* elements of grad, sum and next */
    int work;           /* mixing rounds per element (the driver sizes it) */
    uint64_t seed;
    double elem_s;      /* measured seconds of compute per element */
    double segment_s;   /* wire time of one segment of the emulated link (netem.c) */
} lab11_task;

/* --- given (netem.c): the emulated link ------------------------------------
 * On the cpu backend every AllReduce of this lab crosses an emulated network
 * link (netem.c, see the handout): these five MPI calls are routed there. You
 * write standard MPI code; the calls below behave as MPI's, plus the link. */
int lab11_net_iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                         MPI_Op op, MPI_Comm comm, MPI_Request *request);
int lab11_net_test(MPI_Request *request, int *flag, MPI_Status *status);
int lab11_net_testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]);
int lab11_net_wait(MPI_Request *request, MPI_Status *status);
int lab11_net_waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
#define MPI_Iallreduce lab11_net_iallreduce
#define MPI_Test lab11_net_test
#define MPI_Testall lab11_net_testall
#define MPI_Wait lab11_net_wait
#define MPI_Waitall lab11_net_waitall

/* --- given (compute.c): the computation ----------------------------------- */

/* out[i] = the value of element i, for begin <= i < end. This function can't fail. */
void lab11_compute(const lab11_task *t, double *out, size_t begin, size_t end);

/* --- written by the student in lab11.c, in the order of the handout -------- */

/* Elements to compute between two progress calls so that the emulated link
 * is fed at least 4 times per segment: floor(segment_s / 4 / elem_s), at
 * least 1 and at most count. */
size_t lab11_chunk_elems(const lab11_task *t);

/* One overlapped step on the cpu backend: sum = AllReduce(grad) over comm
 * (MPI_SUM of doubles, started with MPI_Iallreduce) while next[0..count) is
 * computed with lab11_compute(), progressing the AllReduce with MPI_Test
 * between chunks; return when both are done. grad must not be modified while
 * the AllReduce is in flight. Returns CL_OK or CL_ERR_BACKEND. */
cl_result lab11_overlap_step(MPI_Comm comm, const lab11_task *t, double *grad, double *sum,
                             double *next);

#ifdef CL_HAVE_CUDA
#include <cuda_runtime.h>
#include <nccl.h>

/* The GPU side of one rank (gpu.c fills nccl and the task). */
typedef struct lab11_gpu {
    ncclComm_t nccl;
    cudaStream_t compute; /* created by lab11_gpu_streams */
    cudaStream_t comm;    /* created by lab11_gpu_streams */
    lab11_task task;
} lab11_gpu;

/* Given (kernels.cu): enqueue the computation of out[0..count) on stream s. */
cl_result lab11_gpu_compute(const lab11_task *t, double *out, cudaStream_t s);

/* Create g->compute and g->comm: the communication stream with the greatest
 * priority of cudaDeviceGetStreamPriorityRange, the compute stream with the
 * least, both non-blocking. Returns CL_OK or CL_ERR_BACKEND. */
cl_result lab11_gpu_streams(lab11_gpu *g);

/* One overlapped step on the GPU: lab11_gpu_compute() of next on g->compute and
 * ncclAllReduce(grad -> sum) on g->comm, both in flight at once; return when
 * both streams are done. Device pointers. Returns CL_OK or CL_ERR_BACKEND. */
cl_result lab11_overlap_step_gpu(lab11_gpu *g, const double *grad, double *sum, double *next);
#endif

#endif /* COMMLAB_LAB11_H */
