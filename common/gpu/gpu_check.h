/* gpu_check.h: the result convention for CUDA and NCCL calls (CUDA builds only).
 *
 * CL_CUDA_CHECK(call) and CL_NCCL_CHECK(call) record "call: error" with
 * cl_set_error() and return from the calling function, like CL_CHECK: a
 * missing GPU or driver (cudaErrorNoDevice, cudaErrorInsufficientDriver, the
 * driver's stub library) becomes CL_ERR_UNSUPPORTED, so graders report
 * "skipped", anything else CL_ERR_BACKEND. NCCL's own explanation of its last
 * failure (ncclGetLastError: "Cuda failure 'out of memory'", "Duplicate GPU
 * detected ...") is part of the reason.
 */
#ifndef COMMLAB_GPU_CHECK_H
#define COMMLAB_GPU_CHECK_H

#include <cuda_runtime.h>
#include <nccl.h>

#include "../result.h"

/* CL_ERR_UNSUPPORTED when e says there is no usable GPU here, else CL_ERR_BACKEND. */
static inline cl_result cl_cuda_result(cudaError_t e)
{
    return e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorStubLibrary
               ? CL_ERR_UNSUPPORTED
               : CL_ERR_BACKEND;
}

#define CL_CUDA_CHECK(call)                                                                        \
    do {                                                                                           \
        cudaError_t cl_cuda_rc_ = (call);                                                          \
        if (cl_cuda_rc_ != cudaSuccess) {                                                          \
            cl_set_error("%s: %s (%s)", #call, cudaGetErrorName(cl_cuda_rc_),                      \
                         cudaGetErrorString(cl_cuda_rc_));                                         \
            return cl_cuda_result(cl_cuda_rc_);                                                    \
        }                                                                                          \
    } while (0)

#define CL_NCCL_CHECK(call)                                                                        \
    do {                                                                                           \
        ncclResult_t cl_nccl_rc_ = (call);                                                         \
        if (cl_nccl_rc_ != ncclSuccess) {                                                          \
            const char *cl_nccl_why_ = ncclGetLastError(NULL);                                     \
            cl_set_error("%s: %s%s%s", #call, ncclGetErrorString(cl_nccl_rc_),                     \
                         cl_nccl_why_ &&*cl_nccl_why_ ? ": " : "",                                 \
                         cl_nccl_why_ ? cl_nccl_why_ : "");                                        \
            return CL_ERR_BACKEND;                                                                 \
        }                                                                                          \
    } while (0)

#endif /* COMMLAB_GPU_CHECK_H */
