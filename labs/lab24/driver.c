/* driver.c: lab 24's plug-in: a backward pass that produces gradients, and DDP's buckets over it.
 *
 *   lab24 assign sizes=4096,1024,... order=1,0,... first_cap=1048576 cap=26214400 last_small=0
 *       your bucket assignment for those gradients and caps
 *   lab24 step [--backend cpu|sim] [--repeats 3]            (2 or more ranks)
 *       measures the link and the library's AllReduce of all the gradients, sizes the
 *       backward pass to --ratio x that AllReduce, asks your caps and buckets, then,
 *       each repeat: the backward pass alone, the library's AllReduce alone, your step
 *   lab24 gpu [--repeats 5]                                  (gpu, one rank per GPU)
 *       your buckets on real GPUs: see harness_gpu.c
 *
 * The backward pass (the lab's operation LAB24_OP_BACKWARD) is the harness's: a
 * GPT-style stack of layers whose kernels run from the last layer to the first,
 * each cut into parts no longer than the quantum. A kernel's gradients appear in
 * the flat gradient buffer when its last part ends: in virtual time on "sim", and
 * on "cpu" while the harness spins and keeps MPI moving the posted transfers, as a
 * GPU computes while its copy engines and communication kernels move data.
 *
 * This file holds the student's entries and the lab's table; the modes are in
 * harness_assign.c, harness_step.c (with the backward pass) and harness_gpu.c, what
 * the step and gpu modes give the student's plan in harness_plan.c, the model network
 * and DDP's assignment in harness_net.c (harness_lab24.h).
 */
#include "harness_lab24.h"

#ifdef CL_STUDENT_SIDE

static cl_result plan(cl_comm *c, void *args)
{
    (void)c;
    plan_args *a = args;
    if (!a->forced)
        CL_CHECK(lab24_choose(&a->m, &a->caps));
    return lab24_assign(&a->m, &a->caps, &a->b);
}

static cl_result assign(cl_comm *c, void *args)
{
    (void)c;
    plan_args *a = args;
    return lab24_assign(&a->m, &a->caps, &a->b);
}

static cl_result step(cl_comm *c, void *args)
{
    step_args *a = args;
    return lab24_step(c, &a->m, &a->b, a->grads, a->scratch);
}

/* iters ring steps: send to the next rank, receive from the previous, at once. */
static cl_result ring(cl_comm *c, void *args)
{
    ring_args *a = args;
    int r = cl_comm_rank(c), p = cl_comm_size(c);
    for (int i = 0; i < a->iters; i++)
        CL_CHECK(cl_sendrecv(c, a->buf, a->bytes, (r + 1) % p, a->buf + a->bytes, a->bytes,
                             (r + p - 1) % p));
    return CL_OK;
}

/* The baseline: the whole backward pass with nothing else going on. */
static cl_result kernels(cl_comm *c, void *args)
{
    (void)args;
    int ready[2], nready, left = 1;
    while (left > 0)
        CL_CHECK(lab24_backward(c, ready, &nready, &left));
    return CL_OK;
}

CL_STUDENT_ENTRIES({"plan", plan}, {"assign", assign}, {"step", step}, {"kernels", kernels},
                   {"ring", ring});

#else

static const cl_mode modes[] = {
    {.name = "assign",
     .help = "your buckets for the sizes, order and caps of each case",
     .cases = assign_case},
    {.name = "step",
     .help = "the backward pass alone, the library's AllReduce alone, your step",
     .ranks = step_mode,
     .min_ranks = 2,
     .backends = "cpu,sim"},
    {.name = "gpu",
     .help = "your buckets on real GPUs: kernels and a bucketed ncclAllReduce on two streams",
     .ranks = gpu_mode,
     .min_ranks = 2,
     .backends = "gpu"},
    {0}};

static const cl_option options[] = {
    {.name = "layers", .help = "N  step: layers of the model (cpu 8, sim 16, gpu 16)"},
    {.name = "hidden", .help = "H  step: hidden size (cpu 256, sim 512, gpu 1024)"},
    {.name = "ratio", .help = "R  step: backward pass = R x the library's AllReduce (2.5)"},
    {.name = "quantum", .help = "S  step: longest part of a kernel, seconds (cpu 5e-4, sim 1e-5)"},
    {.name = "probe", .help = "BYTES  step: the message that measures the bandwidth (4M)"},
    {.name = "cap", .help = "BYTES  step: try this bucket cap instead of your choice (DDP: 25M)"},
    {.name = "first-cap", .help = "BYTES  step: try this first-bucket cap (DDP: 1M)"},
    {.name = "last-small", .help = "0|1  step: try the small bucket last"},
    {0}};

const cl_lab cl_lab_def = {
    .name = "lab24",
    .title = "计算通信重叠",
    .modes = modes,
    .options = options,
    .lab_op = lab_op,
    .arena_bytes = (size_t)256 << 20, /* "cpu": the gradients, the result, the scratch */
};

#endif
