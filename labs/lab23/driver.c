/* driver.c: lab 23's plug-in: the MLP block with tensor parallelism and with sequence parallelism.
 *
 *   lab23 block [--seq 128 --batch 2 --hidden 128 --ffn 512 --dropout 0.1] [--repeats 5]
 *       on every rank (mpirun -np t), each repeat: the given tensor-parallel block
 *       (tp.c), then your sequence-parallel one, forward and backward, each call
 *       with fresh inputs; every output checked against a double-precision
 *       reference of the whole block; the activation memory each keeps, the bytes
 *       each sends and its time, all measured here
 *   lab23 model seq=2048 batch=1 hidden=12288 heads=96 layers=96 t=8 ...
 *       your accounting of activation memory and step time, and your plan
 *
 * Activation memory is what the rank still holds, when forward returns, in
 * buffers that forward allocated (the harness's record of every cl_mem_alloc);
 * the student's program's own memory (malloc, static arrays) is watched from
 * outside, in /proc, so activations cannot hide there. After forward the
 * harness overwrites x and y, as the next layer would: backward has only what
 * forward saved.
 *
 * This file holds the student's entries and the lab's table; the block mode is in
 * harness_block.c, what it sees of the student's program in harness_watch.c, its
 * reference in harness_ref.c, and the model mode in harness_model.c (harness_ref.h).
 */
#include "harness_ref.h"

#ifdef CL_STUDENT_SIDE

/* Each block call also says how many multiply-adds the given matmul did in it. */
static cl_result counted(block_args *a, cl_result rc, double before)
{
    a->macs = lab23_matmul_macs() - before;
    return rc;
}

static cl_result tp_forward(cl_comm *c, void *args)
{
    block_args *a = args;
    double m0 = lab23_matmul_macs();
    return counted(a, lab23_tp_forward(c, &a->d, &a->w, a->x, a->y, &a->saved), m0);
}

static cl_result tp_backward(cl_comm *c, void *args)
{
    block_args *a = args;
    double m0 = lab23_matmul_macs();
    return counted(a, lab23_tp_backward(c, &a->d, &a->w, &a->saved, a->dy, a->dx, &a->g), m0);
}

static cl_result sp_forward(cl_comm *c, void *args)
{
    block_args *a = args;
    double m0 = lab23_matmul_macs();
    return counted(a, lab23_sp_forward(c, &a->d, &a->w, a->x, a->y, &a->saved), m0);
}

static cl_result sp_backward(cl_comm *c, void *args)
{
    block_args *a = args;
    double m0 = lab23_matmul_macs();
    return counted(a, lab23_sp_backward(c, &a->d, &a->w, &a->saved, a->dy, a->dx, &a->g), m0);
}

static cl_result model(cl_comm *c, void *args)
{
    (void)c;
    model_args *a = args;
    for (int sp = 0; sp <= 1; sp++)
        for (int g = 0; g <= 1; g++)
            a->layer_bytes[sp][g] = lab23_layer_bytes(&a->m, sp, g);
    a->memory_bytes = lab23_memory_bytes(&a->m, &a->p);
    a->step_s = lab23_step_s(&a->m, &a->p);
    cl_clear_error();
    a->plan_status = lab23_plan_run(&a->m, &a->plan);
    return CL_OK;
}

CL_STUDENT_ENTRIES({"tp_forward", tp_forward}, {"tp_backward", tp_backward},
                   {"sp_forward", sp_forward}, {"sp_backward", sp_backward}, {"model", model});

#else

static const cl_mode modes[] = {
    {.name = "block",
     .help = "the tensor-parallel block, then yours, forward and backward, checked and measured",
     .ranks = block_mode,
     .min_ranks = 1,
     .backends = "cpu"},
    {.name = "model",
     .help = "your activation accounting, step time and plan",
     .cases = model_case},
    {0}};

static const cl_option options[] = {
    {.name = "seq",
     .help = "S  block: sequence length (a multiple of the ranks)",
     .fallback = "128"},
    {.name = "batch", .help = "B  block: sequences in the micro-batch", .fallback = "2"},
    {.name = "hidden", .help = "H  block: hidden size", .fallback = "128"},
    {.name = "ffn", .help = "F  block: MLP width (a multiple of the ranks)", .fallback = "512"},
    {.name = "dropout", .help = "P  block: dropout probability", .fallback = "0.1"},
    {0}};

const cl_lab cl_lab_def = {
    .name = "lab23",
    .title = "序列并行",
    .modes = modes,
    .options = options,
};

#endif
