/* p2p_nccl_none.c: the "gpu" backend of a build without CUDA: it says so.
 * Like perftest's CUDA stubs, it lets every program build and run on a plain
 * host; launching answers CL_ERR_UNSUPPORTED with the reason, which programs
 * turn into the exit status the grader reports as skipped. */
#include "gpu.h"
#include "launch.h"

static cl_result unsupported(void)
{
    cl_set_error("this build has no GPU backend: nvcc or a working NCCL was not found when it "
                 "was built (./commlab doctor says what is missing; rebuild with CUDA_HOME= "
                 "and NCCL_HOME=)");
    return CL_ERR_UNSUPPORTED;
}

cl_result cl_nccl_launch(const cl_launch_opts *opts, cl_rank_body body, void *arg)
{
    (void)opts, (void)body, (void)arg;
    return unsupported();
}

cl_result cl_nccl_library(cl_comm *c, cl_coll_kind kind, const cl_coll_args *a)
{
    (void)c, (void)kind, (void)a;
    return unsupported();
}

cl_result cl_gpu_device(const cl_comm *c, int *device)
{
    (void)c, (void)device;
    return unsupported();
}

cl_result cl_gpu_stream(const cl_comm *c, void **stream)
{
    (void)c, (void)stream;
    return unsupported();
}

cl_result cl_gpu_nccl(const cl_comm *c, void **nccl_comm)
{
    (void)c, (void)nccl_comm;
    return unsupported();
}

cl_result cl_gpu_pointer(const cl_comm *c, const void *buf, size_t bytes, void **dev)
{
    (void)c, (void)buf, (void)bytes, (void)dev;
    return unsupported();
}

cl_result cl_gpu_sync(cl_comm *c)
{
    (void)c;
    return unsupported();
}
