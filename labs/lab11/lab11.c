/* lab11.c: lab 11, communication competing with computation for SMs, and overlapping them.
 *
 * A backward pass produces gradients layer by layer while they are summed over
 * the ranks. You model what an AllReduce costs on C channels and what a whole
 * step costs when the communication's channels take SMs from the compute
 * kernels, choose the channel count, the bucket size and how finely to cut the
 * kernels, and run the overlapped step with the lab's non-blocking AllReduce.
 * Read labs/lab11/README.md first; the TODOs below follow its sections. Build
 * with `make lab11`, grade with `./grade lab11`.
 */
#include <math.h>

#include "lab11.h"

double lab11_allreduce_s(const lab11_model *m, double bytes, int channels)
{
    // TODO(lab11) 1: the model's AllReduce time (section 1 of the handout).
    (void)m, (void)bytes, (void)channels;
    return 0;
}

double lab11_step_s(const lab11_model *m, const lab11_plan *p)
{
    // TODO(lab11) 2: the model's time of a whole step (section 2): buckets,
    //   one AllReduce at a time, compute slowed while one runs.
    (void)m, (void)p;
    return 0;
}

cl_result lab11_plan_step(const lab11_model *m, lab11_plan *out)
{
    // TODO(lab11) 3: your decision (section 3): the channels, the bucket size and
    //   the parts of every kernel for machine m.
    (void)m, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab11_step(cl_comm *c, const lab11_model *m, const lab11_plan *p, float *grads,
                     float *scratch)
{
    // TODO(lab11) 4: the overlapped step (section 4): every layer's kernel in
    //   parts, each bucket's AllReduce started as soon as its gradients exist
    //   and kept moving between parts, everything finished before you return.
    (void)c, (void)m, (void)p, (void)grads, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
}
