/* driver.c: lab 07's plug-in: the student's plans, costed by the shared model of a training step.
 *
 *   lab07 plan      CASE       the student's plan for the case, and its cost
 *   lab07 reference CASE [layout=TP,PP,DP] [topo_json=OUT] [naive_only=1]   the index
 *                              mapping's best layout, the best plan the harness's own
 *                              search finds (not with naive_only) and the node as read
 *   lab07 cost      CASE tp= pp= dp= [order=tp-pp-dp] visible=3,6,..[;..] [p2p=NVL]
 *   lab07 split     tp= pp= dp= [order=]     the student's colours and keys of every rank
 *   lab07 visible   nodes= gpus= mapping=3,6,0,..   the student's CUDA_VISIBLE_DEVICES
 *   lab07 gpu       --tp N --pp N --dp N [--order O]   (gpu backend, under mpirun) TP
 *                              communicators from the student's colours, AllGather on them
 * CASE: topo=FILE [nodes=2] sm= nvlink= pci= sys= net= mem_gib= tflops= (a node type of
 * datasets/topologies/node-types.csv) params= layers= hidden= global_batch= [seq=2048]
 * [micro_batch=1] [budget=400] [mfu=0.4].
 *
 * The model (common/sim/sim_train.h over sim_channels.h, the channel model lab04 uses)
 * runs in the harness; the student's planner asks it through lab07_step_time() (model.c), at
 * most `budget` times per case, and the harness costs the final plan itself.
 *
 * This file holds the student's entries and the lab's table; the case and the model's costs
 * are in harness_model.c, the plan, reference and cost modes in harness_plans.c, the split,
 * visible and gpu modes in harness_ranks.c (lab07_harness.h).
 */
#include "lab07_harness.h"

#ifdef CL_STUDENT_SIDE

static cl_result split(cl_comm *c, void *args)
{
    (void)c;
    split_args *a = args;
    cl_result rc = CL_OK;
    for (int i = 0; i < a->count && i < LAB07_MAX_RANKS; i++) {
        a->status[i] =
            lab07_split_colors(a->tp, a->pp, a->dp, a->tp_pp_dp, a->first + i, &a->out[i]);
        rc = rc == CL_OK ? (cl_result)a->status[i] : rc;
    }
    return rc;
}

static cl_result visible(cl_comm *c, void *args)
{
    (void)c;
    visible_args *a = args;
    return lab07_visible_devices(a->gpu_of_rank, a->nodes, a->gpus_per_node, &a->plan);
}

static cl_result plan(cl_comm *c, void *args)
{
    plan_args *a = args;
    return lab07_choose_plan(c, &a->k, &a->plan);
}

CL_STUDENT_ENTRIES({"split", split}, {"visible", visible}, {"plan", plan});

#else

const cl_lab cl_lab_def = {
    .name = "lab07",
    .title = "8 卡拓扑优化: 并行布局与 rank 到 GPU 的映射",
    .modes =
        (const cl_mode[]){
            {.name = "plan",
             .help = "your plan for a case, costed by the harness's model",
             .cases = plan_case},
            {.name = "reference",
             .help = "the index mapping and the harness's best plan for a case",
             .cases = reference_case},
            {.name = "cost",
             .help = "the model's cost of the plan tp= pp= dp= visible= [order= p2p=]",
             .cases = cost_case},
            {.name = "split",
             .help = "your colours and keys of every rank (tp= pp= dp= [order=])",
             .cases = split_case},
            {.name = "visible",
             .help = "your CUDA_VISIBLE_DEVICES (nodes= gpus= mapping=)",
             .cases = visible_case},
            {.name = "gpu",
             .help = "TP AllGather on communicators split with your colours",
             .ranks = gpu_split,
             .backends = "gpu,cpu"},
            {0}},
    .options =
        (const cl_option[]){
            {.name = "tp", .help = "gpu: TP size", .fallback = "2"},
            {.name = "pp", .help = "gpu: PP size", .fallback = "1"},
            {.name = "dp", .help = "gpu: DP size", .fallback = "1"},
            {.name = "order", .help = "gpu: tp-dp-pp or tp-pp-dp", .fallback = "tp-dp-pp"},
            {0}},
    .lab_op = lab_op,
};

#endif
