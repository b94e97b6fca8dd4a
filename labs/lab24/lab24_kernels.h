/* lab24_kernels.h: lab 24's GPU kernels (kernels.cu), callable from the harness's C. */
#ifndef COMMLAB_LAB24_KERNELS_H
#define COMMLAB_LAB24_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Each launch returns a cudaError_t value (0 on success); stream is a cudaStream_t. */

/* The stand-in for a backward kernel: out[i] = `work` rounds of integer mixing of
 * (seed, i), for i < count, over `blocks` blocks of 256 threads. */
int lab24_kernel_compute(float *out, size_t count, int work, uint64_t seed, int blocks,
                         void *stream);

/* buf[i] = value for i < count: a kernel writing its gradient. */
int lab24_kernel_fill(float *buf, size_t count, float value, void *stream);

/* *wrong += elements of buf that differ from value (wrong: device memory). */
int lab24_kernel_count_ne(const float *buf, size_t count, float value, unsigned long long *wrong,
                          void *stream);

#ifdef __cplusplus
}
#endif

#endif /* COMMLAB_LAB24_KERNELS_H */
