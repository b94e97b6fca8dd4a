/* link.c: the links of the staged copy, which the harness emulates (cpu, sim) or drives
 * (gpu: a CPU copy into pinned memory, then cudaMemcpyAsync to the GPU). It counts every
 * byte through each link, checks that no copy reads a buffer before it is filled or
 * overwrites one still being read, and times everything on its own clock. */
#include "lab12.h"
#include "link.h"
#include "student/student.h"

cl_result lab12_stage(cl_comm *comm, int nbuf, size_t chunk)
{
    lab12_op op = {.buf = nbuf, .n = chunk};
    return cl_lab_call(comm, LAB12_OP_STAGE, &op, sizeof op);
}

static cl_result post(cl_comm *comm, int code, int buf, size_t offset, size_t n, lab12_copy *copy)
{
    lab12_op op = {.buf = buf, .offset = offset, .n = n};
    copy->id = 0;
    CL_CHECK(cl_lab_call(comm, code, &op, sizeof op));
    copy->id = op.id;
    return CL_OK;
}

cl_result lab12_copy_in(cl_comm *comm, int buf, size_t offset, size_t n, lab12_copy *copy)
{
    return post(comm, LAB12_OP_IN, buf, offset, n, copy);
}

cl_result lab12_copy_out(cl_comm *comm, int buf, size_t offset, size_t n, lab12_copy *copy)
{
    return post(comm, LAB12_OP_OUT, buf, offset, n, copy);
}

cl_result lab12_wait(cl_comm *comm, lab12_copy *copy)
{
    lab12_op op = {.id = copy->id};
    CL_CHECK(cl_lab_call(comm, LAB12_OP_WAIT, &op, sizeof op));
    copy->id = 0;
    return CL_OK;
}
