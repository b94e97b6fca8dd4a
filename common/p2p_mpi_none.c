/* p2p_mpi_none.c: the "cpu" backend of a build without MPI: it says so.
 * A machine with GPUs but no Open MPI still builds every program (make
 * MPI=no, or no mpicc found): cases modes and the simulator run, one GPU
 * runs without a launcher (gpu/boot_solo.c), and the cpu backend answers
 * CL_ERR_UNSUPPORTED, which the grader reports as skipped. */
#include "launch.h"

static cl_result unsupported(void)
{
    cl_set_error("this build has no MPI (built with MPI=no, or where mpicc was not found): "
                 "the cpu backend needs Open MPI and a rebuild");
    return CL_ERR_UNSUPPORTED;
}

cl_result cl_mpi_launch(const cl_launch_opts *opts, cl_rank_body body, void *arg)
{
    (void)opts, (void)body, (void)arg;
    return unsupported();
}

cl_result cl_mpi_library(cl_comm *c, cl_coll_kind kind, const cl_coll_args *a)
{
    (void)c, (void)kind, (void)a;
    return unsupported();
}
