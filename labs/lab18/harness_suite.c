/* harness_suite.c: lab 18's verify, bench and sweep: the collective suite's modes, run once
 * every rank's node is known and the student's split made.
 */
#include "lab18_harness.h"

/* verify and bench: the suite's, once the nodes are known and split. */
cl_result verify_mode(cl_run *run, cl_comm *comm)
{
    CL_CHECK(nodes_setup(run, comm));
    CL_CHECK(nodes_split(comm));
    return cl_coll_verify(run, comm);
}

cl_result bench_mode(cl_run *run, cl_comm *comm)
{
    CL_CHECK(nodes_setup(run, comm));
    CL_CHECK(nodes_split(comm));
    return cl_coll_bench(run, comm);
}

cl_result sweep_mode(cl_run *run, cl_comm *comm)
{
    CL_CHECK(nodes_setup(run, comm));
    CL_CHECK(nodes_split(comm));
    return cl_coll_sweep(run, comm);
}
