/* p2p.h: the point-to-point interface that collective labs are written against.
 *
 * One student source runs on every backend:
 *   "cpu"  MPI processes (Open MPI; shared memory or TCP)         p2p_mpi.c
 *   "gpu"  one GPU per MPI process, NCCL send/recv, CUDA memory   p2p_nccl.c
 *   "sim"  ranks as coroutines on a simulated machine, virtual time  p2p_sim.c
 *
 * A program hands its per-rank body to cl_launch(), which starts the ranks
 * (MPI processes or simulated coroutines) and calls body(comm, arg) once per
 * rank. Rank bodies must keep their state on the stack or in arg-derived
 * per-rank memory: under "sim" all ranks share one address space.
 *
 * Buffers passed to cl_send/cl_recv must come from cl_mem_alloc() (device
 * memory on "gpu"). Use cl_mem_upload/download to move host data in and out,
 * cl_reduce_local/cl_copy_local for local work on such buffers.
 *
 * Grouping (as ncclGroupStart/End): between cl_group_start() and
 * cl_group_end() sends and receives are only posted; cl_group_end() returns
 * when all of them are complete. Outside a group each call is blocking.
 * Matching is in order per (sender, receiver) pair, as in MPI and NCCL.
 */
#ifndef COMMLAB_P2P_H
#define COMMLAB_P2P_H

#include <stddef.h>

#include "dtype.h"
#include "result.h"

typedef struct cl_comm cl_comm;

typedef struct cl_launch_opts {
    const char *backend;   /* "cpu", "gpu" or "sim" */
    int nranks;            /* sim only: number of simulated ranks (cpu/gpu: from mpirun) */
    const char *system;    /* sim only: recorded system name, e.g. "dgx-a100" */
    int *argc;             /* for MPI_Init; may be NULL */
    char ***argv;
} cl_launch_opts;

typedef cl_result (*cl_rank_body)(cl_comm *comm, void *arg);

/* Start the ranks and run body on each. Returns the first failure of any
 * rank on this process (on "cpu"/"gpu": of this process's rank), or
 * CL_ERR_UNSUPPORTED when the backend cannot run here (no GPU, no
 * simulator), with the reason in cl_last_error(). */
cl_result cl_launch(const cl_launch_opts *opts, cl_rank_body body, void *arg);

/* This rank's index and the number of ranks. These functions can't fail. */
int cl_comm_rank(const cl_comm *c);
int cl_comm_size(const cl_comm *c);
const char *cl_comm_backend(const cl_comm *c);

cl_result cl_send(cl_comm *c, const void *buf, size_t bytes, int peer);
cl_result cl_recv(cl_comm *c, void *buf, size_t bytes, int peer);
cl_result cl_group_start(cl_comm *c);
cl_result cl_group_end(cl_comm *c);

/* Send to dst and receive from src concurrently (a group of two). */
cl_result cl_sendrecv(cl_comm *c, const void *sendbuf, size_t sendbytes, int dst,
                      void *recvbuf, size_t recvbytes, int src);

cl_result cl_barrier(cl_comm *c);

cl_result cl_mem_alloc(cl_comm *c, size_t bytes, void **out);
cl_result cl_mem_free(cl_comm *c, void *p);
cl_result cl_mem_upload(cl_comm *c, void *dst, const void *host_src, size_t bytes);
cl_result cl_mem_download(cl_comm *c, void *host_dst, const void *src, size_t bytes);

/* Local work on cl_mem_alloc'd buffers (a kernel on "gpu"). */
cl_result cl_reduce_local(cl_comm *c, void *inout, const void *in, size_t count, cl_dtype t,
                          cl_op op);
cl_result cl_copy_local(cl_comm *c, void *dst, const void *src, size_t bytes);

/* Seconds on this rank's clock: wall clock on cpu/gpu (after the device has
 * finished queued work), virtual time on sim. */
double cl_comm_time(cl_comm *c);

/* Collective of the backend's own library (MPI_Allreduce, ncclAllReduce),
 * used by drivers as the performance baseline. Never from student code. */
cl_result cl_baseline_allreduce(cl_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                cl_dtype t, cl_op op);

/* Bus bandwidth (GB/s, nccl-tests' 2(p-1)/p factor) of the backend's own
 * AllReduce of `bytes` of floats: one warm-up, then `repeats` samples, each the
 * mean of `iters` calls after a barrier, into samples[0..repeats). For drivers
 * that measure the library under different settings (a graph file, NCCL_ALGO). */
cl_result cl_baseline_busbw(cl_comm *c, size_t bytes, int iters, int repeats, double *samples);

#endif /* COMMLAB_P2P_H */
