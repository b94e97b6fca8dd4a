/* lab20.c: lab 20, AlltoAll for MoE expert parallelism.
 *
 * You write the pairwise-exchange AlltoAll and AlltoAllv, the hierarchical
 * (2-D) AlltoAll that crosses the fabric once per node pair, and the plan of
 * an MoE layer's dispatch: its capacity factor and how its tokens travel.
 * Read labs/lab20/README.md first; the TODOs below follow its sections.
 * lab20.h states the conventions the harness checks. Build with `make lab20`,
 * grade with `./grade lab20`.
 */
#include <math.h>

#include "lab20.h"

cl_result lab20_pairwise_alltoall(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                                  cl_dtype t)
{
    /* BEGIN SOLUTION */
    int p = cl_comm_size(comm), r = cl_comm_rank(comm);
    size_t bytes = count / (size_t)p * cl_dtype_size(t);
    const char *in = sendbuf;
    char *out = recvbuf;
    if (bytes == 0)
        return CL_OK;
    CL_CHECK(cl_copy_local(comm, out + (size_t)r * bytes, in + (size_t)r * bytes, bytes));
    for (int s = 1; s < p; s++) {
        int to = (r + s) % p, from = (r - s + p) % p;
        CL_CHECK(cl_sendrecv(comm, in + (size_t)to * bytes, bytes, to, out + (size_t)from * bytes,
                             bytes, from));
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab20) 1: AlltoAll by pairwise exchange (handout section 1). Your own
    //   block is a local copy; every other block crosses to its rank in one of
    //   p - 1 steps, and in each step a rank exchanges with one partner only
    //   (one it sends to, one it receives from) and finishes before the next.
    //   Pick a schedule in which every pair meets exactly once, for any p.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab20_pairwise_alltoallv(cl_comm *comm, const void *sendbuf, const size_t *sendcounts,
                                   const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                                   const size_t *rdispls, cl_dtype t)
{
    /* BEGIN SOLUTION */
    int p = cl_comm_size(comm), r = cl_comm_rank(comm);
    size_t es = cl_dtype_size(t);
    const char *in = sendbuf;
    char *out = recvbuf;
    if (sendcounts[r])
        CL_CHECK(
            cl_copy_local(comm, out + rdispls[r] * es, in + sdispls[r] * es, sendcounts[r] * es));
    for (int s = 1; s < p; s++) {
        int to = (r + s) % p, from = (r - s + p) % p;
        size_t sb = sendcounts[to] * es, rb = recvcounts[from] * es;
        if (sb && rb)
            CL_CHECK(cl_sendrecv(comm, in + sdispls[to] * es, sb, to, out + rdispls[from] * es, rb,
                                 from));
        else if (sb)
            CL_CHECK(cl_send(comm, in + sdispls[to] * es, sb, to));
        else if (rb)
            CL_CHECK(cl_recv(comm, out + rdispls[from] * es, rb, from));
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab20) 2: AlltoAllv (handout section 2): the schedule of TODO 1 with
    //   a size per pair, in MPI_Alltoallv's layout. A pair with nothing to send
    //   either way exchanges nothing; one-sided steps still meet their partner.
    (void)comm, (void)sendbuf, (void)sendcounts, (void)sdispls, (void)recvbuf, (void)recvcounts;
    (void)rdispls, (void)t;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab20_hier_alltoall(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                              cl_dtype t, int local, void *scratch, size_t scratch_bytes)
{
    /* BEGIN SOLUTION */
    int p = cl_comm_size(comm), r = cl_comm_rank(comm), L = local;
    if (L < 1 || p % L != 0) {
        cl_set_error("hierarchical AlltoAll: %d ranks are not nodes of %d", p, L);
        return CL_ERR_INVALID;
    }
    int g = p / L, n = r / L, l = r % L;
    size_t b = count / (size_t)p * cl_dtype_size(t); /* one block, bytes */
    if (b == 0)
        return CL_OK;
    if (scratch_bytes < 2 * (size_t)p * b) {
        cl_set_error("hierarchical AlltoAll needs %zu bytes of scratch, has %zu", 2 * (size_t)p * b,
                     scratch_bytes);
        return CL_ERR_INVALID;
    }
    const char *in = sendbuf;
    char *out = recvbuf, *S = scratch, *R = S + (size_t)p * b;
    size_t gb = (size_t)g * b, lb = (size_t)L * b;
    /* S[l'][m]: what this rank sends to node m's rank with local index l'. */
    for (int lp = 0; lp < L; lp++)
        for (int m = 0; m < g; m++)
            CL_CHECK(cl_copy_local(comm, S + ((size_t)lp * g + m) * b,
                                   in + ((size_t)m * L + lp) * b, b));
    /* Inside the node: R[l'][m] = from local rank l' of this node, for (m, l). */
    CL_CHECK(cl_copy_local(comm, R + (size_t)l * gb, S + (size_t)l * gb, gb));
    for (int s = 1; s < L; s++) {
        int to = (l + s) % L, from = (l - s + L) % L;
        CL_CHECK(cl_sendrecv(comm, S + (size_t)to * gb, gb, n * L + to, R + (size_t)from * gb, gb,
                             n * L + from));
    }
    /* Regroup by destination node: S[m][l'] = R[l'][m]. */
    for (int m = 0; m < g; m++)
        for (int lp = 0; lp < L; lp++)
            CL_CHECK(
                cl_copy_local(comm, S + ((size_t)m * L + lp) * b, R + ((size_t)lp * g + m) * b, b));
    /* Across the fabric: one message per node pair, on this rank's rail; what
     * node m's ranks sent to this rank lands in its place in recvbuf. */
    CL_CHECK(cl_copy_local(comm, out + (size_t)n * lb, S + (size_t)n * lb, lb));
    for (int s = 1; s < g; s++) {
        int to = (n + s) % g, from = (n - s + g) % g;
        CL_CHECK(cl_sendrecv(comm, S + (size_t)to * lb, lb, to * L + l, out + (size_t)from * lb, lb,
                             from * L + l));
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab20) 3: the hierarchical AlltoAll (handout section 3). First, inside
    //   the node, each rank gathers everything its node sends to the ranks that
    //   share its local index; then each rank exchanges one aggregated message
    //   with the rank of its local index on every other node. Arrange the blocks
    //   in scratch so that every message is one contiguous range, and so that
    //   what arrives in the second phase lands where recvbuf wants it.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)local, (void)scratch;
    (void)scratch_bytes;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* BEGIN SOLUTION */
/* Tokens dropped at a capacity: what exceeds it, summed over every (rank, expert). */
static long dropped(const lab20_moe *m, long cap)
{
    long d = 0;
    for (long i = 0; i < (long)m->p * m->experts; i++)
        if (m->counts[i] > cap)
            d += m->counts[i] - cap;
    return d;
}

/* The alpha-beta line through the two calibration points: seconds for S bytes per rank. */
static double line(const lab20_moe *m, const double *t, double bytes)
{
    double x0 = (double)m->calib_bytes[0], x1 = (double)m->calib_bytes[1];
    double slope = (t[1] - t[0]) / (x1 - x0);
    return t[0] + slope * (bytes - x0);
}

/* The exact layout: an AlltoAll of the counts, then an AlltoAllv of the kept
 * tokens. On a fabric that shares its links fairly, an uneven exchange costs
 * about what a uniform one of the same average volume does. */
static double exact_time(const lab20_moe *m, long cap)
{
    double kept = 0;
    for (long i = 0; i < (long)m->p * m->experts; i++)
        kept += m->counts[i] < cap ? m->counts[i] : cap;
    double per_rank = kept / m->p * (double)m->token_bytes;
    return line(m, m->pairwise_s, 8.0 * m->p) + line(m, m->pairwise_s, per_rank);
}
/* END SOLUTION */
cl_result lab20_moe_plan(const lab20_moe *m, lab20_plan *plan)
{
    /* BEGIN SOLUTION */
    long assignments = (long)m->p * m->tokens * m->topk, hi = 0;
    for (long i = 0; i < (long)m->p * m->experts; i++)
        if (m->counts[i] > hi)
            hi = m->counts[i];
    /* The smallest capacity whose drops fit the budget (drops fall as it grows). */
    long lo = 0, allowed = (long)floor(m->drop_budget * (double)assignments);
    while (lo < hi) {
        long mid = (lo + hi) / 2;
        if (dropped(m, mid) <= allowed)
            hi = mid;
        else
            lo = mid + 1;
    }
    long cap = lo > 0 ? lo : 1;
    double mean = (double)m->tokens * m->topk / m->experts;
    plan->capacity_factor = ((double)cap - 0.5) / mean; /* ceil(C * mean) == cap */
    double padded = (double)m->experts * (double)cap * (double)m->token_bytes; /* per rank */
    int two = m->local > 1 && m->nodes > 1;
    double t[3] = {line(m, m->pairwise_s, padded), two ? line(m, m->hier_s, padded) : INFINITY,
                   exact_time(m, cap)};
    int best = 0;
    for (int i = 1; i < 3; i++)
        if (t[i] < t[best])
            best = i;
    plan->layout = best == 2 ? LAB20_EXACT : LAB20_PADDED;
    plan->algo = best == 1 ? LAB20_HIER : LAB20_PAIRWISE;
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab20) 4: the plan of one MoE layer (handout section 6). Find the
    //   capacity factor whose drops stay within the budget at the least cost,
    //   then predict what each way of moving the tokens would take on this
    //   machine, from the times the harness measured of your own AlltoAlls
    //   (m->pairwise_s, m->hier_s), and choose the fastest.
    (void)m, (void)plan;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
