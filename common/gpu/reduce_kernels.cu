/* reduce_kernels.cu: elementwise reduction kernels for the "gpu" backend. */
#include <cstdint>

#include "../dtype.h"
#include "reduce_kernels.h"

template <typename T, int OP> __global__ void reduce_kernel(T *inout, const T *in, size_t count)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
        T x = inout[i], y = in[i];
        if (OP == CL_SUM)
            inout[i] = x + y;
        else if (OP == CL_PROD)
            inout[i] = x * y;
        else if (OP == CL_MAX)
            inout[i] = x > y ? x : y;
        else
            inout[i] = x < y ? x : y;
    }
}

template <typename T>
static cudaError_t launch_type(void *inout, const void *in, size_t count, int op, cudaStream_t s)
{
    unsigned blocks = (unsigned)((count + 255) / 256);
    if (blocks > 1024)
        blocks = 1024;
    if (blocks == 0)
        return cudaSuccess;
    T *a = (T *)inout;
    const T *b = (const T *)in;
    switch (op) {
    case CL_SUM: reduce_kernel<T, CL_SUM><<<blocks, 256, 0, s>>>(a, b, count); break;
    case CL_PROD: reduce_kernel<T, CL_PROD><<<blocks, 256, 0, s>>>(a, b, count); break;
    case CL_MAX: reduce_kernel<T, CL_MAX><<<blocks, 256, 0, s>>>(a, b, count); break;
    case CL_MIN: reduce_kernel<T, CL_MIN><<<blocks, 256, 0, s>>>(a, b, count); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

extern "C" int cl_gpu_reduce_launch(void *inout, const void *in, size_t count, int dtype, int op,
                                    void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    switch (dtype) {
    case CL_INT32: return launch_type<int32_t>(inout, in, count, op, s);
    case CL_INT64: return launch_type<int64_t>(inout, in, count, op, s);
    case CL_FLOAT32: return launch_type<float>(inout, in, count, op, s);
    case CL_FLOAT64: return launch_type<double>(inout, in, count, op, s);
    default: return cudaErrorInvalidValue;
    }
}
