/* lab07.c: lab 07, topology optimisation of one or two 8-GPU servers.
 *
 * Chapter 1's case: a TP group of 8 spread over two NVLink domains is slow;
 * keeping each TP group inside one domain and running DP across is faster.
 * You write the communicator split of a TP x PP x DP layout, the
 * CUDA_VISIBLE_DEVICES that put every rank on its GPU, and the planner that
 * chooses the layout, the rank order and the mapping for a model on a node
 * (or two), with a limited number of calls of the harness's step model.
 * Read labs/lab07/README.md first; the TODOs below follow its sections.
 * Build with `make lab07`, grade with `./grade lab07`.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab07.h"

cl_result lab07_split_colors(int tp, int pp, int dp, int tp_pp_dp, int rank, lab07_split *out)
{
    // TODO(lab07) 1: the colours and keys for ncclCommSplit.
    //   Find rank's TP index, DP index and stage in the rank order tp_pp_dp selects
    //   (lab07.h). Ranks of one TP group share (DP index, stage), of one DP group (TP
    //   index, stage), of one pipeline (TP index, DP index): one colour (>= 0) per
    //   group, and keys that order a group by its own index.
    (void)tp, (void)pp, (void)dp, (void)tp_pp_dp, (void)rank, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab07_visible_devices(const int *gpu_of_rank, int nodes, int gpus_per_node, lab07_plan *p)
{
    // TODO(lab07) 2: CUDA_VISIBLE_DEVICES of every node.
    //   Rank r is local rank r % gpus_per_node of node r / gpus_per_node, and a local
    //   rank runs on the GPU its position in CUDA_VISIBLE_DEVICES names. Reject a
    //   mapping that moves a rank to another node or puts two ranks on one GPU.
    (void)gpu_of_rank, (void)nodes, (void)gpus_per_node, (void)p;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab07_choose_plan(cl_comm *comm, const lab07_case *k, lab07_plan *out)
{
    // TODO(lab07) 3: the plan with the shortest step.
    //   Choose tp, pp, dp (the model must fit in a GPU's memory; the global batch must
    //   split into whole micro-batches over dp), the rank order and every rank's GPU,
    //   and fill *out with what a user would set (TODO 2 writes CUDA_VISIBLE_DEVICES).
    //   lab07_step_time() gives the harness's cost of a plan, at most k->budget times:
    //   far fewer than the mappings of one node (8! = 40320), so reason about the
    //   topology (k->node) to decide which plans are worth a call.
    (void)comm, (void)k, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}
