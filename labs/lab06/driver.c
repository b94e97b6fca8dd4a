/* driver.c: lab 06's plug-in: latency-optimal AllReduce algorithms, a cost model, a selector.
 *
 *   lab06 verify    [--backend cpu|gpu|sim] [--nranks N] [--coll A,B]
 *   lab06 sweep     [--coll ...] [-b 8] [-e 16M] [-f 4]
 *   lab06 calibrate                  alpha, beta, gamma as your code meets them
 *   lab06 select    [-b 8] [-e 16M] [-f 8] [--repeats R] [--model A,B,G]
 *   lab06 model     alpha=5e-6 beta=5e-12 gamma=2e-12 p=6 bytes=65536   (or --cases FILE)
 *
 * The suite checks every result and each rank's trace against its algorithm's pattern
 * (harness_patterns.c); select (harness_select.c) runs the algorithms and the selector on the
 * model calibrate measured (harness_calibrate.c, probe.c). lab06_harness.h lists the rest.
 */
#include "lab06_harness.h"

#ifdef CL_STUDENT_SIDE

/* lab06_allreduce()'s model, the same on every rank: fixed, then select's measured one. */
static lab06_model model = {.alpha_s = 5e-6, .beta_s_per_byte = 1e-10, .gamma_s_per_byte = 5e-11};

CL_COLL_REDUCING_ENTRY(ring, lab06_ring_allreduce)
CL_COLL_REDUCING_ENTRY(recursive_doubling, lab06_recursive_doubling)
CL_COLL_REDUCING_ENTRY(rabenseifner, lab06_rabenseifner)
CL_COLL_REDUCING_ENTRY(tree, lab06_tree_allreduce)

static cl_result selected(cl_comm *c, void *args)
{
    const cl_coll_args *a = args;
    return lab06_allreduce(c, a->sendbuf, a->recvbuf, a->count, a->dtype, a->op, a->scratch,
                           &model);
}

static cl_result broadcast(cl_comm *c, void *args)
{
    const cl_coll_args *a = args;
    if (cl_comm_rank(c) == a->root)
        CL_CHECK(cl_copy_local(c, a->recvbuf, a->sendbuf, a->count * cl_dtype_size(a->dtype)));
    return lab06_binomial_bcast(c, a->recvbuf, a->count, a->dtype, a->root);
}

static cl_result reduce(cl_comm *c, void *args)
{
    const cl_coll_args *a = args;
    return lab06_binomial_reduce(c, a->sendbuf, a->recvbuf, a->count, a->dtype, a->op, a->root,
                                 a->scratch);
}

static cl_result set_model(cl_comm *c, void *args)
{
    (void)c;
    model = *(const lab06_model *)args;
    return CL_OK;
}

static cl_result cost(cl_comm *c, void *args)
{
    (void)c;
    cost_args *a = args;
    for (int i = 0; i < NALGO; i++)
        a->cost[i] = lab06_cost((lab06_algo)i, a->p, a->bytes, &a->m);
    a->selected = (int)lab06_select(a->p, a->bytes, &a->m);
    return CL_OK;
}

CL_STUDENT_ENTRIES({"ring", ring}, {"recursive_doubling", recursive_doubling},
                   {"rabenseifner", rabenseifner}, {"tree", tree}, {"allreduce", selected},
                   {"broadcast", broadcast}, {"reduce", reduce}, {"set_model", set_model},
                   {"cost", cost}, {"pingpong", lab06_probe_pingpong},
                   {"reduce_loop", lab06_probe_reduce_loop});

#else

const cl_lab cl_lab_def = {
    .name = "lab06",
    .title = "集合通信原语 (二): recursive doubling, Rabenseifner, binomial trees and a selector",
    .collectives = lab06_collectives,
    .modes = lab06_modes,
    .options = lab06_options,
};

#endif
