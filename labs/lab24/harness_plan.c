/* harness_plan.c: what the student's plan is given and what its answer must be, for the
 * step and gpu modes: the options' numbers, the model (the measured link and reduction,
 * the net's sizes, order and times) and buckets that are the same on every rank.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness_lab24.h"

/* A lab option as a number, or the backend's default. */
double num_opt(cl_run *run, const char *name, double cpu, double sim)
{
    const char *v = cl_opt(run, name);
    if (!v)
        return strcmp(cl_run_opts(run)->backend, "sim") == 0 ? sim : cpu;
    return atof(v);
}

/* Seconds of one ring step of `bytes` as the student's program makes it (given code:
 * every rank sends to the next and receives from the previous at once, through the
 * boundary, as the student's AllReduce will), the slowest rank's, median of 5. buf
 * holds 2 x bytes. */
static cl_result ring_step(cl_comm *c, char *buf, size_t bytes, double *out)
{
    double t[5];
    ring_args a = {.buf = buf, .bytes = bytes, .iters = 4};
    for (int i = 0; i < 5; i++) {
        cl_call_result res;
        CL_CHECK(cl_barrier(c));
        CL_CHECK(cl_student_run(c, "ring", &a, sizeof a, CL_ALLOW_P2P, &res));
        CL_CHECK(res.status);
        t[i] = res.seconds / a.iters;
        CL_CHECK(cl_agree_max(c, &t[i], 1));
    }
    *out = cl_median(t, 5);
    return CL_OK;
}

/* Seconds of cl_reduce_local over `count` floats, the slowest rank's, median of 5. */
static cl_result reduce_time(cl_comm *c, float *buf, size_t count, double *out)
{
    double t[5];
    for (int i = 0; i < 5; i++) {
        double t0 = cl_comm_time(c);
        CL_CHECK(cl_reduce_local(c, buf, buf + count, count, CL_FLOAT32, CL_SUM));
        t[i] = cl_comm_time(c) - t0;
        CL_CHECK(cl_agree_max(c, &t[i], 1));
    }
    *out = cl_median(t, 5);
    return CL_OK;
}

/* Every rank must have chosen the same buckets. */
cl_result same_buckets(cl_comm *c, const lab24_buckets *b, int params)
{
    uint64_t h = (uint64_t)b->n; /* unsigned: the hash wraps */
    for (int i = 0; i <= b->n && i <= params; i++)
        h = h * 1000003 + (uint64_t)b->start[i];
    for (int i = 0; i < params; i++)
        h = h * 1000003 + (uint64_t)b->param[i];
    h &= ((uint64_t)1 << 62) - 1;
    int64_t v[2] = {(int64_t)h, -(int64_t)h};
    CL_CHECK(cl_agree(c, CL_MAX, v, 2));
    if (v[0] != -v[1]) {
        cl_set_error("your buckets differ between ranks");
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

/* The model the student gets: the measured link, the net's sizes, order and times. */
cl_result build_model(cl_run *run, cl_comm *c, const lab24_net *net, float *buf, lab24_model *m)
{
    memset(m, 0, sizeof *m);
    m->ranks = cl_comm_size(c);
    m->params = net->params;
    memcpy(m->bytes, net->bytes, sizeof m->bytes);
    memcpy(m->order, net->order, sizeof m->order);
    lab24_net_ready_times(net, m->ready_s);
    m->compute_s = net->compute_s;
    m->quantum_s = net->quantum_s;
    size_t probe;
    CL_CHECK(cl_opt_size(run, "probe", (size_t)4 << 20, (size_t)4 << 20, &probe));
    if (2 * probe > (size_t)net->total_bytes) {
        cl_set_error("--probe %zu: at most half the gradients' %.0f bytes", probe,
                     net->total_bytes);
        return CL_ERR_INVALID;
    }
    double small, large, reduce;
    CL_CHECK(ring_step(c, (char *)buf, 8, &small));
    CL_CHECK(ring_step(c, (char *)buf, probe, &large));
    CL_CHECK(reduce_time(c, buf, probe / sizeof(float), &reduce));
    m->alpha_s = small;
    m->link_Bps = (double)probe / fmax(large - small, 1e-9);
    m->reduce_Bps = (double)probe / fmax(reduce, 1e-9);
    return CL_OK;
}
