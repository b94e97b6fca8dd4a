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
    // TODO(lab11) 1: how many elements to compute between two MPI_Test calls.
    //   The link moves one segment in t->segment_s seconds and only takes the
    //   next one when you call into MPI; one element costs t->elem_s seconds.
    //   Return floor(segment_s / 4 / elem_s), at least 1, at most t->count.
    (void)t;
    return 0;
}

cl_result lab11_overlap_step(MPI_Comm comm, const lab11_task *t, double *grad, double *sum,
                             double *next)
{
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
}

#ifdef CL_HAVE_CUDA
cl_result lab11_gpu_streams(lab11_gpu *g)
{
    // TODO(lab11) 3: two streams with priorities.
    //   cudaDeviceGetStreamPriorityRange(&least, &greatest) (greatest is the
    //   numerically smaller value), then cudaStreamCreateWithPriority() with
    //   cudaStreamNonBlocking: g->comm at `greatest`, g->compute at `least`, so
    //   NCCL's kernel gets SMs as soon as it is launched.
    (void)g;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab11_overlap_step_gpu(lab11_gpu *g, const double *grad, double *sum, double *next)
{
    // TODO(lab11) 4: the overlapped GPU step.
    //   Enqueue lab11_gpu_compute(&g->task, next, g->compute), then
    //   ncclAllReduce(grad, sum, count, ncclDouble, ncclSum, g->nccl, g->comm);
    //   only then synchronise both streams (cudaStreamSynchronize).
    (void)g, (void)grad, (void)sum, (void)next;
    return CL_ERR_NOT_IMPLEMENTED;
}
#endif /* CL_HAVE_CUDA */
