/* lab29.c: chapter 1's 256-server case: the step of a plan, and the plan.
 *
 * You write two functions, in the order of the handout:
 *   1. lab29_predict()  the whole job's step from the simulator's probe of a plan
 *   2. lab29_choose()   the layout, the mapping and NCCL_P2P_LEVEL with the shortest step
 * lab29_probe_plan() (lab29.h) asks the simulator about one plan; each call counts.
 */
#include <stdio.h>
#include <string.h>

#include "lab29.h"

cl_result lab29_predict(const lab29_case *k, const lab29_plan *p, const lab29_probe *pr,
                        lab29_step *out)
{
    // TODO(lab29) 1: the step of the whole job (handout, "模型"): micro-batches, the TP and
    // DP ring times from the probe, memory; CL_ERR_INVALID for a tp or a batch that does not
    // divide.
    (void)k, (void)p, (void)pr, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab29_choose(cl_comm *comm, const lab29_case *k, lab29_plan *out)
{
    // TODO(lab29) 2: choose tp, CUDA_VISIBLE_DEVICES and NCCL_P2P_LEVEL with the shortest
    // predicted step, probing at most k->budget plans.
    (void)comm, (void)k, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}
