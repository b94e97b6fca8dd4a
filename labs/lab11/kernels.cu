/* kernels.cu: lab 11's compute kernel: compute.c's loop, one thread per element. */
#include <cuda_runtime.h>

#include "lab11_kernels.h"

__device__ static uint64_t mix(uint64_t x) /* cl_data_hash (common/data.c) */
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

__global__ static void compute(double *out, size_t count, int work, uint64_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x) {
        uint64_t x = mix(seed ^ i);
        for (int k = 0; k < work; k++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            x ^= x >> 29;
        }
        out[i] = (double)(x >> 40);
    }
}

extern "C" int lab11_kernel_launch(double *out, size_t count, int work, uint64_t seed,
                                   void *stream)
{
    int threads = 256;
    size_t blocks = (count + threads - 1) / threads;
    if (blocks > 65535)
        blocks = 65535;
    compute<<<(unsigned)blocks, threads, 0, (cudaStream_t)stream>>>(out, count, work, seed);
    return (int)cudaGetLastError();
}
