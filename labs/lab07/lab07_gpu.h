/* lab07_gpu.h: lab 07 on real GPUs: the plan, TP AllGather through ncclCommSplit. */
#ifndef COMMLAB_LAB07_GPU_H
#define COMMLAB_LAB07_GPU_H

#include "lab07.h"

/* Under mpirun with one rank per GPU: plan the layout on topo_path (NULL: this
 * machine's `nvidia-smi topo -m`), or use rank r -> GPU r when identity is set,
 * bind each rank to its GPU, split TP communicators with ncclCommSplit, verify
 * and time an AllGather of `bytes`, and write JSON (rank 0). Returns
 * CL_ERR_UNSUPPORTED in a build without CUDA/NCCL or on a machine without GPUs. */
cl_result lab07_gpu_run(const char *topo_path, const lab07_node *node, const lab07_layout *l,
                        const lab07_workload *w, double bytes, int identity, const char *json,
                        int *argc, char ***argv);

#endif /* COMMLAB_LAB07_GPU_H */
