/* probe.c: the calibration's two probes, run in the student's program: a ping-pong between
 * ranks 0 and 1 and a loop of local reductions. Made here rather than in the harness, their
 * times include what every call of the student's code costs on the way to the harness.
 */
#include "lab06_harness.h"

cl_result lab06_probe_pingpong(cl_comm *c, void *args)
{
    const pingpong_args *a = args;
    int r = cl_comm_rank(c);
    for (int i = 0; i < a->iters && r < 2; i++) {
        CL_CHECK(r == 0 ? cl_send(c, a->buf, a->bytes, 1) : cl_recv(c, a->buf, a->bytes, 0));
        CL_CHECK(r == 0 ? cl_recv(c, a->buf, a->bytes, 1) : cl_send(c, a->buf, a->bytes, 0));
    }
    return CL_OK;
}

cl_result lab06_probe_reduce_loop(cl_comm *c, void *args)
{
    const reduce_args *a = args;
    for (int i = 0; i < a->iters; i++)
        CL_CHECK(cl_reduce_local(c, a->a, a->b, a->count, CL_FLOAT32, CL_SUM));
    return CL_OK;
}
