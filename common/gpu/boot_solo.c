/* boot_solo.c: a "gpu" run of one process, for a build without MPI.
 *
 * One GPU needs no launcher: the process is rank 0 of 1, every exchange is a
 * copy. A launcher that started several processes (mpirun, srun) would give
 * each the illusion of being alone, so that is refused with the reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../timing.h"
#include "boot.h"

struct cl_boot {
    int unused;
};

/* The number of processes a launcher says it started (1 when none did). */
static long launched(const char **by)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE",
                                       "MPI_LOCALNRANKS", "SLURM_STEP_NUM_TASKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        long n = v ? strtol(v, NULL, 10) : 0;
        if (n > 1) {
            *by = vars[i];
            return n;
        }
    }
    return 1;
}

cl_result cl_boot_start(int *argc, char ***argv, cl_boot **world)
{
    (void)argc, (void)argv;
    const char *by = NULL;
    long n = launched(&by);
    if (n > 1) {
        cl_set_error("started as %ld processes (%s), but this build has no MPI to connect "
                     "them: it runs one GPU per run (rebuild where mpicc exists)",
                     n, by);
        return CL_ERR_UNSUPPORTED;
    }
    *world = calloc(1, sizeof **world);
    return *world ? CL_OK : CL_ERR_NOMEM;
}

void cl_boot_finish(void) {}

void cl_boot_abort(int status) { exit(status); }

int cl_boot_rank(const cl_boot *b)
{
    (void)b;
    return 0;
}

int cl_boot_size(const cl_boot *b)
{
    (void)b;
    return 1;
}

cl_result cl_boot_node(cl_boot *b, const void *mine, size_t bytes, void *all, int *local_rank,
                       int *local_size)
{
    (void)b;
    if (bytes)
        memcpy(all, mine, bytes);
    *local_rank = 0;
    *local_size = 1;
    return CL_OK;
}

cl_result cl_boot_bcast(cl_boot *b, void *buf, size_t bytes, int root)
{
    (void)b, (void)buf, (void)bytes, (void)root;
    return CL_OK;
}

cl_result cl_boot_agree(cl_boot *b, cl_op op, int64_t *v, int n)
{
    (void)b, (void)op, (void)v, (void)n;
    return CL_OK;
}

cl_result cl_boot_barrier(cl_boot *b)
{
    (void)b;
    return CL_OK;
}

cl_result cl_boot_split(cl_boot *b, int color, int key, cl_boot **out, int **world_of)
{
    (void)b, (void)key;
    *out = NULL;
    *world_of = NULL;
    if (color < 0)
        return CL_OK;
    *world_of = calloc(1, sizeof **world_of);
    *out = calloc(1, sizeof **out);
    if (!*world_of || !*out) {
        free(*world_of), free(*out);
        *out = NULL, *world_of = NULL;
        return CL_ERR_NOMEM;
    }
    return CL_OK;
}

void cl_boot_free(cl_boot *b) { free(b); }

double cl_boot_time(void) { return cl_wtime(); }
