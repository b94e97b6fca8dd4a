/* lab22.c: lab 22, ZeRO's communication: ZeRO-1/2/3 on a small MLP.
 *
 * You write the ring ReduceScatter and AllGather, then one training loop that runs
 * plain data parallelism and ZeRO's three stages, and the choice of ZeRO-2's
 * gradient bucket for a cluster. The model's arithmetic is given (lab22.h, mlp.c).
 * Read labs/lab22/README.md first; the TODOs below follow its sections. Build with
 * `make lab22`, grade with `./grade lab22`.
 */
#include <math.h>
#include <string.h>

#include "lab22.h"

cl_result lab22_reduce_scatter(cl_comm *c, const float *buf, size_t n, float *shard)
{
    // TODO(lab22) 1: the ring ReduceScatter: every rank ends with its chunk of the sum.
    (void)c, (void)buf, (void)n, (void)shard;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab22_all_gather(cl_comm *c, const float *shard, size_t n, float *buf)
{
    // TODO(lab22) 2: the ring AllGather: every rank ends with every rank's shard.
    (void)c, (void)shard, (void)n, (void)buf;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab22_train(cl_comm *c, const lab22_job *j)
{
    // TODO(lab22) 3: job->steps steps of job->stage, as section 2's table says: the
    // stage's buffers from cl_mem_alloc (freed before you return), the mean of the ranks'
    // gradients by your collectives, and your shard of the final model in job->out.
    (void)c, (void)j;
    return CL_ERR_NOT_IMPLEMENTED;
}

double lab22_choose_bucket(const lab22_cluster *k)
{
    // TODO(lab22) 4: the bucket (elements) whose step, in section 4's model, is the
    // shortest among those whose two buffers fit in k->free_bytes.
    (void)k;
    return 0;
}
