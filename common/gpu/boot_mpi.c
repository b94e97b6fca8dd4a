/* boot_mpi.c: the processes of a "gpu" run are mpirun's; MPI carries the host-side exchanges. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../mpi_ranks.h"
#include "boot.h"

struct cl_boot {
    MPI_Comm comm;
};

static cl_result failed(const char *what, int err)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(err, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "error %d", err);
    cl_set_error("%s: %s", what, text);
    return CL_ERR_BACKEND;
}

#define MPI_TRY(call)                                                                              \
    do {                                                                                           \
        int mpi_rc_ = (call);                                                                      \
        if (mpi_rc_ != MPI_SUCCESS)                                                                \
            return failed(#call, mpi_rc_);                                                         \
    } while (0)

static cl_result wrap(MPI_Comm comm, cl_boot **out)
{
    *out = malloc(sizeof **out);
    if (!*out) {
        MPI_Comm_free(&comm);
        return CL_ERR_NOMEM;
    }
    (*out)->comm = comm;
    /* Errors come back as codes, with a reason, instead of ending the job silently. */
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    return CL_OK;
}

cl_result cl_boot_start(int *argc, char ***argv, cl_boot **world)
{
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized && MPI_Init(argc, argv) != MPI_SUCCESS) {
        cl_set_error("MPI_Init failed");
        return CL_ERR_BACKEND;
    }
    MPI_Comm dup;
    MPI_TRY(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    return wrap(dup, world);
}

void cl_boot_finish(void)
{
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized)
        MPI_Finalize();
}

void cl_boot_abort(int status) { MPI_Abort(MPI_COMM_WORLD, status); }

int cl_boot_rank(const cl_boot *b)
{
    int r = 0;
    MPI_Comm_rank(b->comm, &r);
    return r;
}

int cl_boot_size(const cl_boot *b)
{
    int n = 1;
    MPI_Comm_size(b->comm, &n);
    return n;
}

cl_result cl_boot_node(cl_boot *b, const void *mine, size_t bytes, void *all, int *local_rank,
                       int *local_size)
{
    MPI_Comm node;
    MPI_TRY(MPI_Comm_split_type(b->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Comm_rank(node, local_rank);
    MPI_Comm_size(node, local_size);
    int rc = bytes ? MPI_Allgather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, node)
                   : MPI_SUCCESS;
    MPI_Comm_free(&node);
    return rc == MPI_SUCCESS ? CL_OK : failed("MPI_Allgather", rc);
}

cl_result cl_boot_bcast(cl_boot *b, void *buf, size_t bytes, int root)
{
    MPI_TRY(MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, b->comm));
    return CL_OK;
}

cl_result cl_boot_agree(cl_boot *b, cl_op op, int64_t *v, int n)
{
    MPI_Op mo = op == CL_SUM ? MPI_SUM : op == CL_MAX ? MPI_MAX : MPI_MIN;
    MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT64_T, mo, b->comm));
    return CL_OK;
}

cl_result cl_boot_barrier(cl_boot *b)
{
    MPI_TRY(MPI_Barrier(b->comm));
    return CL_OK;
}

cl_result cl_boot_split(cl_boot *b, int color, int key, cl_boot **out, int **world_of)
{
    *out = NULL;
    *world_of = NULL;
    MPI_Comm nc;
    MPI_TRY(MPI_Comm_split(b->comm, color < 0 ? MPI_UNDEFINED : color, key, &nc));
    if (nc == MPI_COMM_NULL)
        return CL_OK;
    int *world;
    cl_result r = cl_mpi_world_ranks(nc, &world);
    if (r != CL_OK) {
        MPI_Comm_free(&nc);
        return r;
    }
    r = wrap(nc, out);
    if (r != CL_OK) {
        free(world);
        return r;
    }
    *world_of = world;
    return CL_OK;
}

void cl_boot_free(cl_boot *b)
{
    if (!b)
        return;
    MPI_Comm_free(&b->comm);
    free(b);
}

double cl_boot_time(void) { return MPI_Wtime(); }
