/* lab24.c: lab 24, DDP's gradient buckets, each AllReduced while the backward pass goes on.
 *
 * PyTorch's DistributedDataParallel groups gradients into buckets in the order
 * they become ready, and starts a bucket's AllReduce as soon as its last
 * gradient exists, so that communication hides behind the rest of the backward
 * pass. You write DDP's bucket assignment, a non-blocking ring AllReduce that
 * moves on only when your code calls it, the overlapped step, and the choice of
 * bucket sizes for a machine. Read labs/lab24/README.md first; the TODOs below
 * follow its sections. Build with `make lab24`, grade with `./grade lab24`.
 */
#include <math.h>
#include <string.h>

#include "coll.h"
#include "lab24.h"

cl_result lab24_assign(const lab24_model *m, const lab24_caps *caps, lab24_buckets *out)
{
    // TODO(lab24) 1: DDP's bucket assignment (section 1 of the handout).
    (void)m, (void)caps, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab24_ar_start(lab24_allreduce *ar, cl_comm *c, const lab24_model *m, float *buf,
                         size_t count, float *scratch)
{
    // TODO(lab24) 2: start the ring AllReduce (section 2): post its first step.
    (void)ar, (void)c, (void)m, (void)buf, (void)count, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab24_ar_progress(lab24_allreduce *ar, int *done)
{
    // TODO(lab24) 2: move the AllReduce on without waiting (section 2).
    (void)ar;
    *done = 0;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab24_ar_finish(lab24_allreduce *ar)
{
    // TODO(lab24) 2: wait for the AllReduce to complete (section 2).
    (void)ar;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab24_step(cl_comm *c, const lab24_model *m, const lab24_buckets *b, float *grads,
                     float *scratch)
{
    // TODO(lab24) 3: the overlapped step (section 3): the whole backward pass, each
    //   bucket's AllReduce started once its gradients exist and moved on between
    //   parts, everything summed before you return.
    (void)c, (void)m, (void)b, (void)grads, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab24_choose(const lab24_model *m, lab24_caps *out)
{
    // TODO(lab24) 4: your decision (section 4): the bucket sizes for machine m.
    (void)m, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}
