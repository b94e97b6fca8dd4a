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

/* BEGIN SOLUTION */
/* Non-power-of-two ranks (the MPICH scheme): with p2 = the largest power of
 * two <= p and rem = p - p2, the first 2*rem ranks pair up; each even one
 * hands its vector to the odd one above it and sits out. The p2 survivors
 * are numbered 0..p2-1 (newrank); they run the algorithm; then each odd rank
 * of the pairs sends the result back down. */
static int pow2_below(int p)
{
    int p2 = 1;
    while (p2 * 2 <= p)
        p2 *= 2;
    return p2;
}

static int real_rank(int newrank, int rem)
{
    return newrank < rem ? 2 * newrank + 1 : newrank + rem;
}

/* Fold: returns this rank's newrank, or -1 when it sits out. */
static cl_result fold_in(cl_comm *c, void *buf, size_t count, cl_dtype t, cl_op op,
                         void *scratch, int *newrank)
{
    int p = cl_comm_size(c), r = cl_comm_rank(c), rem = p - pow2_below(p);
    size_t bytes = count * cl_dtype_size(t);
    if (r < 2 * rem) {
        if (r % 2 == 0) {
            CL_CHECK(cl_send(c, buf, bytes, r + 1));
            *newrank = -1;
        } else {
            CL_CHECK(cl_recv(c, scratch, bytes, r - 1));
            CL_CHECK(cl_reduce_local(c, buf, scratch, count, t, op));
            *newrank = r / 2;
        }
    } else {
        *newrank = r - rem;
    }
    return CL_OK;
}

static cl_result fold_out(cl_comm *c, void *buf, size_t count, cl_dtype t)
{
    int p = cl_comm_size(c), r = cl_comm_rank(c), rem = p - pow2_below(p);
    size_t bytes = count * cl_dtype_size(t);
    if (r < 2 * rem)
        return r % 2 ? cl_send(c, buf, bytes, r - 1) : cl_recv(c, buf, bytes, r + 1);
    return CL_OK;
}

static int log2_ceil(int p)
{
    int l = 0;
    while ((1 << l) < p)
        l++;
    return l;
}
/* END SOLUTION */

cl_result lab06_recursive_doubling(cl_comm *comm, const void *sendbuf, void *recvbuf,
                                   size_t count, cl_dtype t, cl_op op, void *scratch)
{
    /* BEGIN SOLUTION */
    int p = cl_comm_size(comm), p2 = pow2_below(p), rem = p - p2, nr;
    size_t es = cl_dtype_size(t), bytes = count * es;
    CL_CHECK(cl_copy_local(comm, recvbuf, sendbuf, bytes));
    CL_CHECK(fold_in(comm, recvbuf, count, t, op, scratch, &nr));
    for (int mask = 1; nr >= 0 && mask < p2; mask <<= 1) {
        int partner = real_rank(nr ^ mask, rem);
        CL_CHECK(cl_sendrecv(comm, recvbuf, bytes, partner, scratch, bytes, partner));
        CL_CHECK(cl_reduce_local(comm, recvbuf, scratch, count, t, op));
    }
    return fold_out(comm, recvbuf, count, t);
    /* END SOLUTION */
    /* BEGIN SKELETON
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
    END SKELETON */
}

