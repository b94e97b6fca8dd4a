/* boot.h: the processes of a "gpu" run, and how they exchange small values (CUDA builds only).
 *
 * The NCCL backend needs a launcher for its ranks and a few host-side
 * exchanges: NCCL's unique id, the device each process takes, agreement on
 * whether every rank can go on, and communicator splits. With MPI
 * (boot_mpi.c) a run is mpirun's processes; a build without MPI
 * (boot_solo.c) runs one process, which is all one GPU needs, and refuses
 * to pretend when a launcher started several.
 *
 * Every call either succeeds or returns a failure with a reason; none blocks
 * longer than the slowest rank takes to reach it (the harness's watchdog ends
 * a process whose peer never does).
 */
#ifndef COMMLAB_GPU_BOOT_H
#define COMMLAB_GPU_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include "../dtype.h"
#include "../result.h"

typedef struct cl_boot cl_boot; /* a group of processes: the world, or a split of it */

/* Start (MPI_Init unless already done) and return the world. */
cl_result cl_boot_start(int *argc, char ***argv, cl_boot **world);

/* End the run (MPI_Finalize). This function can't fail. */
void cl_boot_finish(void);

/* End every process of the run at once with this exit status (MPI_Abort). */
void cl_boot_abort(int status);

/* This process's rank and the group's size. These functions can't fail. */
int cl_boot_rank(const cl_boot *b);
int cl_boot_size(const cl_boot *b);

/* The processes of b on this node: this one's index among them and their
 * number, and all[i * bytes ..] = the `bytes` bytes of `mine` of node rank i. */
cl_result cl_boot_node(cl_boot *b, const void *mine, size_t bytes, void *all, int *local_rank,
                       int *local_size);

/* bytes of buf from rank root to every rank. */
cl_result cl_boot_bcast(cl_boot *b, void *buf, size_t bytes, int root);

/* v[0..n) = the element-wise op (CL_SUM, CL_MAX, CL_MIN) over the ranks. */
cl_result cl_boot_agree(cl_boot *b, cl_op op, int64_t *v, int n);

cl_result cl_boot_barrier(cl_boot *b);

/* Split as MPI_Comm_split: *out is NULL for a negative color; *world_of
 * (malloc'ed, the caller frees it) maps the new group's ranks to world ranks. */
cl_result cl_boot_split(cl_boot *b, int color, int key, cl_boot **out, int **world_of);

/* Free a group from cl_boot_split or cl_boot_start. This function can't fail. */
void cl_boot_free(cl_boot *b);

/* Seconds on this process's wall clock. This function can't fail. */
double cl_boot_time(void);

#endif /* COMMLAB_GPU_BOOT_H */
