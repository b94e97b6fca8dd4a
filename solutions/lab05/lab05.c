/* lab05.c: lab 05, ring collectives over the point-to-point interface.
 *
 * You write the ring ReduceScatter and AllGather that NCCL's ring algorithm is
 * made of, compose them into the ring AllReduce, pipeline a Broadcast along a
 * chain, and choose that Broadcast's chunk size. Read labs/lab05/README.md
 * first; the TODOs below follow its sections. lab05.h states the conventions
 * the harness checks. Build with `make lab05`, grade with `./grade lab05`.
 */
#include <math.h>

#include "lab05.h"

void lab05_block(size_t count, int p, int i, size_t *off, size_t *len)
{
    /* BEGIN SOLUTION */
    size_t base = count / (size_t)p, extra = count % (size_t)p, k = (size_t)i;
    *off = k * base + (k < extra ? k : extra);
    *len = base + (k < extra ? 1 : 0);
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab05) 1: the block partition (lab05.h): block i of count elements
    //   over p ranks. Every element lies in exactly one block, the blocks follow
    //   each other in rank order, and their lengths differ by at most one, the
    //   longer ones first: MPI's and nccl-tests' split of an uneven count.
    (void)count, (void)p, (void)i;
    *off = 0;
    *len = 0;
    END SKELETON */
}

