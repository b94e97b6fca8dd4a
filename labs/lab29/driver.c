/* driver.c: lab 29's plug-in: chapter 1's 256-server case, simulated on two servers and
 * extrapolated to the whole job.
 *
 *   lab29 predict   CASE tp= visible= [p2p=]   the student's step of that plan, and the harness's
 *   lab29 plan      CASE                       the student's plan, its step and the baseline's
 *   lab29 reference CASE [only_tp=4]           the harness's best plan, and the baseline
 *   lab29 cost      CASE tp= visible= [p2p=]   the harness's step of any plan
 * CASE (every key optional; the defaults are chapter 1's job): topo= nodes= sm= nvlink= pci=
 * sys= net= mem_gib= tflops= params= layers= hidden= seq= micro_batch= global_batch= mfu=
 * budget=.
 *
 * The simulator (common/sim/sim_train.h: NCCL's channels of every group on the recorded
 * server, all groups of a kind at once, max-min sharing) runs on two servers joined by their
 * NICs; the whole job's step follows from its bandwidths and latencies by the handout's
 * formulas (full_step in harness_model.c), which the student writes too.
 *
 * This file holds the student's entries and the lab's table; the case and a plan's keys are
 * read in harness_case.c, a plan's step is modelled in harness_model.c (with the probe the
 * student's program asks for), its columns are written in harness_report.c, and the modes
 * are in harness_modes.c (lab29_harness.h).
 */
#include "lab29_harness.h"

#ifdef CL_STUDENT_SIDE

static cl_result predict(cl_comm *c, void *args)
{
    (void)c;
    predict_args *a = args;
    return lab29_predict(&a->k, &a->plan, &a->probe, &a->step);
}

static cl_result choose(cl_comm *c, void *args)
{
    choose_args *a = args;
    return lab29_choose(c, &a->k, &a->plan);
}

CL_STUDENT_ENTRIES({"predict", predict}, {"choose", choose});

#else

const cl_lab cl_lab_def = {
    .name = "lab29",
    .title = "典型案例复盘: 第 1 章的 256 台服务器",
    .modes =
        (const cl_mode[]){
            {.name = "predict",
             .help = "your step of the plan tp= visible= [p2p=], and the harness's",
             .cases = predict_case},
            {.name = "plan",
             .help = "your plan for a case, its step and the baseline's",
             .cases = plan_case},
            {.name = "reference",
             .help = "the harness's best plan for a case [only_tp=], and the baseline",
             .cases = reference_case},
            {.name = "cost",
             .help = "the harness's step of the plan tp= visible= [p2p=] (no budget)",
             .cases = cost_case},
            {0}},
    .lab_op = lab_op,
};

#endif
