/* lab06.c: lab 06, latency-optimal collectives and a size-based selector.
 *
 * You write recursive doubling, Rabenseifner's halving-doubling and the
 * binomial trees for any number of ranks, model their cost with alpha, beta
 * and gamma, and pick the cheapest per message size. Read labs/lab06/README.md
 * first; the TODOs below are in the order of its sections. Build with
 * `make lab06`, grade with `./grade lab06`. Only the point-to-point interface
 * and the local operations exist here, and the harness checks that each
 * algorithm sends the messages of its own pattern.
 */
#include "lab06.h"

cl_result lab06_recursive_doubling(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                                   cl_dtype t, cl_op op, void *scratch)
{
    // TODO(lab06) 1: recursive doubling AllReduce on any number of ranks (handout,
    //   section 1 and "Ranks that are not a power of two"): log2(p2) exchanges of the
    //   whole vector, each with a partner twice as far as the last, and the fold of
    //   the handout around them when p is not a power of two. The result ends in
    //   recvbuf on every rank; sendbuf must not change; scratch is yours.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab06_rabenseifner(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                             cl_dtype t, cl_op op, void *scratch)
{
    // TODO(lab06) 2: Rabenseifner's AllReduce on any number of ranks (handout,
    //   section 2): a recursive-halving ReduceScatter over the p2 blocks of lab05's
    //   partition (the part exchanged halves every step), then a recursive-doubling
    //   AllGather that brings the blocks back (it doubles every step), inside the
    //   same fold as TODO 1.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab06_binomial_bcast(cl_comm *comm, void *buf, size_t count, cl_dtype t, int root)
{
    // TODO(lab06) 3: binomial-tree Broadcast of buf from root, in place (handout,
    //   section 3): every rank but the root receives the whole vector once, from
    //   its parent in the tree rooted at root, then forwards it to its children;
    //   ceil(log2 p) rounds in all.
    (void)comm, (void)buf, (void)count, (void)t, (void)root;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab06_binomial_reduce(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                                cl_dtype t, cl_op op, int root, void *scratch)
{
    // TODO(lab06) 4a: binomial-tree Reduce to root (handout, section 3): the
    //   Broadcast's tree walked from the leaves up; each rank combines what its
    //   children send with its own vector and sends the partial result to its
    //   parent. The result ends in root's recvbuf.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)root,
        (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab06_tree_allreduce(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                               cl_dtype t, cl_op op, void *scratch)
{
    // TODO(lab06) 4b: the tree AllReduce: your binomial Reduce to rank 0, then your
    //   binomial Broadcast from rank 0.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
}

double lab06_cost(lab06_algo a, int p, double bytes, const lab06_model *m)
{
    // TODO(lab06) 5: the alpha-beta-gamma cost of algorithm a for an AllReduce of
    //   `bytes` on p ranks, as the handout's section 4 counts it (steps, bytes sent and
    //   bytes reduced on the critical path, and the fold when p is not a power of
    //   two); 0 when p == 1.
    (void)a, (void)p, (void)bytes, (void)m;
    return -1.0;
}

lab06_algo lab06_select(int p, double bytes, const lab06_model *m)
{
    // TODO(lab06) 6a: the algorithm with the smallest lab06_cost() (any one of them
    //   on a tie).
    (void)p, (void)bytes, (void)m;
    return LAB06_ALGO_COUNT;
}

cl_result lab06_allreduce(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                          cl_dtype t, cl_op op, void *scratch, const lab06_model *m)
{
    // TODO(lab06) 6b: run the algorithm lab06_select() picks for this vector on this
    //   communicator. Every rank is given the same model, so every rank picks the same.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)scratch,
        (void)m;
    return CL_ERR_NOT_IMPLEMENTED;
}
