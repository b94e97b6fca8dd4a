/* p2p_nccl_none.c: the "gpu" backend of a build without CUDA: it says so.
 * Like perftest's CUDA stubs, it lets every program build and run on a plain
 * host; launching answers CL_ERR_UNSUPPORTED with the reason, which programs
 * turn into the exit status the grader reports as skipped. */
#include "launch.h"

static cl_result unsupported(void)
{
    cl_set_error("this build has no GPU backend: nvcc or nccl.h was not found when it was "
                 "built (see ./commlab doctor)");
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
