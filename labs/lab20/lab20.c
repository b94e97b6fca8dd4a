/* lab20.c: lab 20, AlltoAll for MoE expert parallelism.
 *
 * You write the pairwise-exchange AlltoAll and AlltoAllv, the hierarchical
 * (2-D) AlltoAll that crosses the fabric once per node pair, and the plan of
 * an MoE layer's dispatch: its capacity factor and how its tokens travel.
 * Read labs/lab20/README.md first; the TODOs below follow its sections.
 * lab20.h states the conventions the harness checks. Build with `make lab20`,
 * grade with `./grade lab20`.
 */
#include <math.h>

#include "lab20.h"

cl_result lab20_pairwise_alltoall(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                                  cl_dtype t)
{
    // TODO(lab20) 1: AlltoAll by pairwise exchange (handout section 1). Your own
    //   block is a local copy; every other block crosses to its rank in one of
    //   p - 1 steps, and in each step a rank exchanges with one partner only
    //   (one it sends to, one it receives from) and finishes before the next.
    //   Pick a schedule in which every pair meets exactly once, for any p.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab20_pairwise_alltoallv(cl_comm *comm, const void *sendbuf, const size_t *sendcounts,
                                   const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                                   const size_t *rdispls, cl_dtype t)
{
    // TODO(lab20) 2: AlltoAllv (handout section 2): the schedule of TODO 1 with
    //   a size per pair, in MPI_Alltoallv's layout. A pair with nothing to send
    //   either way exchanges nothing; one-sided steps still meet their partner.
    (void)comm, (void)sendbuf, (void)sendcounts, (void)sdispls, (void)recvbuf, (void)recvcounts;
    (void)rdispls, (void)t;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab20_hier_alltoall(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                              cl_dtype t, int local, void *scratch, size_t scratch_bytes)
{
    // TODO(lab20) 3: the hierarchical AlltoAll (handout section 3). First, inside
    //   the node, each rank gathers everything its node sends to the ranks that
    //   share its local index; then each rank exchanges one aggregated message
    //   with the rank of its local index on every other node. Arrange the blocks
    //   in scratch so that every message is one contiguous range, and so that
    //   what arrives in the second phase lands where recvbuf wants it.
    (void)comm, (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)local, (void)scratch;
    (void)scratch_bytes;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab20_moe_plan(const lab20_moe *m, lab20_plan *plan)
{
    // TODO(lab20) 4: the plan of one MoE layer (handout section 6). Find the
    //   capacity factor whose drops stay within the budget at the least cost,
    //   then predict what each way of moving the tokens would take on this
    //   machine, from the times the harness measured of your own AlltoAlls
    //   (m->pairwise_s, m->hier_s), and choose the fastest.
    (void)m, (void)plan;
    return CL_ERR_NOT_IMPLEMENTED;
}
