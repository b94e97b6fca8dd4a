/* launch.h: starting a run's ranks, and the libraries' own collectives (the harness's side only).
 *
 * cl_launch() starts the ranks of a backend and runs body(comm, arg) on each:
 *   "cpu"  this process is one MPI rank (the job was started by mpirun, or
 *          runs alone as a singleton); body runs once.
 *   "gpu"  the same, with one GPU per rank and NCCL for transfers.
 *   "sim"  opts->nranks simulated ranks in this process, in virtual time.
 * It returns the first failure of a rank of this process, or
 * CL_ERR_UNSUPPORTED (with the reason) when the backend cannot run here.
 *
 * cl_library_coll() is the performance baseline of every collective lab:
 * MPI's collective on "cpu", NCCL's on "gpu", and on "sim" the algorithm
 * NCCL would run, written over the interface and simulated like the student's
 * code (library.c).
 */
#ifndef COMMLAB_LAUNCH_H
#define COMMLAB_LAUNCH_H

#include "coll.h"
#include "p2p.h"

typedef struct cl_launch_opts {
    const char *backend; /* "cpu", "gpu" or "sim" */
    int nranks;          /* "sim": simulated ranks */
    const char *system;  /* "sim": a recorded system's name or file */
    int *argc;           /* for MPI_Init; may be NULL */
    char ***argv;
} cl_launch_opts;

typedef cl_result (*cl_rank_body)(cl_comm *comm, void *arg);

cl_result cl_launch(const cl_launch_opts *opts, cl_rank_body body, void *arg);

/* The backend launchers (p2p_mpi.c, gpu/p2p_nccl.c, p2p_sim.c). */
cl_result cl_mpi_launch(const cl_launch_opts *opts, cl_rank_body body, void *arg);
cl_result cl_nccl_launch(const cl_launch_opts *opts, cl_rank_body body, void *arg);
cl_result cl_sim_launch(const cl_launch_opts *opts, cl_rank_body body, void *arg);

/* One rank in this process, with host buffers and local work but no
 * transfers (p2p_solo.c): where the harness calls pure functions. */
cl_result cl_solo_launch(const cl_launch_opts *opts, cl_rank_body body, void *arg);

/* The backend library's own collective of kind on c with the arguments of a
 * (coll.h). CL_ERR_UNSUPPORTED when the library has no such call for these
 * arguments (NCCL's ReduceScatter with uneven blocks, say). */
cl_result cl_library_coll(cl_comm *c, cl_coll_kind kind, const cl_coll_args *a);

/* The per-backend versions, and the algorithms over the interface that "sim"
 * uses (library.c). */
cl_result cl_mpi_library(cl_comm *c, cl_coll_kind kind, const cl_coll_args *a);
cl_result cl_nccl_library(cl_comm *c, cl_coll_kind kind, const cl_coll_args *a);
cl_result cl_p2p_library(cl_comm *c, cl_coll_kind kind, const cl_coll_args *a);

/* The library's pipelined chain Broadcast over the interface (root, root+1,
 * ..., root-1), in chunks of chunk_bytes rounded down to whole elements (at
 * least one): what "sim" runs for BROADCAST, with cl_pipeline_chunk(). */
cl_result cl_p2p_chain_broadcast(cl_comm *c, const cl_coll_args *a, size_t chunk_bytes);

/* The library's chunk size for a pipelined chain of `bytes` (its Broadcast
 * and Reduce on "sim"): bytes/32 clamped to 64 KiB .. 4 MiB. The harness's
 * side only: it is the baseline's choice, never the student's. This function
 * can't fail. */
size_t cl_pipeline_chunk(size_t bytes);

#endif /* COMMLAB_LAUNCH_H */
