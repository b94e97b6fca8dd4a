/* lab30.c: the torus AllReduce, and the AllReduce algorithm of each fabric and size.
 *
 * You write two functions, in the order of the handout:
 *   1. lab30_torus_allreduce()  dimension-wise rings on the torus lab30_torus_dims() gives
 *   2. lab30_choose()           the algorithm of each (GPUs, bytes) point of a fabric
 * Only cl_sendrecv/cl_send/cl_recv, cl_reduce_local and cl_copy_local in 1;
 * lab30_probe_time() (lab30.h) in 2.
 */
#include <math.h>
#include <string.h>

#include "lab30.h"

cl_result lab30_torus_allreduce(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                                cl_dtype t, cl_op op, void *scratch)
{
    // TODO(lab30) 1: ReduceScatter rings along each dimension of the torus, then AllGather
    // rings back in the reverse order; every message to a neighbour.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab30_choose(cl_comm *comm, const lab30_fabric *f, int n, const lab30_point *pts,
                       int *algo)
{
    // TODO(lab30) 2: a cost model of every algorithm of the fabric (the handout's formulas
    // for a torus; probes of small jobs for a switched fabric), and the cheapest at each point.
    (void)comm, (void)f, (void)n, (void)pts, (void)algo;
    return CL_ERR_NOT_IMPLEMENTED;
}
