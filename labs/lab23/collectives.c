/* collectives.c: lab 23's given code: ring AllGather, ReduceScatter and AllReduce of floats.
 *
 * The rings of lab 05 over the p2p interface: every rank sends to rank + 1 and
 * receives from rank - 1; t - 1 steps for AllGather and ReduceScatter, 2(t - 1)
 * for AllReduce. Each rank sends (t - 1)/t of the data for the first two and
 * 2(t - 1)/t for the third: an AllReduce costs what a ReduceScatter and an
 * AllGather cost together.
 */
#include "coll.h"
#include "lab23.h"

static int mod(int a, int p) { return ((a % p) + p) % p; }

cl_result lab23_allgather(cl_comm *c, const float *in, float *out, size_t n)
{
    int t = cl_comm_size(c), r = cl_comm_rank(c);
    size_t bytes = n * sizeof(float);
    CL_CHECK(cl_copy_local(c, out + (size_t)r * n, in, bytes));
    for (int k = 0; k < t - 1; k++) {
        int send = mod(r - k, t), recv = mod(r - k - 1, t);
        CL_CHECK(cl_sendrecv(c, out + (size_t)send * n, bytes, mod(r + 1, t),
                             out + (size_t)recv * n, bytes, mod(r - 1, t)));
    }
    return CL_OK;
}

cl_result lab23_reduce_scatter(cl_comm *c, const float *in, float *out, size_t n)
{
    int t = cl_comm_size(c), r = cl_comm_rank(c);
    size_t bytes = n * sizeof(float);
    if (t == 1)
        return cl_copy_local(c, out, in, bytes);
    cl_result rc = CL_OK;
    float *scratch = NULL;
    CL_TRY(cl_mem_alloc(c, 2 * bytes, (void **)&scratch));
    float *acc = scratch, *tmp = scratch + n;
    /* At step k the partial sum of block r - k - 1 goes right and that of block
     * r - k - 2 comes in, to which this rank adds its own; after t - 1 steps the
     * block that arrives last is block r, complete. */
    for (int k = 0; k < t - 1; k++) {
        int send = mod(r - k - 1, t), recv = mod(r - k - 2, t);
        const float *from = k == 0 ? in + (size_t)send * n : acc;
        CL_TRY(cl_sendrecv(c, from, bytes, mod(r + 1, t), tmp, bytes, mod(r - 1, t)));
        CL_TRY(cl_reduce_local(c, tmp, in + (size_t)recv * n, n, CL_FLOAT32, CL_SUM));
        float *swap = acc;
        acc = tmp, tmp = swap;
    }
    CL_TRY(cl_copy_local(c, out, acc, bytes));
done:
    if (scratch)
        cl_mem_free(c, scratch);
    return rc;
}

cl_result lab23_allreduce(cl_comm *c, float *buf, size_t n)
{
    int t = cl_comm_size(c), r = cl_comm_rank(c);
    if (t == 1 || n == 0)
        return CL_OK;
    size_t most, first;
    cl_coll_block(n, t, 0, &first, &most); /* block 0 is the largest */
    cl_result rc = CL_OK;
    float *tmp = NULL;
    CL_TRY(cl_mem_alloc(c, most * sizeof(float), (void **)&tmp));
    for (int k = 0; k < 2 * (t - 1); k++) {
        int rs = k < t - 1, step = rs ? k : k - (t - 1);
        int send = rs ? mod(r - step, t) : mod(r + 1 - step, t);
        int recv = rs ? mod(r - step - 1, t) : mod(r - step, t);
        size_t soff, slen, roff, rlen;
        cl_coll_block(n, t, send, &soff, &slen);
        cl_coll_block(n, t, recv, &roff, &rlen);
        float *into = rs ? tmp : buf + roff;
        CL_TRY(cl_sendrecv(c, buf + soff, slen * sizeof(float), mod(r + 1, t), into,
                           rlen * sizeof(float), mod(r - 1, t)));
        if (rs && rlen)
            CL_TRY(cl_reduce_local(c, buf + roff, tmp, rlen, CL_FLOAT32, CL_SUM));
    }
done:
    if (tmp)
        cl_mem_free(c, tmp);
    return rc;
}
