/* reduce_kernels.h: device-side local reduction used by the "gpu" backend. */
#ifndef COMMLAB_REDUCE_KERNELS_H
#define COMMLAB_REDUCE_KERNELS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Launch inout[i] = inout[i] op in[i] on stream (a cudaStream_t). dtype and op
 * are cl_dtype and cl_op values. Returns a cudaError_t value (0 on success). */
int cl_gpu_reduce_launch(void *inout, const void *in, size_t count, int dtype, int op,
                         void *stream);

#ifdef __cplusplus
}
#endif

#endif /* COMMLAB_REDUCE_KERNELS_H */
