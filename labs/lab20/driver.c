/* driver.c: lab 20's plug-in: AlltoAll by pairwise exchange and in two levels, AlltoAllv,
 * and the plan of an MoE layer's dispatch.
 *
 *   lab20 verify  [--backend cpu|gpu|sim] [--nranks N] [--coll alltoall,alltoallv]
 *   lab20 bench   --coll alltoall --bytes 16M [--repeats R]
 *   lab20 sweep   [--coll ...] [-b 8] [-e 64M] [-f 4]
 *   lab20 hier    [--local L]                 the two-level AlltoAll, verified
 *   lab20 compare [--local L] [-b ..] [-e ..] pairwise, two-level and the library's, timed
 *   lab20 moe     [--system S] [--tokens ..] [--skew ..] [--budget ..]   MoE layers, planned
 *
 * verify, bench and sweep are the collective suite's (coll_suite.h): the student's pairwise
 * AlltoAll and AlltoAllv against MPI_Alltoall(v), NCCL's grouped send/recv, or on "sim" the same
 * group simulated. This file holds the student's entries and the lab's table; its collectives,
 * modes and options are in harness_tables.c, the message patterns in harness_pattern.c, hier and
 * compare in harness_hier.c, moe in harness_moe.c, what they share in harness_data.c.
 */
#include "lab20_harness.h"

#ifdef CL_STUDENT_SIDE

static cl_result alltoall(cl_comm *c, void *args)
{
    const cl_coll_args *a = args;
    return lab20_pairwise_alltoall(c, a->sendbuf, a->recvbuf, a->count, a->dtype);
}

static cl_result alltoallv(cl_comm *c, void *args)
{
    const cl_coll_args *a = args;
    return lab20_pairwise_alltoallv(c, a->sendbuf, a->sendcounts, a->sdispls, a->recvbuf,
                                    a->recvcounts, a->rdispls, a->dtype);
}

static cl_result hier(cl_comm *c, void *args)
{
    const hier_args *h = args;
    return lab20_hier_alltoall(c, h->a.sendbuf, h->a.recvbuf, h->a.count, h->a.dtype, h->local,
                               h->a.scratch, h->a.scratch_bytes);
}

static cl_result plan(cl_comm *c, void *args)
{
    (void)c;
    plan_args *pa = args;
    pa->m.counts = pa->counts;
    return lab20_moe_plan(&pa->m, &pa->plan);
}

/* The dispatch as the plan says, with the student's own collectives. */
static cl_result dispatch(cl_comm *c, void *args)
{
    const dispatch_args *d = args;
    const cl_coll_args *a = &d->a;
    if (d->layout == LAB20_PADDED && d->algo == LAB20_HIER)
        return lab20_hier_alltoall(c, a->sendbuf, a->recvbuf, a->count, a->dtype, d->local,
                                   a->scratch, a->scratch_bytes);
    if (d->layout == LAB20_PADDED)
        return lab20_pairwise_alltoall(c, a->sendbuf, a->recvbuf, a->count, a->dtype);
    CL_CHECK(
        lab20_pairwise_alltoall(c, d->cnt_send, d->cnt_recv, (size_t)cl_comm_size(c), CL_INT64));
    return lab20_pairwise_alltoallv(c, a->sendbuf, a->sendcounts, a->sdispls, a->recvbuf,
                                    a->recvcounts, a->rdispls, a->dtype);
}

CL_STUDENT_ENTRIES({"alltoall", alltoall}, {"alltoallv", alltoallv}, {"hier", hier}, {"plan", plan},
                   {"dispatch", dispatch});

#else

const cl_lab cl_lab_def = {
    .name = "lab20",
    .title = "AlltoAll 与 MoE 专家并行: pairwise, two-level, AlltoAllv and the dispatch plan",
    .collectives = lab20_collectives,
    .modes = lab20_modes,
    .options = lab20_options,
};

#endif
