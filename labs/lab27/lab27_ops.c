/* lab27_ops.c: the operations lab 27 gives you. Each one goes to the harness, which checks
 * the buffers are yours, performs it and answers; you time them with cl_comm_time(). */
#include "lab27.h"
#include "student/student.h"
#include "lab27_wire.h"

cl_result lab27_coll(cl_comm *c, cl_coll_kind kind, const void *sendbuf, void *recvbuf,
                     size_t count)
{
    lab27_op_args a = {.kind = kind, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count};
    return cl_lab_call(c, LAB27_OP_COLL, &a, sizeof a);
}

cl_result lab27_fill(cl_comm *c, void *buf, size_t count, size_t first)
{
    lab27_op_args a = {.recvbuf = buf, .count = count, .first = first};
    return cl_lab_call(c, LAB27_OP_FILL, &a, sizeof a);
}

cl_result lab27_check(cl_comm *c, const void *buf, size_t count, int lo, int hi, size_t first,
                      long long *wrong)
{
    lab27_op_args a = {.sendbuf = buf, .count = count, .lo = lo, .hi = hi, .first = first};
    CL_CHECK(cl_lab_call(c, LAB27_OP_CHECK, &a, sizeof a));
    *wrong = a.wrong;
    return CL_OK;
}
