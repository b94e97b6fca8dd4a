/* lab11_kernels.h: lab 11's compute kernel (kernels.cu), callable from C. */
#ifndef COMMLAB_LAB11_KERNELS_H
#define COMMLAB_LAB11_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Launch out[i] = lab11_compute's value of element i (i < count) on stream (a
 * cudaStream_t). Returns a cudaError_t value (0 on success). */
int lab11_kernel_launch(double *out, size_t count, int work, uint64_t seed, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* COMMLAB_LAB11_KERNELS_H */
