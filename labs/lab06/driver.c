/* driver.c: lab 06's harness: the student's algorithms and selector plugged into common/collective.
 *
 *   lab06 verify [--backend cpu|gpu|sim] [--nranks N] [--coll A,B] --json FILE
 *   lab06 sweep  [--coll A,B] [--min-bytes N] [--max-bytes N] [--timing-only] --json FILE
 *   lab06 bench  --coll A --bytes N --json FILE
 *   lab06 model  --alpha S --beta S_PER_B --gamma S_PER_B --json FILE
 *       the student's lab06_cost and lab06_select on a grid of ranks and sizes
 *
 * AllReduce entries: ring (given), recursive_doubling, rabenseifner, tree, and
 * allreduce (the selector's choice); each with the backend's own AllReduce as
 * baseline. Also broadcast and reduce (binomial trees). Before the tests the
 * driver measures the machine's alpha, beta and gamma on the chosen backend
 * (ping-pong between ranks 0 and 1, a local reduction) and hands that model
 * to lab06_allreduce.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collective.h"
#include "lab06.h"

static lab06_model model; /* the same on every rank (agreed in calibrate) */

#define AR(fn_name, call)                                                          \
    static cl_result fn_name(cl_comm *c, const cl_coll_args *a)                    \
    {                                                                              \
        return call(c, a->sendbuf, a->recvbuf, a->count, a->dtype, a->op, a->scratch); \
    }
AR(ring, lab06_ring_allreduce)
AR(recursive_doubling, lab06_recursive_doubling)
AR(rabenseifner, lab06_rabenseifner)
AR(tree, lab06_tree_allreduce)

static cl_result selected(cl_comm *c, const cl_coll_args *a)
{
    return lab06_allreduce(c, a->sendbuf, a->recvbuf, a->count, a->dtype, a->op, a->scratch,
                           &model);
}

static cl_result broadcast(cl_comm *c, const cl_coll_args *a)
{
    if (cl_comm_rank(c) == a->root)
        CL_CHECK(cl_copy_local(c, a->recvbuf, a->sendbuf, a->count * cl_dtype_size(a->dtype)));
    return lab06_binomial_bcast(c, a->recvbuf, a->count, a->dtype, a->root);
}

static cl_result reduce(cl_comm *c, const cl_coll_args *a)
{
    return lab06_binomial_reduce(c, a->sendbuf, a->recvbuf, a->count, a->dtype, a->op, a->root,
                                 a->scratch);
}

#define BASE .baseline = cl_coll_baseline_allreduce
static const cl_coll_entry entries[] = {
    {.name = "ring", .kind = CL_COLL_ALLREDUCE, .fn = ring, BASE},
    {.name = "recursive_doubling", .kind = CL_COLL_ALLREDUCE, .fn = recursive_doubling, BASE},
    {.name = "rabenseifner", .kind = CL_COLL_ALLREDUCE, .fn = rabenseifner, BASE},
    {.name = "tree", .kind = CL_COLL_ALLREDUCE, .fn = tree, BASE},
    {.name = "allreduce", .kind = CL_COLL_ALLREDUCE, .fn = selected, BASE},
    {.name = "broadcast", .kind = CL_COLL_BROADCAST, .fn = broadcast},
    {.name = "reduce", .kind = CL_COLL_REDUCE, .fn = reduce},
};

/* Mean one-way time of `iters` ping-pongs of `bytes` between ranks 0 and 1. */
static cl_result pingpong(cl_comm *c, void *buf, size_t bytes, int iters, double *t)
{
    int r = cl_comm_rank(c);
    double t0 = cl_comm_time(c);
    for (int i = 0; i < iters && r < 2; i++) {
        CL_CHECK(r == 0 ? cl_send(c, buf, bytes, 1) : cl_recv(c, buf, bytes, 0));
        CL_CHECK(r == 0 ? cl_recv(c, buf, bytes, 1) : cl_send(c, buf, bytes, 0));
    }
    *t = (cl_comm_time(c) - t0) / (2.0 * iters);
    return CL_OK;
}

