/* gpu_check.h: the result convention for CUDA and NCCL calls (CUDA builds only).
 *
 * CL_CUDA_CHECK(call) and CL_NCCL_CHECK(call) record "call: error" with
 * cl_set_error() and return from the calling function, like CL_CHECK: a
 * missing GPU or driver (cudaErrorNoDevice, cudaErrorInsufficientDriver)
 * becomes CL_ERR_UNSUPPORTED, so graders report "skipped", anything else
 * CL_ERR_BACKEND.
 */
#ifndef COMMLAB_GPU_CHECK_H
#define COMMLAB_GPU_CHECK_H

#include <cuda_runtime.h>
#include <nccl.h>

#include "../result.h"

#define CL_CUDA_CHECK(call)                                                                        \
    do {                                                                                           \
        cudaError_t cl_cuda_rc_ = (call);                                                          \
        if (cl_cuda_rc_ != cudaSuccess) {                                                          \
            cl_set_error("%s: %s (%s)", #call, cudaGetErrorName(cl_cuda_rc_),                      \
                         cudaGetErrorString(cl_cuda_rc_));                                         \
            return cl_cuda_rc_ == cudaErrorNoDevice ||                                             \
                           cl_cuda_rc_ == cudaErrorInsufficientDriver                              \
                       ? CL_ERR_UNSUPPORTED                                                        \
                       : CL_ERR_BACKEND;                                                           \
        }                                                                                          \
    } while (0)

#define CL_NCCL_CHECK(call)                                                                        \
    do {                                                                                           \
        ncclResult_t cl_nccl_rc_ = (call);                                                         \
        if (cl_nccl_rc_ != ncclSuccess) {                                                          \
            cl_set_error("%s: %s", #call, ncclGetErrorString(cl_nccl_rc_));                        \
            return CL_ERR_BACKEND;                                                                 \
        }                                                                                          \
    } while (0)

#endif /* COMMLAB_GPU_CHECK_H */
