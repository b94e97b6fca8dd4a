/* driver.c: lab 11's plug-in: a modelled GPU whose SMs compute and communicate, and the step.
 *
 *   lab11 model ranks=8 sms=132 layers=4 layer_s=1e-4 layer_bytes=8388608 alpha_s=3.4e-6
 *         link_gbps=370 slot_bytes=524288 max_channels=32 channels=8 bucket_bytes=1.6e7
 *         parts=4 bytes=3.2e7
 *       your model's AllReduce time (bytes, channels), step time (the plan given),
 *       and your plan for that machine
 *   lab11 step [--backend cpu|sim] [--repeats 3]      (2 or more ranks)
 *       measures the link and the library's AllReduce of the gradients, sizes the
 *       kernels to --ratio x that AllReduce, asks your plan, then, each repeat:
 *       the kernels alone, the library's AllReduce alone, your overlapped step
 *   lab11 gpu [--repeats 5]                            (gpu, one rank per GPU)
 *       your plan on real GPUs: see harness/gpu.c
 *
 * The modelled GPU (the lab's operation LAB11_OP_COMPUTE) is the harness's:
 * a kernel part lasts layer_s / parts x S / (S - k), k the channels of the
 * rank's transfers in flight when it starts (common/boundary/inspect.h), in
 * virtual time on "sim" and spinning on "cpu" while MPI keeps moving the data,
 * as a GPU's copy engines and communication kernels do without the host.
 *
 * This file holds the student's entries and the lab's table; the modelled GPU is in
 * harness_device.c, the model mode in harness_model.c, the step and gpu modes in
 * harness_step.c (lab11_harness.h); the run on real GPUs in harness/gpu.c.
 */
#include "harness/harness.h"
#include "lab11_harness.h"

#ifdef CL_STUDENT_SIDE

static cl_result model(cl_comm *c, void *args)
{
    (void)c;
    model_args *a = args;
    a->allreduce_s = lab11_allreduce_s(&a->m, a->bytes, a->channels);
    a->step_s = lab11_step_s(&a->m, &a->p);
    cl_clear_error();
    a->plan_status = lab11_plan_step(&a->m, &a->plan);
    return CL_OK;
}

static cl_result plan(cl_comm *c, void *args)
{
    (void)c;
    step_args *a = args;
    return lab11_plan_step(&a->m, &a->p);
}

static cl_result step(cl_comm *c, void *args)
{
    step_args *a = args;
    return lab11_step(c, &a->m, &a->p, a->grads, a->scratch);
}

/* The baseline: every kernel, whole, with nothing else going on. */
static cl_result kernels(cl_comm *c, void *args)
{
    step_args *a = args;
    for (int l = a->m.layers - 1; l >= 0; l--)
        CL_CHECK(lab11_compute(c, l, 0, 1));
    return CL_OK;
}

CL_STUDENT_ENTRIES({"model", model}, {"plan", plan}, {"step", step}, {"kernels", kernels});

#else

static const cl_mode modes[] = {
    {.name = "model",
     .help = "your model's times and your plan for one machine",
     .cases = model_case},
    {.name = "step",
     .help = "kernels alone, the library's AllReduce alone, your step",
     .ranks = step_mode,
     .min_ranks = 2,
     .backends = "cpu,sim"},
    {.name = "gpu",
     .help = "your plan on real GPUs: kernels and bucketed ncclAllReduce",
     .ranks = gpu_mode,
     .min_ranks = 2,
     .backends = "gpu"},
    {0}};

static const cl_option options[] = {
    {.name = "layers", .help = "N  step: layers of the backward pass", .fallback = "24"},
    {.name = "sms", .help = "S  step: SMs of the modelled GPU (H100 SXM: 132)", .fallback = "132"},
    {.name = "ratio", .help = "R  step: kernels = R x the library's AllReduce", .fallback = "2.5"},
    {.name = "grad", .help = "BYTES  step: gradients per rank (cpu 32M, sim 256M)"},
    {.name = "slot", .help = "BYTES  step: a channel's largest message (cpu 4M, sim 512K)"},
    {0}};

const cl_lab cl_lab_def = {
    .name = "lab11",
    .title = "SM 资源与计算通信重叠",
    .modes = modes,
    .options = options,
    .lab_op = lab_op,
    .arena_bytes = (size_t)256 << 20, /* "cpu": the gradients, the result, the scratch */
};

#endif
