/* lab11_gpu.h: lab 11's GPU run (gpu.c), compute kernel and NCCL on two streams. */
#ifndef COMMLAB_LAB11_GPU_H
#define COMMLAB_LAB11_GPU_H

#include "lab11.h"

/* Under mpirun with one rank per GPU (MPI initialised): size the kernel to the
 * AllReduce, then time compute alone, ncclAllReduce alone and the student's
 * overlapped step, interleaved `repeats` times, verifying every overlapped
 * step; rank 0 writes JSON. CL_ERR_UNSUPPORTED without CUDA/NCCL or GPUs. */
cl_result lab11_gpu_run(size_t count, int repeats, const char *json);

#endif /* COMMLAB_LAB11_GPU_H */
