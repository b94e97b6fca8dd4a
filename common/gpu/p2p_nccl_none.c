/* p2p_nccl_none.c: the "gpu" backend of a build without CUDA: it says so.
 * Like perftest's CUDA stubs, it lets every program build and run on a plain
 * host; each entry answers CL_ERR_UNSUPPORTED with the reason. */
#include "../p2p_backend.h"

static cl_result unsupported(void)
{
    cl_set_error("this build has no CUDA/NCCL (nvcc was not found when it was built)");
    return CL_ERR_UNSUPPORTED;
}

static cl_result none_launch(const cl_launch_opts *o, cl_rank_body b, void *a)
{
    (void)o, (void)b, (void)a;
    return unsupported();
}
static cl_result none_xfer(cl_comm *c, const void *p, size_t n, int peer)
{
    (void)c, (void)p, (void)n, (void)peer;
    return unsupported();
}
static cl_result none_recv(cl_comm *c, void *p, size_t n, int peer)
{
    (void)c, (void)p, (void)n, (void)peer;
    return unsupported();
}
static cl_result none_comm(cl_comm *c)
{
    (void)c;
    return unsupported();
}
static cl_result none_alloc(cl_comm *c, size_t n, void **out)
{
    (void)c, (void)n, (void)out;
    return unsupported();
}
static cl_result none_free(cl_comm *c, void *p)
{
    (void)c, (void)p;
    return unsupported();
}
static cl_result none_copy(cl_comm *c, void *d, const void *s, size_t n)
{
    (void)c, (void)d, (void)s, (void)n;
    return unsupported();
}
static cl_result none_reduce(cl_comm *c, void *d, const void *s, size_t n, cl_dtype t, cl_op op)
{
    (void)c, (void)d, (void)s, (void)n, (void)t, (void)op;
    return unsupported();
}
static double none_time(cl_comm *c)
{
    (void)c;
    return 0.0;
}
static cl_result none_allreduce(cl_comm *c, const void *s, void *r, size_t n, cl_dtype t, cl_op op)
{
    (void)c, (void)s, (void)r, (void)n, (void)t, (void)op;
    return unsupported();
}

const cl_backend_ops cl_backend_nccl = {
    .name = "gpu",
    .launch = none_launch,
    .send = none_xfer,
    .recv = none_recv,
    .group_start = none_comm,
    .group_end = none_comm,
    .barrier = none_comm,
    .mem_alloc = none_alloc,
    .mem_free = none_free,
    .mem_upload = none_copy,
    .mem_download = none_copy,
    .reduce_local = none_reduce,
    .copy_local = none_copy,
    .time = none_time,
    .baseline_allreduce = none_allreduce,
};
