/* p2p.h: the point-to-point interface that every rank program is written against.
 *
 * A rank program (a collective, a pipeline schedule, a ping-pong) sees one
 * cl_comm per communicator and these calls. It has two implementations with
 * the same behaviour:
 *   - in the harness, over a backend: "cpu" (MPI processes, p2p_mpi.c), "gpu"
 *     (one GPU per rank, NCCL, gpu/p2p_nccl.c) and "sim" (simulated ranks on a
 *     recorded machine, in virtual time, p2p_sim.c);
 *   - in the student's program (student/), where every call is forwarded to
 *     the harness, which checks it, records it and performs it (boundary/).
 *
 * Buffers. Buffers passed to cl_send/cl_recv and the local operations come
 * from cl_mem_alloc(). They behave as device memory: on "cpu" they are host
 * memory the rank may read and write; on "gpu" and "sim" they are handles that
 * host code must not dereference (move data with cl_mem_upload/download, or
 * better, not at all). Pointer arithmetic inside a buffer is allowed; a
 * transfer that runs past the end of its buffer fails with CL_ERR_INVALID.
 *
 * Ordering. Messages between a pair of ranks on a communicator match in the
 * order they were posted, as in MPI and NCCL. There is no eager delivery: a
 * send may wait until its receive is posted, so two ranks that both send
 * first, outside a group, can deadlock (as they can on NCCL).
 *
 * Groups (as ncclGroupStart/End): between cl_group_start() and cl_group_end()
 * sends and receives are only posted; cl_group_end() returns when all of them
 * are complete. Groups nest; the outermost end completes them. Outside a
 * group, cl_send and cl_recv block until the transfer is complete.
 *
 * Non-blocking operations (as MPI_Isend/Irecv): cl_isend/cl_irecv start a
 * transfer and return a request at once; cl_wait, cl_waitall or a cl_test that
 * reports completion finish it. A buffer in flight must not be touched.
 * Progress is not asynchronous: a transfer advances while the rank is inside
 * any call of this interface (as MPI without a progress thread).
 *
 * Every function returns CL_OK or a failure code with a reason in
 * cl_last_error(); a rank that gets a failure should return it.
 */
#ifndef COMMLAB_P2P_H
#define COMMLAB_P2P_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "result.h"

typedef struct cl_comm cl_comm;

/* A non-blocking operation in flight. id 0 means "no operation" (a finished
 * request is reset to it). */
typedef struct cl_request {
    int id;
} cl_request;

#define CL_AGREE_MAX 16 /* values one cl_agree() call may combine */

/* This rank's index, the number of ranks, and the backend's name ("cpu",
 * "gpu", "sim"). These functions can't fail. */
int cl_comm_rank(const cl_comm *c);
int cl_comm_size(const cl_comm *c);
const char *cl_comm_backend(const cl_comm *c);
/* 1 when c's backend is the simulator: its clock is simulated time, so one timed sample is
 * exact and repeats add nothing. */
int cl_comm_on_sim(const cl_comm *c);

/* Blocking transfers (or posts, inside a group). peer is a rank of c. */
cl_result cl_send(cl_comm *c, const void *buf, size_t bytes, int peer);
cl_result cl_recv(cl_comm *c, void *buf, size_t bytes, int peer);

/* Send to dst and receive from src at once (a group of the two). */
cl_result cl_sendrecv(cl_comm *c, const void *sendbuf, size_t sendbytes, int dst, void *recvbuf,
                      size_t recvbytes, int src);

cl_result cl_group_start(cl_comm *c);
cl_result cl_group_end(cl_comm *c);

/* Non-blocking transfers: *req identifies the transfer until it completes. */
cl_result cl_isend(cl_comm *c, const void *buf, size_t bytes, int peer, cl_request *req);
cl_result cl_irecv(cl_comm *c, void *buf, size_t bytes, int peer, cl_request *req);

/* Wait for one request, or for n of them; each finished request becomes {0}.
 * Requests that are already {0} are skipped. */
cl_result cl_wait(cl_comm *c, cl_request *req);
cl_result cl_waitall(cl_comm *c, int n, cl_request *reqs);

/* *done = 1 (and *req = {0}) when the request has completed, else 0. */
cl_result cl_test(cl_comm *c, cl_request *req, int *done);

/* Every rank of c waits until all have arrived. */
cl_result cl_barrier(cl_comm *c);

/* Split c as MPI_Comm_split and ncclCommSplit do: ranks that pass the same
 * color form one new communicator, ordered by key (then by rank in c). A
 * negative color gives *out = NULL (the rank joins none). Every rank of c must
 * call it. Free the result with cl_comm_free(). */
cl_result cl_comm_split(cl_comm *c, int color, int key, cl_comm **out);
cl_result cl_comm_free(cl_comm *c);

/* Agreement: every rank passes n <= CL_AGREE_MAX integers and gets back the
 * element-wise op (CL_SUM, CL_MAX, CL_MIN) over all ranks of c. For small
 * control values (a status, a size), not for data. */
cl_result cl_agree(cl_comm *c, cl_op op, int64_t *values, int n);

/* Buffers, and copies between host memory and a buffer. */
cl_result cl_mem_alloc(cl_comm *c, size_t bytes, void **out);
cl_result cl_mem_free(cl_comm *c, void *p);
cl_result cl_mem_upload(cl_comm *c, void *dst, const void *host_src, size_t bytes);
cl_result cl_mem_download(cl_comm *c, void *host_dst, const void *src, size_t bytes);

/* Local work on buffers (a kernel on "gpu", charged at memory bandwidth on
 * "sim"): inout[i] = inout[i] op in[i] for i < count; and a copy (the ranges
 * may overlap, as memmove). */
cl_result cl_reduce_local(cl_comm *c, void *inout, const void *in, size_t count, cl_dtype t,
                          cl_op op);
cl_result cl_copy_local(cl_comm *c, void *dst, const void *src, size_t bytes);

/* Seconds on this rank's clock: the wall clock on "cpu" and "gpu" (once the
 * device has finished queued work), virtual time on "sim". */
double cl_comm_time(cl_comm *c);

#endif /* COMMLAB_P2P_H */
