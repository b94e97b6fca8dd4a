/* harness_bench.c: lab 04's bench mode: the backend's AllReduce bus bandwidth at --bytes
 * (NCCL on gpu; the grader runs it with and without NCCL_GRAPH_FILE), and which graph file
 * it ran with.
 */
#include <stdlib.h>

#include "lab04_harness.h"

/* --- bench: the backend's AllReduce, with or without NCCL_GRAPH_FILE ----------------------- */

cl_result bench(cl_run *run, cl_comm *comm)
{
    size_t count = cl_run_opts(run)->bytes / sizeof(float);
    double busbw[CL_LIBRARY_BUSBW_MAX_REPEATS], wrong;
    int reps;
    CL_CHECK(
        cl_library_coll_busbw(run, comm, comm, CL_COLL_ALLREDUCE, count, busbw, &reps, &wrong));
    const char *graph = getenv("NCCL_GRAPH_FILE");
    cl_report_str(run, "graph_file", graph ? graph : "");
    cl_row *row = cl_row_begin(run, comm);
    cl_col_int(row, "bytes", (long long)(count * sizeof(float)));
    cl_col_nums(row, "busbw", busbw, (size_t)reps, "%.2f");
    cl_col_int(row, "wrong", (long long)wrong);
    cl_row_end(row);
    return CL_OK;
}
