/* lab06.c: lab 06, latency-optimal collectives and a size-based selector.
 *
 * You write recursive doubling, Rabenseifner's halving-doubling and the
 * binomial trees for any number of ranks, model their cost with alpha, beta
 * and gamma, and pick the cheapest per message size. Read labs/lab06/README.md
 * first; the TODOs below are in the order of its sections. Build with
 * `make lab06`, grade with `./grade lab06`. Only point-to-point calls:
 * MPI's and NCCL's collectives are detected and fail the lab.
 */
#include "lab06.h"


cl_result lab06_recursive_doubling(cl_comm *comm, const void *sendbuf, void *recvbuf,
                                   size_t count, cl_dtype t, cl_op op, void *scratch)
{
    // TODO(lab06) 1: recursive doubling AllReduce, any p.
    //   a) Copy sendbuf into recvbuf and work there; receive into scratch.
    //   b) p not a power of two: p2 = largest power of two <= p, rem = p - p2.
    //      Ranks 0..2*rem-1 pair up: the even rank sends its vector to rank+1,
    //      which reduces it into its own and continues as newrank = rank/2; the
    //      even rank sits out. The others continue as newrank = rank - rem.
    //   c) For mask = 1, 2, 4, ... < p2: exchange the whole vector with the rank
    //      whose newrank is newrank ^ mask (cl_sendrecv) and reduce it in.
    //      newrank n is real rank 2n+1 when n < rem, n + rem otherwise.
    //   d) The odd ranks of the pairs send the result back to rank-1.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab06_rabenseifner(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                             cl_dtype t, cl_op op, void *scratch)
{
    // TODO(lab06) 2: Rabenseifner's AllReduce (halving-doubling), any p.
    //   Same fold as TODO 1 for p not a power of two. Among the p2 survivors,
    //   split the vector into p2 blocks (the lab05 partition of count over p2).
    //   a) Recursive halving (a ReduceScatter): your range starts as blocks
    //      [0, p2). For mask = p2/2, p2/4, ..., 1: the partner is newrank ^ mask;
    //      if newrank & mask keep the upper half of the range, else the lower;
    //      send the other half, receive the partner's copy of the kept half into
    //      scratch, reduce it in. You end with block newrank fully reduced.
    //   b) Recursive doubling (an AllGather): for mask = 1, 2, ..., p2/2 swap your
    //      range with the partner's (the adjacent range of the same size) in place.
    //   c) Unfold as in TODO 1. Moves 2(p2-1)/p2 of the vector instead of log p2 times it.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab06_binomial_bcast(cl_comm *comm, void *buf, size_t count, cl_dtype t, int root)
{
    // TODO(lab06) 3: binomial-tree Broadcast from root, in place in buf.
    //   Work with vr = (rank - root) mod p. Find the lowest set bit `mask` of vr:
    //   receive from vr - mask (real rank: + root, mod p). The root has no such
    //   bit: it starts with mask = the smallest power of two >= p. Then for mask/2,
    //   mask/4, ..., 1 send to vr + mask when that is < p. ceil(log2 p) rounds.
    (void)comm, (void)buf, (void)count, (void)t, (void)root;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab06_binomial_reduce(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                                cl_dtype t, cl_op op, int root, void *scratch)
{
    // TODO(lab06) 4a: binomial-tree Reduce to root (the Broadcast run backwards).
    //   Copy sendbuf into recvbuf and accumulate there. With vr = (rank - root)
    //   mod p, for mask = 1, 2, 4, ...: if vr & mask, send your partial result to
    //   vr - mask and stop; otherwise receive from vr + mask (if < p) into scratch
    //   and reduce it in.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)root,
        (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab06_tree_allreduce(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                               cl_dtype t, cl_op op, void *scratch)
{
    // TODO(lab06) 4b: AllReduce = binomial Reduce to rank 0, then binomial
    //   Broadcast of recvbuf from rank 0.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
}

double lab06_cost(lab06_algo a, int p, double bytes, const lab06_model *m)
{
    // TODO(lab06) 5: the handout's cost formulas (section "Cost model"), with
    //   n = bytes, p2 = largest power of two <= p, L = log2(p2), and
    //   fold = 2 alpha + 2 n beta + n gamma when p != p2 (else 0):
    //     ring        2(p-1) alpha + 2(p-1)/p n beta + (p-1)/p n gamma
    //     rec. doubl. L (alpha + n beta + n gamma) + fold
    //     Rabenseifner 2 L alpha + 2(p2-1)/p2 n beta + (p2-1)/p2 n gamma + fold
    //     tree        ceil(log2 p) (2 alpha + 2 n beta + n gamma)
    //   Every algorithm costs 0 when p == 1.
    (void)a, (void)p, (void)bytes, (void)m;
    return -1.0;
}

lab06_algo lab06_select(int p, double bytes, const lab06_model *m)
{
    // TODO(lab06) 6a: return the algorithm with the smallest lab06_cost(); on a
    //   tie the one that comes first in lab06_algo.
    (void)p, (void)bytes, (void)m;
    return LAB06_ALGO_COUNT;
}

cl_result lab06_allreduce(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                          cl_dtype t, cl_op op, void *scratch, const lab06_model *m)
{
    // TODO(lab06) 6b: run the algorithm lab06_select() picks for count * size
    //   bytes on this communicator. Every rank gets the same model, so every
    //   rank picks the same algorithm.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)scratch,
        (void)m;
    return CL_ERR_NOT_IMPLEMENTED;
}