cl_result lab06_rabenseifner(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                             cl_dtype t, cl_op op, void *scratch)
{
    /* BEGIN SOLUTION */
    int p = cl_comm_size(comm), p2 = pow2_below(p), rem = p - p2, nr;
    size_t es = cl_dtype_size(t);
    char *buf = recvbuf;
    CL_CHECK(cl_copy_local(comm, buf, sendbuf, count * es));
    CL_CHECK(fold_in(comm, buf, count, t, op, scratch, &nr));
    if (nr < 0)
        return fold_out(comm, buf, count, t);
/* element offset of block b of count over p2 blocks (b may be p2) */
#define OFF(b) ((size_t)(b) * (count / p2) + ((size_t)(b) < count % p2 ? (size_t)(b) : count % p2))
    /* ReduceScatter by recursive halving: keep the half of [lo, hi) that holds
     * your own newrank's block, send the other half to the partner. */
    int lo = 0, hi = p2;
    for (int mask = p2 / 2; mask >= 1; mask >>= 1) {
        int partner = real_rank(nr ^ mask, rem), mid = lo + (hi - lo) / 2;
        int keep_lo = nr & mask ? mid : lo, keep_hi = nr & mask ? hi : mid;
        int give_lo = nr & mask ? lo : mid, give_hi = nr & mask ? mid : hi;
        size_t keep = OFF(keep_hi) - OFF(keep_lo);
        CL_CHECK(cl_sendrecv(comm, buf + OFF(give_lo) * es, (OFF(give_hi) - OFF(give_lo)) * es,
                             partner, scratch, keep * es, partner));
        CL_CHECK(cl_reduce_local(comm, buf + OFF(keep_lo) * es, scratch, keep, t, op));
        lo = keep_lo;
        hi = keep_hi;
    }
    /* AllGather by recursive doubling: the halves come back in reverse order. */
    for (int mask = 1; mask < p2; mask <<= 1) {
        int partner = real_rank(nr ^ mask, rem), size = hi - lo;
        int other_lo = nr & mask ? lo - size : hi, other_hi = other_lo + size;
        CL_CHECK(cl_sendrecv(comm, buf + OFF(lo) * es, (OFF(hi) - OFF(lo)) * es, partner,
                             buf + OFF(other_lo) * es, (OFF(other_hi) - OFF(other_lo)) * es,
                             partner));
        lo = lo < other_lo ? lo : other_lo;
        hi = hi > other_hi ? hi : other_hi;
    }
#undef OFF
    return fold_out(comm, buf, count, t);
    /* END SOLUTION */
    /* BEGIN SKELETON
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
    END SKELETON */
}

