/* lab05.c: lab 05, ring collectives over the point-to-point interface.
 *
 * You write the ring ReduceScatter and AllGather that NCCL's ring algorithm
 * is made of, compose them into the ring AllReduce, and pipeline a Broadcast
 * along a chain. Read labs/lab05/README.md first; the TODOs below are in the
 * order of its sections. Build with `make lab05`, grade with `./grade lab05`.
 * Only cl_send/cl_recv/cl_sendrecv/cl_group_*, cl_reduce_local and
 * cl_copy_local: calling MPI's or NCCL's collectives is detected and fails.
 */
#include "lab05.h"

void lab05_block(size_t count, int p, int i, size_t *off, size_t *len)
{
    /* BEGIN SOLUTION */
    size_t base = count / (size_t)p, extra = count % (size_t)p, k = (size_t)i;
    *off = k * base + (k < extra ? k : extra);
    *len = base + (k < extra ? 1 : 0);
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab05) 1: the block partition.
    //   base = count / p, extra = count % p. Blocks 0..extra-1 have base + 1
    //   elements, the others base; they follow each other in rank order.
    //   Example: count 10, p 4 -> lengths 3 3 2 2, offsets 0 3 6 8.
    (void)count, (void)p, (void)i;
    *off = 0;
    *len = 0;
    END SKELETON */
}

cl_result lab05_ring_reduce_scatter(cl_comm *comm, const void *sendbuf, void *recvbuf,
                                    size_t count, cl_dtype t, cl_op op, void *scratch)
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
    // TODO(lab05) 2: ring ReduceScatter in p - 1 steps.
    //   right = rank + 1, left = rank - 1 (mod p). At step s (0 .. p-2) send the
    //   partial sum of block (rank - s - 1) mod p to the right and receive block
    //   (rank - s - 2) mod p from the left, then add your own contribution of
    //   that block (cl_reduce_local with sendbuf + its offset). At step 0 the
    //   partial sum is your own block of sendbuf; after the last step the block
    //   you received is block `rank`: receive it straight into recvbuf.
    //   Keep the partial sums in scratch (two halves: one is sent while the
    //   other is received) -- never write into sendbuf. p == 1: just copy.
    //   Use lab05_block() for every offset and length, cl_sendrecv for each step.
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
        CL_CHECK(cl_sendrecv(comm, out + soff * es, slen * es, right, out + roff * es,
                             rlen * es, left));
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab05) 3: ring AllGather in p - 1 steps.
    //   First put your own block at its offset in recvbuf (cl_copy_local; skip
    //   the copy when sendbuf already is that place). At step s send block
    //   (rank - s) mod p to the right and receive block (rank - s - 1) mod p
    //   from the left, both in place in recvbuf.
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
    // TODO(lab05) 4: AllReduce = ReduceScatter into your block of recvbuf, then an
    //   in-place AllGather from that block. Two calls; 2(p-1) steps in all.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)scratch;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab05_pipelined_broadcast(cl_comm *comm, const void *sendbuf, void *recvbuf,
                                    size_t count, cl_dtype t, int root, size_t chunk_bytes)
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
    // TODO(lab05) 5: pipelined chain Broadcast.
    //   Your position in the chain is pos = (rank - root) mod p; you receive from
    //   rank - 1 (unless pos == 0) and forward to rank + 1 (unless pos == p - 1).
    //   The root first copies sendbuf into its recvbuf. Cut the message into
    //   chunks of chunk_bytes (whole elements; the last one shorter). In step k
    //   (0 .. nchunks) post, in one cl_group_start/cl_group_end, the send of
    //   chunk k-1 to the next rank and the receive of chunk k from the previous
    //   one, so that every link of the chain is busy at the same time.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)root,
        (void)chunk_bytes;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
