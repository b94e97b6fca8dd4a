/* toylab.c: the student's file of the toy lab. */
#include "toylab.h"

cl_result toy_scale(double x, double k, double *out)
{
    *out = x * k;
    return CL_OK;
}

cl_result toy_shift(cl_comm *c, const void *in, void *out, size_t bytes, int hops)
{
    int rank = cl_comm_rank(c), n = cl_comm_size(c);
    cl_request reqs[2];
    CL_CHECK(cl_irecv(c, out, bytes, (rank + n - hops) % n, &reqs[0]));
    CL_CHECK(cl_isend(c, in, bytes, (rank + hops) % n, &reqs[1]));
    return cl_waitall(c, 2, reqs);
}
