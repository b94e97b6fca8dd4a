/* sim_train_levels.c: one node's training models, one per NCCL_P2P_LEVEL, built when asked for. */
#include <stdlib.h>

#include "sim_train_levels.h"

static void drop_models(cl_sim_train_levels *l)
{
    for (int i = 0; i < CL_SIM_PATH_COUNT; i++) {
        cl_sim_train_free(l->train[i]);
        if (l->net[i])
            cl_sim_topo_net_free(l->net[i]);
        free(l->net[i]);
        l->net[i] = NULL;
        l->train[i] = NULL;
    }
}

cl_result cl_sim_train_levels_load(cl_sim_train_levels *l, const char *path,
                                   const cl_sim_topo_params *p, int sm)
{
    drop_models(l);
    l->params = *p;
    if (!(p->nvlink_gbps > 0)) /* a node without NVLink: the net builder wants it positive */
        l->params.nvlink_gbps = 1;
    l->sm = sm;
    return cl_topo_load(path, &l->topo);
}

cl_result cl_sim_train_levels_model(cl_sim_train_levels *l, int level, cl_sim_train **out)
{
    if (!l->train[level]) {
        cl_sim_topo_params p = l->params;
        p.p2p_level = level;
        l->net[level] = calloc(1, sizeof *l->net[level]);
        if (!l->net[level])
            return CL_ERR_NOMEM;
        CL_CHECK(cl_sim_topo_net_build(&l->topo, &p, l->net[level]));
        CL_CHECK(cl_sim_train_new(l->net[level], l->sm, &l->train[level]));
    }
    *out = l->train[level];
    return CL_OK;
}
