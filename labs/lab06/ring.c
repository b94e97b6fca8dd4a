/* ring.c: lab 06's given bandwidth-optimal candidate: lab05's ring AllReduce. */
#include "lab06.h"

static void block(size_t count, int p, int i, size_t *off, size_t *len)
{
    size_t base = count / (size_t)p, extra = count % (size_t)p, k = (size_t)i;
    *off = k * base + (k < extra ? k : extra);
    *len = base + (k < extra ? 1 : 0);
}

cl_result lab06_ring_allreduce(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                               cl_dtype t, cl_op op, void *scratch)
{
    int p = cl_comm_size(comm), r = cl_comm_rank(comm);
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    size_t es = cl_dtype_size(t);
    char *out = recvbuf;
    CL_CHECK(cl_copy_local(comm, out, sendbuf, count * es));
    /* ReduceScatter: after p-1 steps block r of recvbuf holds the full reduction. */
    for (int s = 0; s < p - 1; s++) {
        size_t so, sl, ro, rl;
        block(count, p, (r - s - 1 + 2 * p) % p, &so, &sl);
        block(count, p, (r - s - 2 + 2 * p) % p, &ro, &rl);
        CL_CHECK(cl_sendrecv(comm, out + so * es, sl * es, right, scratch, rl * es, left));
        CL_CHECK(cl_reduce_local(comm, out + ro * es, scratch, rl, t, op));
    }
    /* AllGather, in place. */
    for (int s = 0; s < p - 1; s++) {
        size_t so, sl, ro, rl;
        block(count, p, (r - s + p) % p, &so, &sl);
        block(count, p, (r - s - 1 + p) % p, &ro, &rl);
        CL_CHECK(cl_sendrecv(comm, out + so * es, sl * es, right, out + ro * es, rl * es, left));
    }
    return CL_OK;
}