cl_result lab05_ring_reduce_scatter(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                                    cl_dtype t, cl_op op, void *scratch)
{
    /* BEGIN SOLUTION */
    int p = cl_comm_size(comm), r = cl_comm_rank(comm);
    size_t es = cl_dtype_size(t), off, len;
    const char *send = sendbuf;
    if (p == 1) {
        lab05_block(count, p, 0, &off, &len);
        return cl_copy_local(comm, recvbuf, send, len * es);
    }
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    /* Two partial sums in scratch: one is sent while the other is received. */
    char *acc[2] = {scratch, (char *)scratch + (count / p + 1) * es};
    for (int s = 0; s < p - 1; s++) {
        int si = (r - s - 1 + 2 * p) % p, ri = (r - s - 2 + 2 * p) % p;
        size_t soff, slen, roff, rlen;
        lab05_block(count, p, si, &soff, &slen);
        lab05_block(count, p, ri, &roff, &rlen);
        const void *src = s == 0 ? send + soff * es : acc[(s - 1) & 1];
        void *dst = s == p - 2 ? recvbuf : acc[s & 1];
        CL_CHECK(cl_sendrecv(comm, src, slen * es, right, dst, rlen * es, left));
        CL_CHECK(cl_reduce_local(comm, dst, send + roff * es, rlen, t, op));
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab05) 2: ring ReduceScatter (handout section 1). Afterwards recvbuf
    //   holds block `rank` of the reduction of every rank's sendbuf. A rank talks
    //   only to its two neighbours on the ring; in each of p - 1 steps it sends
    //   one block's partial result to one neighbour, receives one from the
    //   other, and adds its own contribution to what it received. Which block
    //   moves at which step is yours to work out: the last block a rank
    //   completes must be its own. sendbuf is read-only; partial results live
    //   in scratch. Think of p == 1 and of empty blocks.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab05_ring_allgather(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                               cl_dtype t)
{
    /* BEGIN SOLUTION */
    int p = cl_comm_size(comm), r = cl_comm_rank(comm);
    size_t es = cl_dtype_size(t), off, len;
    char *out = recvbuf;
    lab05_block(count, p, r, &off, &len);
    if (sendbuf != out + off * es)
        CL_CHECK(cl_copy_local(comm, out + off * es, sendbuf, len * es));
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    for (int s = 0; s < p - 1; s++) {
        int si = (r - s + p) % p, ri = (r - s - 1 + p) % p;
        size_t soff, slen, roff, rlen;
        lab05_block(count, p, si, &soff, &slen);
        lab05_block(count, p, ri, &roff, &rlen);
        CL_CHECK(
            cl_sendrecv(comm, out + soff * es, slen * es, right, out + roff * es, rlen * es, left));
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab05) 3: ring AllGather (handout section 2). Afterwards recvbuf holds
    //   every rank's block at its offset. p - 1 steps on the same ring, one block
    //   sent and one received per step, with recvbuf as the only buffer. sendbuf
    //   may already be this rank's block of recvbuf (AllReduce calls it in place).
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab05_ring_allreduce(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                               cl_dtype t, cl_op op, void *scratch)
{
    /* BEGIN SOLUTION */
    int p = cl_comm_size(comm), r = cl_comm_rank(comm);
    size_t off, len, es = cl_dtype_size(t);
    lab05_block(count, p, r, &off, &len);
    char *mine = (char *)recvbuf + off * es;
    CL_CHECK(lab05_ring_reduce_scatter(comm, sendbuf, mine, count, t, op, scratch));
    return lab05_ring_allgather(comm, mine, recvbuf, count, t);
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab05) 4: AllReduce from TODO 2 and TODO 3 (handout section 3),
    //   without an extra copy of the whole vector.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab05_pipelined_broadcast(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                                    cl_dtype t, int root, size_t chunk_bytes)
{
    /* BEGIN SOLUTION */
    int p = cl_comm_size(comm), r = cl_comm_rank(comm);
    size_t es = cl_dtype_size(t);
    size_t chunk = chunk_bytes / es ? chunk_bytes / es : 1;
    size_t nchunks = (count + chunk - 1) / chunk;
    int pos = (r - root + p) % p;
    int prev = (r - 1 + p) % p, next = (r + 1) % p;
    int has_next = pos < p - 1;
    char *out = recvbuf;
    if (pos == 0) {
        const char *in = sendbuf;
        CL_CHECK(cl_copy_local(comm, out, in, count * es));
    }
    /* Step k: forward chunk k-1 to the next rank while receiving chunk k. */
    for (size_t k = 0; k <= nchunks; k++) {
        CL_CHECK(cl_group_start(comm));
        if (k > 0 && has_next) {
            size_t o = (k - 1) * chunk, n = count - o < chunk ? count - o : chunk;
            CL_CHECK(cl_send(comm, out + o * es, n * es, next));
        }
        if (k < nchunks && pos > 0) {
            size_t o = k * chunk, n = count - o < chunk ? count - o : chunk;
            CL_CHECK(cl_recv(comm, out + o * es, n * es, prev));
        }
        CL_CHECK(cl_group_end(comm));
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab05) 5: pipelined chain Broadcast (handout section 4). The root's
    //   data flows root -> root+1 -> ... -> root-1 (mod p) in chunks of
    //   chunk_bytes, rounded down to whole elements (at least one; the last
    //   chunk may be shorter). A rank forwards each chunk while it receives the
    //   next, so that every hop of the chain is busy at once (cl_group_start/end
    //   post a send and a receive together). Every rank's recvbuf, the root's
    //   too, ends with the root's data.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)root, (void)chunk_bytes;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

size_t lab05_broadcast_chunk(size_t count, size_t elem_bytes, int root, const lab05_chain *chain)
{
    /* BEGIN SOLUTION */
    /* The first chunk crosses every hop of the chain; each later one leaves the
     * bottleneck hop b one step after the one before:
     *   T(c) = sum_h (alpha_h + c / B_h) + (S / c - 1) (alpha_b + c / B_b),
     * least at c = sqrt(S alpha_b / (sum_h 1 / B_h - 1 / B_b)). */
    int p = chain->p, b = root;
    double bytes = (double)count * (double)elem_bytes, inv = 0;
    for (int j = 0; j < p - 1; j++) {
        const lab05_link *h = &chain->hop[(root + j) % p];
        inv += 1 / h->bytes_per_s;
        const lab05_link *w = &chain->hop[b];
        if (h->bytes_per_s < w->bytes_per_s ||
            (h->bytes_per_s == w->bytes_per_s && h->alpha_s > w->alpha_s))
            b = (root + j) % p;
    }
    double fill = inv - 1 / chain->hop[b].bytes_per_s;
    double k = fill > 0 ? bytes / sqrt(bytes * chain->hop[b].alpha_s / fill) : 1;
    k = round(k);
    if (k > (double)count)
        k = (double)count;
    if (k > LAB05_MAX_CHUNKS)
        k = LAB05_MAX_CHUNKS;
    if (!(k >= 1))
        k = 1;
    size_t elems = (size_t)ceil((double)count / k);
    return (elems ? elems : 1) * elem_bytes;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab05) 6: your decision (handout section 5): the chunk size that
    //   makes the Broadcast of count elements from root fastest on this chain.
    //   Model the Broadcast's time as a function of the chunk size, with the
    //   hops the harness measured (chain->hop[i]: rank i to rank i+1), and take
    //   its minimum. Return bytes: at least 1, at most LAB05_MAX_CHUNKS chunks.
    (void)count, (void)elem_bytes, (void)root, (void)chain;
    return 0;
    END SKELETON */
}
