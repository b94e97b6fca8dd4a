/* compute_kernels.cu: the stand-in compute kernel and the device-side checks (compute_kernels.h).
 */
#include <cuda_runtime.h>

#include "compute_kernels.h"

__device__ static float value_of(uint64_t seed, size_t i, int work)
{
    uint64_t x = seed ^ (i * 0x9e3779b97f4a7c15ULL);
    for (int k = 0; k < work; k++) { /* a serial chain: no vectorising it away */
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        x ^= x >> 29;
    }
    return (float)(x >> 40); /* an integer below 2^24: exact in a float */
}

__global__ static void compute(float *out, size_t count, int work, uint64_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = value_of(seed, i, work);
}

__global__ static void fill(float *buf, size_t count, float value)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x)
        buf[i] = value;
}

__global__ static void count_ne(const float *buf, size_t count, float value,
                                unsigned long long *wrong)
{
    unsigned long long mine = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x)
        mine += buf[i] != value;
    if (mine)
        atomicAdd(wrong, mine);
}

__global__ static void count_compute(const float *out, size_t count, int work, uint64_t seed,
                                     unsigned long long *wrong)
{
    unsigned long long mine = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x)
        mine += out[i] != value_of(seed, i, work);
    if (mine)
        atomicAdd(wrong, mine);
}

static unsigned grid(size_t count)
{
    size_t blocks = (count + 255) / 256;
    return (unsigned)(blocks > 4096 ? 4096 : blocks ? blocks : 1);
}

extern "C" int cl_gpu_compute_launch(float *out, size_t count, int work, uint64_t seed, int blocks,
                                     void *stream)
{
    compute<<<(unsigned)blocks, 256, 0, (cudaStream_t)stream>>>(out, count, work, seed);
    return (int)cudaGetLastError();
}

extern "C" int cl_gpu_fill_launch(float *buf, size_t count, float value, void *stream)
{
    fill<<<grid(count), 256, 0, (cudaStream_t)stream>>>(buf, count, value);
    return (int)cudaGetLastError();
}

extern "C" int cl_gpu_count_ne_launch(const float *buf, size_t count, float value,
                                      unsigned long long *wrong, void *stream)
{
    count_ne<<<grid(count), 256, 0, (cudaStream_t)stream>>>(buf, count, value, wrong);
    return (int)cudaGetLastError();
}

extern "C" int cl_gpu_count_compute_launch(const float *out, size_t count, int work, uint64_t seed,
                                           unsigned long long *wrong, void *stream)
{
    count_compute<<<grid(count), 256, 0, (cudaStream_t)stream>>>(out, count, work, seed, wrong);
    return (int)cudaGetLastError();
}
