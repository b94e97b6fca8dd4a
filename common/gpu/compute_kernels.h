/* compute_kernels.h: the stand-in compute kernel of the labs that overlap communication with
 * computation on real GPUs (lab11, lab24), and the device-side checks of their results.
 * Callable from the harness's C; compute_kernels.cu. */
#ifndef COMMLAB_COMPUTE_KERNELS_H
#define COMMLAB_COMPUTE_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Each launch returns a cudaError_t value (0 on success); stream is a cudaStream_t. */

/* The stand-in for a backward kernel: out[i] = `work` rounds of integer mixing of
 * (seed, i), for i < count, over `blocks` blocks of 256 threads. */
int cl_gpu_compute_launch(float *out, size_t count, int work, uint64_t seed, int blocks,
                          void *stream);

/* buf[i] = value for i < count: a kernel writing its gradient. */
int cl_gpu_fill_launch(float *buf, size_t count, float value, void *stream);

/* *wrong += elements of buf that differ from value (wrong: device memory). */
int cl_gpu_count_ne_launch(const float *buf, size_t count, float value, unsigned long long *wrong,
                           void *stream);

/* *wrong += elements of out that are not cl_gpu_compute_launch's values. */
int cl_gpu_count_compute_launch(const float *out, size_t count, int work, uint64_t seed,
                                unsigned long long *wrong, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* COMMLAB_COMPUTE_KERNELS_H */
