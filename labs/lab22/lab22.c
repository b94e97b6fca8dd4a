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
    // TODO(lab22) 3: plain data parallelism (stage 0), then ZeRO-1, ZeRO-2 and ZeRO-3.
    (void)c, (void)j;
    return CL_ERR_NOT_IMPLEMENTED;
}


double lab22_choose_bucket(const lab22_cluster *k)
{
    // TODO(lab22) 4: the bucket with the shortest step that fits in the free memory.
    (void)k;
    return 0;
}
