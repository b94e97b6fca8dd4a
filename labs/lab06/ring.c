/* ring.c: lab 06's given bandwidth-optimal candidate: lab05's ring AllReduce. */
#include "coll.h"
#include "lab06.h"

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
        cl_coll_block(count, p, (r - s - 1 + 2 * p) % p, &so, &sl);
        cl_coll_block(count, p, (r - s - 2 + 2 * p) % p, &ro, &rl);
        CL_CHECK(cl_sendrecv(comm, out + so * es, sl * es, right, scratch, rl * es, left));
        CL_CHECK(cl_reduce_local(comm, out + ro * es, scratch, rl, t, op));
    }
    /* AllGather, in place. */
    for (int s = 0; s < p - 1; s++) {
        size_t so, sl, ro, rl;
        cl_coll_block(count, p, (r - s + p) % p, &so, &sl);
        cl_coll_block(count, p, (r - s - 1 + p) % p, &ro, &rl);
        CL_CHECK(cl_sendrecv(comm, out + so * es, sl * es, right, out + ro * es, rl * es, left));
    }
    return CL_OK;
}
