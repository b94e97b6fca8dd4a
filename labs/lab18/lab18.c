/* lab18.c: lab 18, a two-level AllReduce, its cost model and the choice it makes.
 *
 * You split the job into node and rail communicators, write the hierarchical
 * AllReduce (ReduceScatter inside the node, AllReduce across nodes on each rail,
 * AllGather inside the node) from the given rings (ring.c), model its time and the
 * flat ring's, and choose between them per machine and size. Read
 * labs/lab18/README.md first; the TODOs below are in the order of its sections.
 * Build with `make lab18`, grade with `./grade lab18`.
 */
#include <math.h>

#include "lab18.h"

cl_result lab18_split(cl_comm *world, int node, cl_comm **node_comm, cl_comm **rail_comm)
{
    // TODO(lab18) 1: the node communicator and the rail communicator.
    (void)world, (void)node;
    *node_comm = *rail_comm = NULL;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab18_hier_allreduce(cl_comm *node_comm, cl_comm *rail_comm, const void *sendbuf,
                               void *recvbuf, size_t count, cl_dtype t, cl_op op, void *scratch)
{
    // TODO(lab18) 2: ReduceScatter in the node, AllReduce on the rail, AllGather in the node.
    (void)node_comm, (void)rail_comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t;
    (void)op, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
}

double lab18_predict(const lab18_machine *m, lab18_algo algo, double bytes)
{
    // TODO(lab18) 3: the alpha-beta time of the flat ring and of the hierarchy.
    (void)m, (void)algo, (void)bytes;
    return 0;
}

lab18_algo lab18_choose(const lab18_machine *m, double bytes)
{
    // TODO(lab18) 4: the algorithm your model says is faster.
    (void)m, (void)bytes;
    return LAB18_FLAT;
}
