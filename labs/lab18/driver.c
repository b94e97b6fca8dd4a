/* driver.c: lab 18's plug-in: a two-level AllReduce on split communicators, its model and
 * its choice.
 *
 *   lab18 verify  [--backend cpu|gpu|sim] [--ranks-per-node L --placement block|cyclic]
 *                                          your AllReduce, every output checked, and the
 *                                          pattern of a two-level algorithm
 *   lab18 bench   --coll allreduce --bytes 64M   yours against the library's AllReduce
 *   lab18 compare --bytes 8M [--intra 5:2 --inter 0.025:80 --nics 1]
 *                                          the given flat ring and yours, interleaved, and
 *                                          what your model predicts for both
 *   lab18 choose  system=dgx-a100 nodes=8 bytes=16777216
 *                                          your choice against the simulator's two times
 *
 * Nodes: on "sim" the system's GPUs of a node; with --ranks-per-node, groups of ranks of
 * one machine; otherwise the ranks of each host (net: every namespace node). Before the
 * first call, the harness calls your lab18_split once on every rank with its node; your
 * communicators are kept for the AllReduce calls that follow.
 *
 * This file holds the student's entries and the lab's table; lab18_harness.h lists the
 * harness_*.c files that hold the rest, kept_comms.c keeps the split's communicators.
 */
#include "harness/coll_suite.h"
#include "lab18_args.h"

#ifdef CL_STUDENT_SIDE

static cl_result split(cl_comm *c, void *args)
{
    const split_args *a = args;
    return lab18_split_kept(c, a->node);
}

static cl_result allreduce(cl_comm *c, void *args)
{
    const cl_coll_args *a = args;
    cl_comm *node, *rail;
    CL_CHECK(lab18_kept(c, &node, &rail));
    return lab18_hier_allreduce(node, rail, a->sendbuf, a->recvbuf, a->count, a->dtype, a->op,
                                a->scratch);
}

CL_COLL_REDUCING_ENTRY(flat, lab18_ring_allreduce)

static cl_result model(cl_comm *c, void *args)
{
    (void)c;
    model_args *a = args;
    a->t_flat = lab18_predict(&a->m, LAB18_FLAT, a->bytes);
    a->t_hier = lab18_predict(&a->m, LAB18_HIER, a->bytes);
    a->choice = (int32_t)lab18_choose(&a->m, a->bytes);
    return CL_OK;
}

CL_STUDENT_ENTRIES({"split", split}, {"allreduce", allreduce}, {"flat", flat}, {"model", model});

#else

#include "lab18_harness.h"

const cl_lab cl_lab_def = {
    .name = "lab18",
    .title = "分层集合通信: a two-level AllReduce on node and rail communicators",
    .modes = lab18_modes,
    .options = lab18_options,
    .collectives = lab18_collectives,
};

#endif
