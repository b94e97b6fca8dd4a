/* gpu.h: what the "gpu" backend gives a lab's own harness code (kernels, NCCL calls, probes).
 *
 * A lab whose plug-in launches its own kernels or calls NCCL directly (an
 * overlap benchmark, a forced algorithm) must use the rank's device, stream
 * and communicator from here, never choose a device itself (rank % ndev puts
 * two ranks on one GPU, which NCCL refuses with "Duplicate GPU detected") and
 * never use the legacy default stream (it is not ordered with the backend's
 * streams). Pointers are void * so that plain C code can include this file.
 *
 * Every function returns CL_ERR_UNSUPPORTED, with the reason, on a comm of
 * another backend or in a build without the GPU backend.
 */
#ifndef COMMLAB_GPU_H
#define COMMLAB_GPU_H

#include <stddef.h>

#include "../p2p.h"

/* The CUDA device this rank uses (already current on the calling thread). */
cl_result cl_gpu_device(const cl_comm *c, int *device);

/* The rank's stream for NCCL (a cudaStream_t): work a lab puts on it is
 * ordered with the rank's transfers and the library's collectives. */
cl_result cl_gpu_stream(const cl_comm *c, void **stream);

/* The rank's ncclComm_t for c. */
cl_result cl_gpu_nccl(const cl_comm *c, void **nccl_comm);

/* The device address behind [buf, buf + bytes) of a buffer of this rank from
 * cl_mem_alloc (CL_ERR_INVALID, with the reason, for anything else). */
cl_result cl_gpu_pointer(const cl_comm *c, const void *buf, size_t bytes, void **dev);

/* Wait, within the run's deadline, until the rank's stream has finished all
 * the work queued on it (polling NCCL's asynchronous errors). */
cl_result cl_gpu_sync(cl_comm *c);

#endif /* COMMLAB_GPU_H */
