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
    /* BEGIN SOLUTION */
    *node_comm = *rail_comm = NULL;
    CL_CHECK(cl_comm_split(world, node, cl_comm_rank(world), node_comm));
    /* The rail: the ranks with this rank's position in their nodes, in node order. */
    return cl_comm_split(world, cl_comm_rank(*node_comm), node, rail_comm);
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab18) 1: the node communicator and the rail communicator.
    (void)world, (void)node;
    *node_comm = *rail_comm = NULL;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab18_hier_allreduce(cl_comm *node_comm, cl_comm *rail_comm, const void *sendbuf,
                               void *recvbuf, size_t count, cl_dtype t, cl_op op, void *scratch)
{
    /* BEGIN SOLUTION */
    int l = cl_comm_size(node_comm), j = cl_comm_rank(node_comm);
    size_t es = cl_dtype_size(t), off, len;
    cl_coll_block(count, l, j, &off, &len);
    char *mine = (char *)recvbuf + off * es;
    /* 1. Inside the node: this rank ends with its block, reduced over the node. */
    CL_CHECK(lab18_ring_reduce_scatter(node_comm, sendbuf, mine, count, t, op, scratch));
    /* 2. Across nodes, on this rank's rail: the block, reduced over the job. */
    CL_CHECK(lab18_ring_allreduce(rail_comm, mine, mine, len, t, op, scratch));
    /* 3. Inside the node: every rank gets every block. */
    return lab18_ring_allgather(node_comm, mine, recvbuf, count, t);
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab18) 2: ReduceScatter in the node, AllReduce on the rail, AllGather in the node.
    (void)node_comm, (void)rail_comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t;
    (void)op, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

double lab18_predict(const lab18_machine *m, lab18_algo algo, double bytes)
{
    /* BEGIN SOLUTION */
    int n = m->nodes, l = m->ranks_per_node, p = n * l;
    double t = m->launch;
    if (algo == LAB18_FLAT) {
        if (p == 1)
            return t;
        /* One ring over all p ranks: 2(p-1) steps, 2(n-1) of them across nodes (NCCL's
         * tuning.cc counts them so). Across nodes every NIC carries its own channel, so the
         * ring's bandwidth is the smaller of a rank's intra-node bandwidth and the node's
         * NICs together. */
        double bw = n > 1 ? fmin(m->bw_intra, m->nics_per_node * m->bw_nic) : m->bw_intra;
        t += 2.0 * (p - n) * m->lat_intra + 2.0 * (n - 1) * m->lat_inter;
        return t + 2.0 * (p - 1) / p * bytes / bw;
    }
    if (l > 1)
        t += 2.0 * (l - 1) * m->lat_intra + 2.0 * (l - 1) / l * bytes / m->bw_intra;
    if (n > 1) {
        /* Each rank's block (bytes / l) goes around its rail; ranks that share a NIC share
         * its bandwidth. */
        int nics = m->nics_per_node < l ? m->nics_per_node : l;
        t += 2.0 * (n - 1) * m->lat_inter + 2.0 * (n - 1) / n * bytes / (nics * m->bw_nic);
    }
    return t;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab18) 3: the alpha-beta time of the flat ring and of the hierarchy.
    (void)m, (void)algo, (void)bytes;
    return 0;
    END SKELETON */
}

lab18_algo lab18_choose(const lab18_machine *m, double bytes)
{
    /* BEGIN SOLUTION */
    return lab18_predict(m, LAB18_HIER, bytes) < lab18_predict(m, LAB18_FLAT, bytes) ? LAB18_HIER
                                                                                     : LAB18_FLAT;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab18) 4: the algorithm your model says is faster.
    (void)m, (void)bytes;
    return LAB18_FLAT;
    END SKELETON */
}
