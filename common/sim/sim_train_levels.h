/* sim_train_levels.h: the training model (sim_train.h) of one recorded node under each
 * NCCL_P2P_LEVEL, for the labs that cost launch plans on a case's node (lab07, lab29).
 *
 * A case loads its node once; a plan may ask for any P2P level. The net and the model of a
 * level are built the first time it is asked for and kept, with NCCL's channels of every
 * GPU set the model saw, until the next node is loaded.
 */
#ifndef COMMLAB_SIM_TRAIN_LEVELS_H
#define COMMLAB_SIM_TRAIN_LEVELS_H

#include "result.h"
#include "sim_topo.h"
#include "sim_train.h"
#include "topo.h"

typedef struct cl_sim_train_levels {
    cl_topo topo;              /* the node as read */
    cl_sim_topo_params params; /* every level's bandwidths and nodes (p2p_level aside) */
    int sm;
    cl_sim_topo_net *net[CL_SIM_PATH_COUNT]; /* by NCCL_P2P_LEVEL, NULL until asked for */
    cl_sim_train *train[CL_SIM_PATH_COUNT];
} cl_sim_train_levels;

/* Free l's models and read the node at path (cl_topo_load's errors); the models to come
 * are of that node with bandwidths *p (nvlink_gbps 0 for a node without NVLink) and compute
 * capability sm. l starts zeroed. */
cl_result cl_sim_train_levels_load(cl_sim_train_levels *l, const char *path,
                                   const cl_sim_topo_params *p, int sm);

/* The model of l's node with NCCL_P2P_LEVEL level (a cl_sim_path), built on the first call:
 * cl_sim_topo_net_build's errors, CL_ERR_NOMEM. */
cl_result cl_sim_train_levels_model(cl_sim_train_levels *l, int level, cl_sim_train **out);

#endif /* COMMLAB_SIM_TRAIN_LEVELS_H */
