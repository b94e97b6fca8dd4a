/* lab23.c: lab 23, sequence parallelism around a tensor-parallel MLP block.
 *
 * Tensor parallelism leaves LayerNorm and dropout replicated: every rank
 * computes them on every row and keeps their activations. Sequence
 * parallelism (Korthikanti et al., MLSys 2023) splits those regions by rows
 * instead and turns each AllReduce into a ReduceScatter and an AllGather. You
 * write the sequence-parallel forward and backward of the block (tp.c is the
 * tensor-parallel version to start from), then the paper's accounting of
 * activation memory and a plan for a real model. Read labs/lab23/README.md
 * first; the TODOs below follow its sections. Build with `make lab23`, grade
 * with `./grade lab23`.
 */
#include <math.h>
#include <string.h>

#include "lab23.h"

cl_result lab23_sp_forward(cl_comm *c, const lab23_dims *d, const lab23_params *w, const float *x,
                           float *y, lab23_saved *saved)
{
    // TODO(lab23) 1: the sequence-parallel forward (section 1 of the handout):
    //   LayerNorm on your rows, an AllGather into the tensor-parallel region, a
    //   ReduceScatter out of it, dropout and the residual on your rows; keep in
    //   `saved` what backward needs, and no more.
    (void)c, (void)d, (void)w, (void)x, (void)y, (void)saved;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab23_sp_backward(cl_comm *c, const lab23_dims *d, const lab23_params *w,
                            lab23_saved *saved, const float *dy, float *dx, lab23_grads *g)
{
    // TODO(lab23) 2: the sequence-parallel backward (section 2): each collective
    //   of the forward has its conjugate here; the parameters' gradients are over
    //   every row of the batch; free what forward saved.
    (void)c, (void)d, (void)w, (void)saved, (void)dy, (void)dx, (void)g;
    return CL_ERR_NOT_IMPLEMENTED;
}

double lab23_layer_bytes(const lab23_model *m, int sp, int granularity)
{
    // TODO(lab23) 3: the activation bytes of one layer (section 4.1's table).
    (void)m, (void)sp, (void)granularity;
    return 0;
}

double lab23_memory_bytes(const lab23_model *m, const lab23_plan *p)
{
    // TODO(lab23) 3: the GPU's bytes under plan p (section 4.2).
    (void)m, (void)p;
    return 0;
}

double lab23_step_s(const lab23_model *m, const lab23_plan *p)
{
    // TODO(lab23) 3: the seconds of one micro-batch under plan p (section 4.2).
    (void)m, (void)p;
    return 0;
}

cl_result lab23_plan_run(const lab23_model *m, lab23_plan *out)
{
    // TODO(lab23) 4: your decision (section 4.3): the fastest plan that fits.
    (void)m, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}
