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
 * This file holds the student's entries and the lab's table; verify, bench and sweep are in
 * harness_suite.c, compare and choose in harness_model.c, the nodes, the split and the
 * two-level pattern in harness_nodes.c (lab18_harness.h).
 */
#include <stdlib.h>

#include "harness/coll_suite.h"
#include "lab18_args.h"

#ifdef CL_STUDENT_SIDE

/* Each rank's communicators from lab18_split (on "sim" this program hosts every rank, and
 * a rank's split may yield to the others: each entry stays where it was allocated). */
typedef struct comms {
    cl_comm *world, *node, *rail;
} comms;
static comms **kept;
static int nkept;

static comms *find(cl_comm *world)
{
    for (int i = 0; i < nkept; i++)
        if (kept[i]->world == world)
            return kept[i];
    return NULL;
}

static cl_result split(cl_comm *c, void *args)
{
    split_args *a = args;
    comms *k = find(c);
    if (!k) {
        comms **q = realloc(kept, (size_t)(nkept + 1) * sizeof *q);
        if (!q)
            return CL_ERR_NOMEM;
        kept = q;
        if (!(k = calloc(1, sizeof *k)))
            return CL_ERR_NOMEM;
        kept[nkept++] = k;
    } else {
        if (k->node)
            cl_comm_free(k->node);
        if (k->rail)
            cl_comm_free(k->rail);
    }
    *k = (comms){.world = c};
    return lab18_split(c, a->node, &k->node, &k->rail);
}

static cl_result allreduce(cl_comm *c, void *args)
{
    const cl_coll_args *a = args;
    comms *k = find(c);
    if (!k || !k->node || !k->rail) {
        cl_set_error("lab18_split gave this rank no node or rail communicator");
        return CL_ERR_INVALID;
    }
    return lab18_hier_allreduce(k->node, k->rail, a->sendbuf, a->recvbuf, a->count, a->dtype, a->op,
                                a->scratch);
}

static cl_result flat(cl_comm *c, void *args)
{
    const cl_coll_args *a = args;
    return lab18_ring_allreduce(c, a->sendbuf, a->recvbuf, a->count, a->dtype, a->op, a->scratch);
}

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
    .modes =
        (const cl_mode[]){
            {.name = "verify",
             .help = "your two-level AllReduce on many counts, types and ops, every output "
                     "checked, and its pattern",
             .ranks = verify_mode},
            {.name = "bench",
             .help = "yours (--coll allreduce) at --bytes against the library's AllReduce",
             .ranks = bench_mode},
            {.name = "sweep",
             .help = "yours and the library's from -b to -e bytes, nccl-tests' table",
             .ranks = sweep_mode},
            {.name = "compare",
             .help = "the given flat ring and yours at --bytes, interleaved; your model's times "
                     "and choice",
             .ranks = compare_mode},
            {.name = "choose",
             .help = "your choice for system=S nodes=N bytes=B against the simulator's times",
             .cases = choose_case},
            {0}},
    .options =
        (const cl_option[]){
            {.name = "ranks-per-node",
             .help = "ranks of one node (default: by host; sim: "
                     "the system's GPUs)"},
            {.name = "placement",
             .help = "block or cyclic, with --ranks-per-node",
             .fallback = "block"},
            {.name = "intra",
             .help = "compare: the model's intra-node link, GB/s:us",
             .fallback = "5:2"},
            {.name = "inter", .help = "compare: the model's NIC, GB/s:us", .fallback = "0.025:80"},
            {.name = "nics", .help = "compare: the model's NICs per node", .fallback = "1"},
            {.name = "launch",
             .help = "compare: the model's fixed cost per call, us",
             .fallback = "0"},
            {0}},
    .collectives = (const cl_coll_entry[]){{.name = "allreduce",
                                            .kind = CL_COLL_ALLREDUCE,
                                            .baseline = 1,
                                            .pattern = hier_pattern},
                                           {0}},
};

#endif
