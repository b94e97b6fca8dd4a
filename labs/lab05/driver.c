/* driver.c: lab 05's harness: the student's ring collectives plugged into common/collective.
 *
 *   lab05 verify [--backend cpu|gpu|sim] [--nranks N] [--coll A,B] --json FILE
 *   lab05 bench  --coll allreduce --bytes N [--repeats R] --json FILE
 *   lab05 sweep  [--coll ...] [--min-bytes N] [--max-bytes N] [--timing-only] --json FILE
 *
 * Collectives: reducescatter, allgather, allreduce (baseline: the backend's own
 * AllReduce, MPI_Allreduce / ncclAllReduce / the simulator's ring), broadcast
 * (baseline: MPI_Bcast on cpu, the harness's pipelined chain on sim; chunk size
 * cl_coll_pipeline_chunk() for both).
 * Everything else (buffers, fresh data, verification, timing, JSON) is the
 * shared harness's: see common/collective.h.
 */
#include "collective.h"
#include "lab05.h"

static cl_result reduce_scatter(cl_comm *c, const cl_coll_args *a)
{
    return lab05_ring_reduce_scatter(c, a->sendbuf, a->recvbuf, a->count, a->dtype, a->op,
                                     a->scratch);
}

static cl_result allgather(cl_comm *c, const cl_coll_args *a)
{
    return lab05_ring_allgather(c, a->sendbuf, a->recvbuf, a->count, a->dtype);
}

static cl_result allreduce(cl_comm *c, const cl_coll_args *a)
{
    return lab05_ring_allreduce(c, a->sendbuf, a->recvbuf, a->count, a->dtype, a->op,
                                a->scratch);
}

static cl_result broadcast(cl_comm *c, const cl_coll_args *a)
{
    return lab05_pipelined_broadcast(c, a->sendbuf, a->recvbuf, a->count, a->dtype, a->root,
                                     cl_coll_pipeline_chunk(a->count * cl_dtype_size(a->dtype)));
}

static const cl_coll_entry entries[] = {
    {.name = "reducescatter", .kind = CL_COLL_REDUCE_SCATTER, .fn = reduce_scatter},
    {.name = "allgather", .kind = CL_COLL_ALLGATHER, .fn = allgather},
    {.name = "allreduce", .kind = CL_COLL_ALLREDUCE, .fn = allreduce,
     .baseline = cl_coll_baseline_allreduce},
    {.name = "broadcast", .kind = CL_COLL_BROADCAST, .fn = broadcast,
     .baseline = cl_coll_baseline_broadcast},
};

int main(int argc, char **argv)
{
    const cl_coll_suite suite = {.lab = "lab05", .entries = entries,
                                 .nentries = sizeof entries / sizeof entries[0]};
    return cl_coll_main(&suite, argc, argv);
}
