/* rail.c: the rails of lab 17, which the harness runs: real links between namespace nodes
 * (net), links it paces to their rates (cpu). Data never passes through this program: the
 * harness moves the bytes, checks that every byte arrives exactly once where it belongs,
 * and times everything on its own clock. */
#include "lab17.h"
#include "rail_op.h"
#include "student/student.h"

cl_result lab17_rail_post(cl_comm *comm, int rail, size_t offset, size_t n, lab17_xfer *x)
{
    lab17_op op = {.rail = rail, .offset = offset, .n = n};
    x->id = 0;
    CL_CHECK(cl_lab_call(comm, LAB17_OP_POST, &op, sizeof op));
    x->id = op.id;
    return CL_OK;
}

cl_result lab17_rail_wait(cl_comm *comm, lab17_xfer *x)
{
    lab17_op op = {.id = x->id};
    CL_CHECK(cl_lab_call(comm, LAB17_OP_WAIT, &op, sizeof op));
    x->id = 0;
    return CL_OK;
}
