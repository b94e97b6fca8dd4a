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
static cl_result fold_in(cl_comm *c, void *buf, size_t count, cl_dtype t, cl_op op, void *scratch,
                         int *newrank)
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

cl_result lab06_recursive_doubling(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                                   cl_dtype t, cl_op op, void *scratch)
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
    // TODO(lab06) 1: recursive doubling AllReduce on any number of ranks (handout,
    //   section 1 and "Ranks that are not a power of two"): log2(p2) exchanges of the
    //   whole vector, each with a partner twice as far as the last, and the fold of
    //   the handout around them when p is not a power of two. The result ends in
    //   recvbuf on every rank; sendbuf must not change; scratch is yours.
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
    // TODO(lab06) 2: Rabenseifner's AllReduce on any number of ranks (handout,
    //   section 2): a recursive-halving ReduceScatter over the p2 blocks of lab05's
    //   partition (the part exchanged halves every step), then a recursive-doubling
    //   AllGather that brings the blocks back (it doubles every step), inside the
    //   same fold as TODO 1.
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
    // TODO(lab06) 3: binomial-tree Broadcast of buf from root, in place (handout,
    //   section 3): every rank but the root receives the whole vector once, from
    //   its parent in the tree rooted at root, then forwards it to its children;
    //   ceil(log2 p) rounds in all.
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
    // TODO(lab06) 4a: binomial-tree Reduce to root (handout, section 3): the
    //   Broadcast's tree walked from the leaves up; each rank combines what its
    //   children send with its own vector and sends the partial result to its
    //   parent. The result ends in root's recvbuf.
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
    // TODO(lab06) 4b: the tree AllReduce: your binomial Reduce to rank 0, then your
    //   binomial Broadcast from rank 0.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

double lab06_cost(lab06_algo a, int p, double bytes, const lab06_model *m)
{
    /* BEGIN SOLUTION */
    if (p <= 1)
        return 0.0;
    double al = m->alpha_s, nb = bytes * m->beta_s_per_byte, ng = bytes * m->gamma_s_per_byte;
    int p2 = pow2_below(p), l2 = log2_ceil(p2);
    double fold = p == p2 ? 0.0 : 2 * al + 2 * nb + ng;
    switch (a) {
    case LAB06_RING: return 2.0 * (p - 1) * al + 2.0 * (p - 1) / p * nb + (double)(p - 1) / p * ng;
    case LAB06_RECURSIVE_DOUBLING: return l2 * (al + nb + ng) + fold;
    case LAB06_RABENSEIFNER:
        return 2.0 * l2 * al + 2.0 * (p2 - 1) / p2 * nb + (double)(p2 - 1) / p2 * ng + fold;
    case LAB06_BINOMIAL_TREE: return log2_ceil(p) * (2 * al + 2 * nb + ng);
    default: return 1e300;
    }
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab06) 5: the alpha-beta-gamma cost of algorithm a for an AllReduce of
    //   `bytes` on p ranks, as the handout's section 4 counts it (steps, bytes sent and
    //   bytes reduced on the critical path, and the fold when p is not a power of
    //   two); 0 when p == 1.
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
    // TODO(lab06) 6a: the algorithm with the smallest lab06_cost() (any one of them
    //   on a tie).
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
    default: cl_set_error("lab06_select returned no algorithm"); return CL_ERR_INVALID;
    }
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab06) 6b: run the algorithm lab06_select() picks for this vector on this
    //   communicator. Every rank is given the same model, so every rank picks the same.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)scratch,
        (void)m;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
