/* driver.c: lab 06's plug-in: latency-optimal AllReduce algorithms, their message patterns,
 * the cost model and the selector, measured against the best algorithm.
 *
 *   lab06 verify    [--backend cpu|gpu|sim] [--nranks N] [--coll A,B]
 *   lab06 sweep     [--coll ...] [-b 8] [-e 16M] [-f 4]
 *   lab06 calibrate                  alpha, beta, gamma as your code meets them
 *   lab06 select    [-b 8] [-e 16M] [-f 8] [--repeats R] [--model A,B,G]
 *   lab06 model     alpha=5e-6 beta=5e-12 gamma=2e-12 p=6 bytes=65536   (or --cases FILE)
 *
 * Every algorithm's AllReduce is verified by the collective suite, and after
 * every call the trace of each rank must show the algorithm's own message
 * pattern (a ring copied four times is caught there). select runs the four
 * algorithms and the student's selector at each size, interleaved, with fresh
 * data for every call, after measuring the machine's alpha, beta and gamma as
 * the student's program meets them.
 *
 * This file holds the student's entries and the lab's table; the patterns are in
 * harness_patterns.c, the modes in harness_calibrate.c, harness_select.c and
 * harness_model.c (lab06_harness.h).
 */
#include "lab06_harness.h"

#ifdef CL_STUDENT_SIDE

/* The model lab06_allreduce() uses: a fixed one for verify, the measured one
 * once the harness sends it (select). The same on every rank. */
static lab06_model model = {.alpha_s = 5e-6, .beta_s_per_byte = 1e-10, .gamma_s_per_byte = 5e-11};

#define ALLREDUCE(name, fn)                                                                        \
    static cl_result name(cl_comm *c, void *args)                                                  \
    {                                                                                              \
        const cl_coll_args *a = args;                                                              \
        return fn(c, a->sendbuf, a->recvbuf, a->count, a->dtype, a->op, a->scratch);               \
    }
ALLREDUCE(ring, lab06_ring_allreduce)
ALLREDUCE(recursive_doubling, lab06_recursive_doubling)
ALLREDUCE(rabenseifner, lab06_rabenseifner)
ALLREDUCE(tree, lab06_tree_allreduce)

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

/* Calibration: a ping-pong between ranks 0 and 1 and a loop of local
 * reductions, made by this program, so their times include what every call
 * of the student's code costs on the way to the harness. */
static cl_result pingpong(cl_comm *c, void *args)
{
    const pingpong_args *a = args;
    int r = cl_comm_rank(c);
    for (int i = 0; i < a->iters && r < 2; i++) {
        CL_CHECK(r == 0 ? cl_send(c, a->buf, a->bytes, 1) : cl_recv(c, a->buf, a->bytes, 0));
        CL_CHECK(r == 0 ? cl_recv(c, a->buf, a->bytes, 1) : cl_send(c, a->buf, a->bytes, 0));
    }
    return CL_OK;
}

static cl_result reduce_loop(cl_comm *c, void *args)
{
    const reduce_args *a = args;
    for (int i = 0; i < a->iters; i++)
        CL_CHECK(cl_reduce_local(c, a->a, a->b, a->count, CL_FLOAT32, CL_SUM));
    return CL_OK;
}

CL_STUDENT_ENTRIES({"ring", ring}, {"recursive_doubling", recursive_doubling},
                   {"rabenseifner", rabenseifner}, {"tree", tree}, {"allreduce", selected},
                   {"broadcast", broadcast}, {"reduce", reduce}, {"set_model", set_model},
                   {"cost", cost}, {"pingpong", pingpong}, {"reduce_loop", reduce_loop});

#else

const cl_lab cl_lab_def = {
    .name = "lab06",
    .title = "集合通信原语 (二): recursive doubling, Rabenseifner, binomial trees and a selector",
    .collectives =
        (const cl_coll_entry[]){
            {.name = "ring", .kind = CL_COLL_ALLREDUCE, .pattern = cl_pattern_ring_allreduce},
            {.name = "recursive_doubling",
             .kind = CL_COLL_ALLREDUCE,
             .pattern = cl_pattern_recursive_doubling},
            {.name = "rabenseifner",
             .kind = CL_COLL_ALLREDUCE,
             .pattern = cl_pattern_halving_doubling},
            {.name = "tree", .kind = CL_COLL_ALLREDUCE, .pattern = cl_pattern_binomial_allreduce},
            {.name = "allreduce", .kind = CL_COLL_ALLREDUCE, .baseline = 1, .pattern = pattern_any},
            {.name = "broadcast", .kind = CL_COLL_BROADCAST, .pattern = cl_pattern_binomial_bcast},
            {.name = "reduce", .kind = CL_COLL_REDUCE, .pattern = cl_pattern_binomial_reduce},
            {0}},
    .modes = (const cl_mode[]){{.name = "calibrate",
                                .help = "alpha, beta and gamma as your code meets them",
                                .ranks = calibrate_mode},
                               {.name = "select",
                                .help = "the four algorithms and your selector at each size, "
                                        "interleaved, checked",
                                .ranks = select_mode},
                               {.name = "model",
                                .help = "your cost of each algorithm and your choice: alpha= beta= "
                                        "gamma= p= bytes=",
                                .cases = model_case},
                               {0}},
    .options = (const cl_option[]){{.name = "model",
                                    .help = "ALPHA,BETA,GAMMA for select, or measure",
                                    .fallback = "measure"},
                                   {0}},
};

#endif
