/* ring.c: lab 18's given ring collectives on any communicator (lab05's rings).
 *
 * The job's flat AllReduce is lab18_ring_allreduce() on the world communicator; your
 * hierarchical one calls these three on the node and rail communicators. */
#include "lab18.h"

static void block(size_t count, int p, int i, size_t *off, size_t *len)
{
    cl_coll_block(count, p, ((i % p) + p) % p, off, len);
}

cl_result lab18_ring_reduce_scatter(cl_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                    cl_dtype t, cl_op op, void *scratch)
{
    int p = cl_comm_size(c), r = cl_comm_rank(c);
    size_t es = cl_dtype_size(t), bmax = count / (size_t)p + 1, so, sl, ro, rl, mo, ml;
    const char *in = sendbuf;
    char *out = recvbuf, *part[2] = {scratch, (char *)scratch + bmax * es};
    block(count, p, r, &mo, &ml);
    if (p == 1)
        return cl_copy_local(c, out, in + mo * es, ml * es);
    /* Step s sends the partial sum of block r-1-s and receives that of block r-2-s,
     * adding this rank's part; the last block received is this rank's own. */
    int in_place = out == in + mo * es;
    for (int s = 0; s < p - 1; s++) {
        block(count, p, r - 1 - s, &so, &sl);
        block(count, p, r - 2 - s, &ro, &rl);
        const char *src = s == 0 ? in + so * es : part[(s - 1) % 2];
        char *dst = s == p - 2 && !in_place ? out : part[s % 2];
        CL_CHECK(cl_sendrecv(c, src, sl * es, (r + 1) % p, dst, rl * es, (r - 1 + p) % p));
        CL_CHECK(cl_reduce_local(c, dst, in + ro * es, rl, t, op));
    }
    return in_place ? cl_copy_local(c, out, part[(p - 2) % 2], ml * es) : CL_OK;
}

cl_result lab18_ring_allgather(cl_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                               cl_dtype t)
{
    int p = cl_comm_size(c), r = cl_comm_rank(c);
    size_t es = cl_dtype_size(t), so, sl, ro, rl, mo, ml;
    char *buf = recvbuf;
    block(count, p, r, &mo, &ml);
    if (sendbuf != buf + mo * es)
        CL_CHECK(cl_copy_local(c, buf + mo * es, sendbuf, ml * es));
    for (int s = 0; s < p - 1; s++) {
        block(count, p, r - s, &so, &sl);
        block(count, p, r - s - 1, &ro, &rl);
        CL_CHECK(cl_sendrecv(c, buf + so * es, sl * es, (r + 1) % p, buf + ro * es, rl * es,
                             (r - 1 + p) % p));
    }
    return CL_OK;
}

cl_result lab18_ring_allreduce(cl_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                               cl_dtype t, cl_op op, void *scratch)
{
    int p = cl_comm_size(c), r = cl_comm_rank(c);
    size_t es = cl_dtype_size(t), mo, ml;
    char *buf = recvbuf;
    if (sendbuf != recvbuf)
        CL_CHECK(cl_copy_local(c, buf, sendbuf, count * es));
    if (p == 1)
        return CL_OK;
    block(count, p, r, &mo, &ml);
    CL_CHECK(lab18_ring_reduce_scatter(c, buf, buf + mo * es, count, t, op, scratch));
    return lab18_ring_allgather(c, buf + mo * es, buf, count, t);
}
