/* driver.c: lab 21's plug-in: Megatron-LM's rank generator, its communicators, and a plan.
 *
 *   lab21 groups tp=2 cp=1 ep=1 dp=4 pp=2 order=tp-cp-ep-dp-pp token=dp   (or --cases FILE)
 *       your RankGenerator's groups for one token
 *   lab21 comms [--config "tp=2 cp=1 pp=2 ep=2 etp=1 order=tp-cp-ep-dp-pp;..."]
 *       your communicators on every rank (any backend), as the harness reads them
 *   lab21 plan --backend sim --system dgx-a100 --nranks 32 [--layers 40 --hidden 5120 ...]
 *       your plan for the model on that cluster, its simulated step, and the best plan's
 *       (--plan "tp=2 cp=1 pp=4 order=tp-cp-ep-dp-pp" simulates that plan instead)
 *
 * The harness never takes the student's word for a group: after
 * lab21_init_parallel returns, this file's student side shows every
 * communicator to the harness (lab21_ops.h), which reads its members with its
 * own agreement over that communicator and compares them with Megatron-LM's
 * (harness_megatron.c). The plan's step runs on the student's communicators
 * (harness_step.c).
 *
 * This file holds the student's entries and the lab's table; the harness reads the
 * communicators in harness_comms.c, the groups and comms modes are in harness_checks.c and
 * the plan mode in harness_plan.c (lab21_harness.h).
 */
#include <string.h>

#include "harness/harness.h"
#include "lab21_harness.h"
#include "lab21_ops.h"

#ifdef CL_STUDENT_SIDE

static cl_result generator(cl_comm *c, void *args)
{
    (void)c;
    gen_args *a = args;
    lab21_generator g;
    memset(&g, 0, sizeof g);
    a->init_status = lab21_generator_init(&g, &a->s, a->order);
    if (a->init_status != CL_OK)
        return a->init_status;
    return lab21_get_ranks(&g, a->token, a->groups, LAB21_MAX_WORLD, &a->ngroups, &a->gsize);
}

/* Build the communicators, then show each one to the harness. */
static cl_result init(cl_comm *c, void *args)
{
    init_args *a = args;
    lab21_comms out;
    memset(&out, 0, sizeof out);
    cl_result rc = lab21_init_parallel(c, &a->p, &out);
    if (rc != CL_OK) /* a refusal is the answer: the harness reads the status */
        return rc;
    for (int k = 0; k < LAB21_KINDS; k++) {
        lab21_group_args g = {.kind = k};
        rc = cl_lab_call(out.c[k] ? out.c[k] : c, out.c[k] ? LAB21_OP_GROUP : LAB21_OP_NONE, &g,
                         sizeof g);
        if (rc != CL_OK)
            return rc;
    }
    return CL_OK;
}

static cl_result plan(cl_comm *c, void *args)
{
    (void)c;
    plan_args *a = args;
    return lab21_plan_job(&a->j, &a->plan);
}

CL_STUDENT_ENTRIES({"generator", generator}, {"init", init}, {"plan", plan});

#else

static const cl_mode modes[] = {
    {.name = "groups", .help = "your RankGenerator's groups for one token", .cases = groups_case},
    {.name = "comms",
     .help = "your communicators of each --config, as the harness reads them",
     .ranks = comms_mode},
    {.name = "plan",
     .help = "your plan's simulated step, and the best plan's",
     .ranks = plan_mode,
     .backends = "sim"},
    {0}};

static const cl_option options[] = {
    {.name = "config",
     .help = "\"tp=2 cp=1 pp=2 ep=2 etp=1 order=tp-cp-ep-dp-pp;...\"  comms: configurations",
     .fallback = "tp=2 cp=1 pp=2 ep=2 etp=1 order=tp-cp-ep-dp-pp"},
    {.name = "plan", .help = "\"tp=2 cp=1 pp=4 order=tp-cp-ep-dp-pp\"  plan: simulate this plan"},
    {.name = "search", .help = "yes|no  plan: also find the best plan", .fallback = "yes"},
    {.name = "layers", .help = "N  plan: the model's layers", .fallback = "40"},
    {.name = "hidden", .help = "N  plan: hidden size", .fallback = "5120"},
    {.name = "heads", .help = "N  plan: attention heads", .fallback = "40"},
    {.name = "seq", .help = "N  plan: sequence length", .fallback = "2048"},
    {.name = "vocab", .help = "N  plan: vocabulary", .fallback = "51200"},
    {.name = "batch", .help = "N  plan: global batch (sequences)", .fallback = "256"},
    {.name = "micro", .help = "N  plan: micro-batch (sequences)", .fallback = "1"},
    {.name = "tflops", .help = "X  plan: one GPU's achieved TFLOP/s (default: half the peak)"},
    {.name = "mem-gb", .help = "X  plan: one GPU's memory, GB"},
    {0}};

const cl_lab cl_lab_def = {
    .name = "lab21",
    .title = "Megatron 并行组划分",
    .modes = modes,
    .options = options,
    .lab_op = lab_op,
};

#endif