/* Measure alpha, beta (ranks 0 and 1) and gamma (each rank), then agree. */
static cl_result calibrate(cl_comm *c)
{
    const size_t big = 4 << 20;
    void *a, *b;
    double v[3] = {0, 0, 0}, small_t = 0, big_t = 0;
    CL_CHECK(cl_mem_alloc(c, big, &a));
    CL_CHECK(cl_mem_alloc(c, big, &b));
    if (cl_comm_size(c) > 1) {
        CL_CHECK(pingpong(c, a, 8, 5, &small_t)); /* warm-up */
        CL_CHECK(pingpong(c, a, 8, 200, &small_t));
        CL_CHECK(pingpong(c, a, big, 10, &big_t));
    }
    CL_CHECK(cl_reduce_local(c, a, b, big / 4, CL_FLOAT32, CL_SUM)); /* warm-up */
    double t0 = cl_comm_time(c);
    for (int i = 0; i < 5; i++)
        CL_CHECK(cl_reduce_local(c, a, b, big / 4, CL_FLOAT32, CL_SUM));
    double gamma = (cl_comm_time(c) - t0) / 5 / big;
    if (cl_comm_rank(c) < 2 && cl_comm_size(c) > 1) {
        v[0] = small_t;
        v[1] = big_t > small_t ? (big_t - small_t) / big : 0;
    }
    v[2] = gamma;
    CL_CHECK(cl_coll_agree_max(c, v, 3));
    model = (lab06_model){.alpha_s = v[0], .beta_s_per_byte = v[1], .gamma_s_per_byte = v[2]};
    CL_CHECK(cl_mem_free(c, a));
    return cl_mem_free(c, b);
}

static void describe(cl_json *j)
{
    cl_json_object_start(j, "model");
    cl_json_number(j, "alpha_s", model.alpha_s);
    cl_json_number(j, "beta_s_per_byte", model.beta_s_per_byte);
    cl_json_number(j, "gamma_s_per_byte", model.gamma_s_per_byte);
    cl_json_object_end(j);
}

/* model mode: the student's cost model and selector on a grid, for the grader. */
static int run_model(int argc, char **argv)
{
    lab06_model m = {0};
    const char *json = NULL;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--alpha") == 0)
            m.alpha_s = strtod(argv[i + 1], NULL);
        else if (strcmp(argv[i], "--beta") == 0)
            m.beta_s_per_byte = strtod(argv[i + 1], NULL);
        else if (strcmp(argv[i], "--gamma") == 0)
            m.gamma_s_per_byte = strtod(argv[i + 1], NULL);
        else if (strcmp(argv[i], "--json") == 0)
            json = argv[i + 1];
    }
    static const int ranks[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 64, 100};
    cl_json j;
    if (cl_json_open(&j, json) != CL_OK)
        return 1;
    cl_json_object_start(&j, NULL);
    cl_json_array_start(&j, "rows");
    for (size_t k = 0; k < sizeof ranks / sizeof ranks[0]; k++)
        for (double bytes = 8; bytes <= (double)(1 << 30); bytes *= 4) {
            cl_json_object_start(&j, NULL);
            cl_json_int(&j, "p", ranks[k]);
            cl_json_number(&j, "bytes", bytes);
            double cost[LAB06_ALGO_COUNT];
            for (int a = 0; a < LAB06_ALGO_COUNT; a++)
                cost[a] = lab06_cost((lab06_algo)a, ranks[k], bytes, &m);
            cl_json_number_array(&j, "cost_s", cost, LAB06_ALGO_COUNT);
            cl_json_int(&j, "selected", lab06_select(ranks[k], bytes, &m));
            cl_json_object_end(&j);
        }
    cl_json_array_end(&j);
    cl_json_object_end(&j);
    return cl_exit_status(cl_json_close(&j));
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "model") == 0)
        return run_model(argc, argv);
    const cl_coll_suite suite = {.lab = "lab06", .entries = entries,
                                 .nentries = sizeof entries / sizeof entries[0],
                                 .setup = calibrate, .describe = describe};
    return cl_coll_main(&suite, argc, argv);
}
