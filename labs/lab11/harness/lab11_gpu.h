/* lab11_gpu.h: lab 11's run on real GPUs (gpu.c), for the harness's mode gpu. */
#ifndef COMMLAB_LAB11_GPU_H
#define COMMLAB_LAB11_GPU_H

#include "harness/overlap.h"
#include "lab11.h"

/* The SMs of this rank's GPU. CL_ERR_UNSUPPORTED without a GPU. */
cl_result lab11_gpu_sms(int *sms);

/* reps samples of: the layers' kernels alone; NCCL's AllReduce of the gradients
 * alone (its own channels); the step under plan p: each kernel on a stream of
 * the lowest priority, each bucket's ncclAllReduce on a stream of the highest,
 * with NCCL's channels limited to p->channels (ncclConfig_t minCTAs/maxCTAs).
 * Kernels are sized to m->layer_s; everything is checked on the device (wrong:
 * the gradients' elements and the kernels' outputs'). */
cl_result lab11_gpu_steps(cl_comm *c, const lab11_model *m, const lab11_plan *p, int reps,
                          cl_overlap_sample *out);

#endif /* COMMLAB_LAB11_GPU_H */
