/* driver.c: lab 05's plug-in: the ring collectives, verified and timed by the collective suite.
 *
 *   lab05 verify [--backend cpu|gpu|sim] [--nranks N] [--coll A,B]
 *   lab05 bench  --coll allreduce --bytes 64M [--repeats R]
 *   lab05 sweep  [--coll ...] [-b 8] [-e 64M] [-f 4]
 *
 * AllReduce is timed against the library's own (MPI_Allreduce, ncclAllReduce,
 * the simulator's NCCL ring), Broadcast against the library's Broadcast (a
 * pipelined chain on "sim"); the harness does the rest (coll_suite.h).
 */
#include "harness/coll_suite.h"
#include "lab05.h"

#ifdef CL_STUDENT_SIDE

static cl_result reduce_scatter(cl_comm *c, void *args)
{
    const cl_coll_args *a = args;
    return lab05_ring_reduce_scatter(c, a->sendbuf, a->recvbuf, a->count, a->dtype, a->op,
                                     a->scratch);
}

static cl_result allgather(cl_comm *c, void *args)
{
    const cl_coll_args *a = args;
    return lab05_ring_allgather(c, a->sendbuf, a->recvbuf, a->count, a->dtype);
}

static cl_result allreduce(cl_comm *c, void *args)
{
    const cl_coll_args *a = args;
    return lab05_ring_allreduce(c, a->sendbuf, a->recvbuf, a->count, a->dtype, a->op,
                                a->scratch);
}

static cl_result broadcast(cl_comm *c, void *args)
{
    const cl_coll_args *a = args;
    return lab05_pipelined_broadcast(c, a->sendbuf, a->recvbuf, a->count, a->dtype, a->root,
                                     cl_pipeline_chunk(a->count * cl_dtype_size(a->dtype)));
}

CL_STUDENT_ENTRIES({"reducescatter", reduce_scatter}, {"allgather", allgather},
                   {"allreduce", allreduce}, {"broadcast", broadcast});

#else

const cl_lab cl_lab_def = {
    .name = "lab05",
    .title = "集合通信原语 (一): ring ReduceScatter, AllGather, AllReduce and pipelined Broadcast",
    .collectives = (const cl_coll_entry[]){
        {.name = "reducescatter", .kind = CL_COLL_REDUCESCATTER},
        {.name = "allgather", .kind = CL_COLL_ALLGATHER},
        {.name = "allreduce", .kind = CL_COLL_ALLREDUCE, .baseline = 1},
        {.name = "broadcast", .kind = CL_COLL_BROADCAST, .baseline = 1},
        {0}},
};

#endif
