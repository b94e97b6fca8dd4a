/* lab11.c: lab 11, communication competing with computation, and overlapping them.
 *
 * A training step both computes (the next layer's gradients) and all-reduces
 * the gradients it already has. Done one after the other, the step costs
 * compute + comm; overlapped, close to max(compute, comm). On the cpu backend
 * you start the AllReduce with MPI_Iallreduce and keep it moving with
 * MPI_Test while computing; on a GPU you put the compute kernel and
 * ncclAllReduce on two streams. Read labs/lab11/README.md first; the TODOs
 * below follow its sections. Build with `make lab11`, grade with `./grade lab11`.
 */
#include "lab11.h"

size_t lab11_chunk_elems(const lab11_task *t)
{
    /* BEGIN SOLUTION */
    double per = t->elem_s > 0 ? t->segment_s / 4.0 / t->elem_s : (double)t->count;
    size_t chunk = per < 1 ? 1 : per > (double)t->count ? t->count : (size_t)per;
    return chunk ? chunk : 1;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab11) 1: how many elements to compute between two MPI_Test calls.
    //   The link moves one segment in t->segment_s seconds and only takes the
    //   next one when you call into MPI; one element costs t->elem_s seconds.
    //   Return floor(segment_s / 4 / elem_s), at least 1, at most t->count.
    (void)t;
    return 0;
    END SKELETON */
}

cl_result lab11_overlap_step(MPI_Comm comm, const lab11_task *t, double *grad, double *sum,
                             double *next)
{
    /* BEGIN SOLUTION */
    MPI_Request req;
    if (MPI_Iallreduce(grad, sum, (int)t->count, MPI_DOUBLE, MPI_SUM, comm, &req) != MPI_SUCCESS) {
        cl_set_error("MPI_Iallreduce failed");
        return CL_ERR_BACKEND;
    }
    size_t chunk = lab11_chunk_elems(t);
    int done = 0;
    for (size_t begin = 0; begin < t->count; begin += chunk) {
        size_t end = begin + chunk < t->count ? begin + chunk : t->count;
        lab11_compute(t, next, begin, end);
        if (!done && MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            cl_set_error("MPI_Test failed");
            return CL_ERR_BACKEND;
        }
    }
    if (!done && MPI_Wait(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        cl_set_error("MPI_Wait failed");
        return CL_ERR_BACKEND;
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab11) 2: the overlapped step.
    //   1. MPI_Iallreduce(grad, sum, count, MPI_DOUBLE, MPI_SUM, comm, &req): it
    //      returns at once; grad and sum belong to MPI until the request completes.
    //   2. compute next[] chunk by chunk with lab11_compute(t, next, begin, end),
    //      chunk = lab11_chunk_elems(t) (TODO 1), and call MPI_Test(&req, ...)
    //      after every chunk: without those calls the AllReduce does not move.
    //   3. MPI_Wait(&req, ...) once the computation is done (not before!).
    //   Return CL_ERR_BACKEND (after cl_set_error) if an MPI call fails.
    //   This lab allows MPI_Iallreduce, MPI_Test(all) and MPI_Wait(all); no
    //   other MPI communication.
    (void)comm, (void)t, (void)grad, (void)sum, (void)next;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

#ifdef CL_HAVE_CUDA
cl_result lab11_gpu_streams(lab11_gpu *g)
{
    /* BEGIN SOLUTION */
    int least = 0, greatest = 0;
    if (cudaDeviceGetStreamPriorityRange(&least, &greatest) != cudaSuccess ||
        cudaStreamCreateWithPriority(&g->comm, cudaStreamNonBlocking, greatest) != cudaSuccess ||
        cudaStreamCreateWithPriority(&g->compute, cudaStreamNonBlocking, least) != cudaSuccess) {
        cl_set_error("cannot create the prioritised streams");
        return CL_ERR_BACKEND;
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab11) 3: two streams with priorities.
    //   cudaDeviceGetStreamPriorityRange(&least, &greatest) (greatest is the
    //   numerically smaller value), then cudaStreamCreateWithPriority() with
    //   cudaStreamNonBlocking: g->comm at `greatest`, g->compute at `least`, so
    //   NCCL's kernel gets SMs as soon as it is launched.
    (void)g;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab11_overlap_step_gpu(lab11_gpu *g, const double *grad, double *sum, double *next)
{
    /* BEGIN SOLUTION */
    CL_CHECK(lab11_gpu_compute(&g->task, next, g->compute));
    if (ncclAllReduce(grad, sum, g->task.count, ncclDouble, ncclSum, g->nccl, g->comm) !=
            ncclSuccess ||
        cudaStreamSynchronize(g->comm) != cudaSuccess ||
        cudaStreamSynchronize(g->compute) != cudaSuccess) {
        cl_set_error("the overlapped GPU step failed");
        return CL_ERR_BACKEND;
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab11) 4: the overlapped GPU step.
    //   Enqueue lab11_gpu_compute(&g->task, next, g->compute), then
    //   ncclAllReduce(grad, sum, count, ncclDouble, ncclSum, g->nccl, g->comm);
    //   only then synchronise both streams (cudaStreamSynchronize).
    (void)g, (void)grad, (void)sum, (void)next;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
#endif /* CL_HAVE_CUDA */
