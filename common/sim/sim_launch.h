/* sim_launch.h: what a launch line's CUDA_VISIBLE_DEVICES and NCCL_P2P_LEVEL mean to the
 * simulator, for the labs whose plans set them (lab07, lab29). Both values come as the
 * fixed-size fields of a plan: at most len bytes, not necessarily terminated. */
#ifndef COMMLAB_SIM_LAUNCH_H
#define COMMLAB_SIM_LAUNCH_H

#include <stddef.h>

#include "result.h"

#define CL_SIM_LAUNCH_MAX_LEN 255 /* longest value read; the rest is cut */

/* The GPUs of one node's CUDA_VISIBLE_DEVICES ("3,6,0,..."): local rank i runs on local GPU
 * gpu[i], i < gpus; every one of the node's gpus (at most 64) GPUs is listed once. where
 * follows the value in the reason of CL_ERR_INVALID (" on node 1", or ""). */
cl_result cl_sim_launch_visible(const char *value, size_t len, int gpus, const char *where,
                                int *gpu);

/* NCCL_P2P_LEVEL as a cl_sim_path: LOC, NVL, PIX, PXB, PHB or SYS, and "" (unset) NCCL's
 * default PXB. Anything else is CL_ERR_INVALID with the reason. */
cl_result cl_sim_launch_p2p_level(const char *value, size_t len, int *level);

#endif /* COMMLAB_SIM_LAUNCH_H */
