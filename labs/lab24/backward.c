/* backward.c: lab 24's given code: the backward pass, an operation of the harness. */
#include "lab24.h"
#include "lab24_ops.h"

#include "student/student.h"

cl_result lab24_backward(cl_comm *c, int ready[2], int *nready, int *left)
{
    lab24_backward_args a = {.nready = 0};
    CL_CHECK(cl_lab_call(c, LAB24_OP_BACKWARD, &a, sizeof a));
    *nready = a.nready < 0 ? 0 : a.nready > 2 ? 2 : a.nready;
    for (int i = 0; i < *nready; i++)
        ready[i] = a.ready[i];
    *left = a.left;
    return CL_OK;
}