cl_result lab06_binomial_bcast(cl_comm *comm, void *buf, size_t count, cl_dtype t, int root)
{
    /* BEGIN SOLUTION */
    int p = cl_comm_size(comm), r = cl_comm_rank(comm), vr = (r - root + p) % p;
    size_t bytes = count * cl_dtype_size(t);
    int mask = 1;
    while (mask < p) {
        if (vr & mask) {
            CL_CHECK(cl_recv(comm, buf, bytes, (vr - mask + root) % p));
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p)
            CL_CHECK(cl_send(comm, buf, bytes, (vr + mask + root) % p));
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab06) 3: binomial-tree Broadcast from root, in place in buf.
    //   Work with vr = (rank - root) mod p. Find the lowest set bit `mask` of vr:
    //   receive from vr - mask (real rank: + root, mod p). The root has no such
    //   bit: it starts with mask = the smallest power of two >= p. Then for mask/2,
    //   mask/4, ..., 1 send to vr + mask when that is < p. ceil(log2 p) rounds.
    (void)comm, (void)buf, (void)count, (void)t, (void)root;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab06_binomial_reduce(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                                cl_dtype t, cl_op op, int root, void *scratch)
{
    /* BEGIN SOLUTION */
    int p = cl_comm_size(comm), r = cl_comm_rank(comm), vr = (r - root + p) % p;
    size_t bytes = count * cl_dtype_size(t);
    CL_CHECK(cl_copy_local(comm, recvbuf, sendbuf, bytes));
    for (int mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            CL_CHECK(cl_send(comm, recvbuf, bytes, (vr - mask + root) % p));
            break;
        }
        if (vr + mask < p) {
            CL_CHECK(cl_recv(comm, scratch, bytes, (vr + mask + root) % p));
            CL_CHECK(cl_reduce_local(comm, recvbuf, scratch, count, t, op));
        }
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab06) 4a: binomial-tree Reduce to root (the Broadcast run backwards).
    //   Copy sendbuf into recvbuf and accumulate there. With vr = (rank - root)
    //   mod p, for mask = 1, 2, 4, ...: if vr & mask, send your partial result to
    //   vr - mask and stop; otherwise receive from vr + mask (if < p) into scratch
    //   and reduce it in.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)root,
        (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab06_tree_allreduce(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                               cl_dtype t, cl_op op, void *scratch)
{
    /* BEGIN SOLUTION */
    CL_CHECK(lab06_binomial_reduce(comm, sendbuf, recvbuf, count, t, op, 0, scratch));
    return lab06_binomial_bcast(comm, recvbuf, count, t, 0);
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab06) 4b: AllReduce = binomial Reduce to rank 0, then binomial
    //   Broadcast of recvbuf from rank 0.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

double lab06_cost(lab06_algo a, int p, double bytes, const lab06_model *m)
{
    /* BEGIN SOLUTION */
    if (p <= 1)
        return 0.0;
    double al = m->alpha_s, n = bytes, nb = bytes * m->beta_s_per_byte;
    double ng = bytes * m->gamma_s_per_byte;
    int p2 = pow2_below(p), l2 = log2_ceil(p2);
    double fold = p == p2 ? 0.0 : 2 * al + 2 * nb + ng;
    (void)n;
    switch (a) {
    case LAB06_RING:
        return 2.0 * (p - 1) * al + 2.0 * (p - 1) / p * nb + (double)(p - 1) / p * ng;
    case LAB06_RECURSIVE_DOUBLING:
        return l2 * (al + nb + ng) + fold;
    case LAB06_RABENSEIFNER:
        return 2.0 * l2 * al + 2.0 * (p2 - 1) / p2 * nb + (double)(p2 - 1) / p2 * ng + fold;
    case LAB06_BINOMIAL_TREE:
        return log2_ceil(p) * (2 * al + 2 * nb + ng);
    default:
        return 1e300;
    }
    /* END SOLUTION */
    /* BEGIN SKELETON
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
    END SKELETON */
}

lab06_algo lab06_select(int p, double bytes, const lab06_model *m)
{
    /* BEGIN SOLUTION */
    lab06_algo best = LAB06_RING;
    for (int a = 1; a < LAB06_ALGO_COUNT; a++)
        if (lab06_cost((lab06_algo)a, p, bytes, m) < lab06_cost(best, p, bytes, m))
            best = (lab06_algo)a;
    return best;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab06) 6a: return the algorithm with the smallest lab06_cost(); on a
    //   tie the one that comes first in lab06_algo.
    (void)p, (void)bytes, (void)m;
    return LAB06_ALGO_COUNT;
    END SKELETON */
}

cl_result lab06_allreduce(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                          cl_dtype t, cl_op op, void *scratch, const lab06_model *m)
{
    /* BEGIN SOLUTION */
    double bytes = (double)count * (double)cl_dtype_size(t);
    switch (lab06_select(cl_comm_size(comm), bytes, m)) {
    case LAB06_RING: return lab06_ring_allreduce(comm, sendbuf, recvbuf, count, t, op, scratch);
    case LAB06_RECURSIVE_DOUBLING:
        return lab06_recursive_doubling(comm, sendbuf, recvbuf, count, t, op, scratch);
    case LAB06_RABENSEIFNER:
        return lab06_rabenseifner(comm, sendbuf, recvbuf, count, t, op, scratch);
    case LAB06_BINOMIAL_TREE:
        return lab06_tree_allreduce(comm, sendbuf, recvbuf, count, t, op, scratch);
    default:
        cl_set_error("lab06_select returned no algorithm");
        return CL_ERR_INVALID;
    }
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab06) 6b: run the algorithm lab06_select() picks for count * size
    //   bytes on this communicator. Every rank gets the same model, so every
    //   rank picks the same algorithm.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)scratch,
        (void)m;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
