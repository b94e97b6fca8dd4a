/* driver.c: lab 05's plug-in: the ring collectives, and the chunk size of a pipelined Broadcast.
 *
 *   lab05 verify [--backend cpu|gpu|sim] [--nranks N] [--coll A,B]
 *   lab05 bench  --coll allreduce --bytes 64M [--repeats R]
 *   lab05 sweep  [--coll ...] [-b 8] [-e 64M] [-f 4]
 *   lab05 tune   [--backend cpu|sim] [--nranks N] [-b 1M] [-e 256M] [-f 8] [--repeats R]
 *
 * verify, bench and sweep are the collective suite's (coll_suite.h): AllReduce
 * is timed against the library's own (MPI_Allreduce, ncclAllReduce, the
 * simulator's NCCL ring). The suite calls the student's Broadcast with a chunk
 * of its own (a third of the message plus one byte: rarely whole elements).
 *
 * tune scores the student's decision, lab05_broadcast_chunk(), by the time of
 * the student's Broadcast at that chunk size. harness_tune.c holds the tables
 * of collectives and modes, the chain's message pattern and the tune mode.
 */
#include "lab05_harness.h"

#ifdef CL_STUDENT_SIDE

CL_COLL_REDUCING_ENTRY(reduce_scatter, lab05_ring_reduce_scatter)
CL_COLL_REDUCING_ENTRY(allreduce, lab05_ring_allreduce)

static cl_result allgather(cl_comm *c, void *args)
{
    const cl_coll_args *a = args;
    return lab05_ring_allgather(c, a->sendbuf, a->recvbuf, a->count, a->dtype);
}

/* The suite's calls test the Broadcast at a chunk of the harness's. */
static cl_result broadcast(cl_comm *c, void *args)
{
    const cl_coll_args *a = args;
    size_t bytes = a->count * cl_dtype_size(a->dtype);
    return lab05_pipelined_broadcast(c, a->sendbuf, a->recvbuf, a->count, a->dtype, a->root,
                                     lab05_suite_chunk(bytes));
}

/* The tuned call: the student's chunk size, then the student's Broadcast with it. */
static cl_result tuned_broadcast(cl_comm *c, void *args)
{
    tune_args *t = args;
    const cl_coll_args *a = &t->a;
    size_t es = cl_dtype_size(a->dtype);
    size_t chunk = lab05_broadcast_chunk(a->count, es, a->root, &t->chain);
    t->chunk_bytes = chunk;
    size_t elems = chunk / es ? chunk / es : 1;
    if (chunk == 0 || (a->count + elems - 1) / elems > LAB05_MAX_CHUNKS) {
        cl_set_error("lab05_broadcast_chunk(%zu, %zu, %d, chain) returned %zu: %s", a->count, es,
                     a->root, chunk,
                     chunk ? "more than LAB05_MAX_CHUNKS chunks" : "a chunk of 0 bytes");
        return CL_ERR_INVALID;
    }
    return lab05_pipelined_broadcast(c, a->sendbuf, a->recvbuf, a->count, a->dtype, a->root, chunk);
}

CL_STUDENT_ENTRIES({"reducescatter", reduce_scatter}, {"allgather", allgather},
                   {"allreduce", allreduce}, {"broadcast", broadcast},
                   {"tuned_broadcast", tuned_broadcast});

#else

const cl_lab cl_lab_def = {
    .name = "lab05",
    .title = "集合通信原语 (一): ring ReduceScatter, AllGather, AllReduce and pipelined Broadcast",
    .collectives = lab05_collectives,
    .modes = lab05_modes,
};

#endif
