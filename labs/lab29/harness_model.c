/* harness_model.c: lab 29's model of a plan's step: the simulator (common/sim/sim_train.h) on
 * two servers gives the plan's bandwidths and latencies (its probe), and the handout's
 * formulas extrapolate them to the whole job (full_step). The probe the student's program
 * asks for (lab29_probe_plan) is answered here, against the case's budget.
 */
#include <math.h>
#include <string.h>

#include "lab29_harness.h"

const double ALPHAS[] = {3.4e-6, 5.7e-6, 14.0e-6}; /* tuning.cc hwLat, Ring, Simple */

/* --- plans ------------------------------------------------------------------------------- */

/* The ranks' GPUs on the two servers and the P2P level of plan p. */
cl_result parse_plan(const lab29_plan *p, cl_sim_train_plan *out, int *level)
{
    const lab29_job *j = &current_case.k.job;
    int G = LAB29_GPUS;
    memset(out, 0, sizeof *out);
    if (p->tp < 1 || p->tp > G || G % p->tp) {
        cl_set_error("tp=%d: a divisor of the %d GPUs of a server", p->tp, G);
        return CL_ERR_INVALID;
    }
    long dp = (long)j->nodes * G / p->tp;
    if (j->global_batch % (dp * j->micro_batch)) {
        cl_set_error("tp=%d: a global batch of %d sequences does not split into micro-batches "
                     "of %d over dp = %ld",
                     p->tp, j->global_batch, j->micro_batch, dp);
        return CL_ERR_INVALID;
    }
    *out = (cl_sim_train_plan){
        .tp = p->tp, .pp = 1, .dp = SLICE * G / p->tp, .order = CL_SIM_ORDER_TP_DP_PP};
    int gpu[LAB29_GPUS];
    CL_CHECK(cl_sim_launch_visible(p->visible, LAB29_VISIBLE_LEN, G, "", gpu));
    for (int n = 0; n < SLICE; n++) /* the same mapping on every server */
        for (int i = 0; i < G; i++)
            out->gpu_of_rank[n * G + i] = n * G + gpu[i];
    return cl_sim_launch_p2p_level(p->p2p_level, sizeof p->p2p_level, level);
}

/* The two servers' model of a plan: the whole job's micro-batches, and DP gradients weighted
 * by w (the reference search weighs them as the whole job's DP ring does). */
cl_sim_train_model slice_model(const cl_sim_train_plan *p, double w)
{
    const lab29_job *j = &current_case.k.job;
    int mb = j->global_batch / (j->nodes * LAB29_GPUS / p->tp * j->micro_batch);
    return (cl_sim_train_model){.params = j->params * w,
                                .layers = j->layers,
                                .hidden = j->hidden,
                                .seq_len = j->seq_len,
                                .micro_batch = j->micro_batch,
                                .global_batch = p->dp * j->micro_batch * mb,
                                .bytes = j->bytes,
                                .compute_s = j->compute_s,
                                .gpu_mem_bytes = INFINITY};
}

/* NCCL's latency of one ring step that makes time = 2(k-1) alpha + 2(k-1)/k S / busbw. */
static double alpha_from(double time, int k, double bytes, double busbw)
{
    if (k < 2 || !(busbw > 0))
        return 0;
    double a = (time - 2.0 * (k - 1) / k * bytes / (busbw * 1e9)) / (2.0 * (k - 1)), best = 0;
    for (size_t i = 0; i < sizeof ALPHAS / sizeof ALPHAS[0]; i++)
        if (i == 0 || fabs(ALPHAS[i] - a) < fabs(best - a))
            best = ALPHAS[i];
    return best;
}

cl_result probe_of(const cl_sim_train_plan *sp, int level, lab29_probe *out)
{
    const lab29_job *j = &current_case.k.job;
    cl_sim_train *t;
    cl_sim_train_cost c;
    CL_CHECK(cl_sim_train_levels_model(&current_case.levels, level, &t));
    cl_sim_train_model m = slice_model(sp, 1);
    CL_CHECK(cl_sim_train_cost_of(t, &m, sp, &c));
    double act = (double)j->seq_len * j->micro_batch * j->hidden * j->bytes;
    double tp_time = sp->tp > 1 ? c.tp_s / (4.0 * j->layers * c.micro_batches) : 0;
    memset(out, 0, sizeof *out);
    out->tp_busbw = c.tp_busbw;
    out->tp_alpha_s = alpha_from(tp_time, sp->tp, act, c.tp_busbw);
    out->dp_busbw = c.dp_busbw;
    out->dp_alpha_s = alpha_from(c.dp_s, sp->dp, m.params * m.bytes / sp->tp, c.dp_busbw);
    return CL_OK;
}

static double ring_time(long k, double bytes, double alpha, double busbw)
{
    return k < 2 ? 0 : 2.0 * (k - 1) * alpha + 2.0 * (k - 1) / k * bytes / (busbw * 1e9);
}

/* The whole job's step of a plan with tensor parallelism tp from its probe (the handout's
 * table; lab29_predict() computes the same). */
void full_step(int tp, const lab29_probe *pr, lab29_step *out)
{
    const lab29_job *j = &current_case.k.job;
    long dp = (long)j->nodes * LAB29_GPUS / tp;
    int mb = (int)(j->global_batch / (dp * j->micro_batch));
    double act = (double)j->seq_len * j->micro_batch * j->hidden * j->bytes;
    memset(out, 0, sizeof *out);
    out->micro_batches = mb;
    out->compute_s = j->compute_s;
    out->tp_s = 4.0 * j->layers * mb * ring_time(tp, act, pr->tp_alpha_s, pr->tp_busbw);
    out->dp_s = ring_time(dp, j->params * j->bytes / tp, pr->dp_alpha_s, pr->dp_busbw);
    out->step_s = out->compute_s + out->tp_s + out->dp_s;
    out->mem_bytes = 16.0 * j->params / tp +
                     34.0 * j->seq_len * j->micro_batch * (double)j->hidden * j->layers / tp;
    out->fits = out->mem_bytes <= current_case.k.node.gpu_mem_bytes;
}

cl_result cost_of(const lab29_plan *p, lab29_probe *pr, lab29_step *out)
{
    cl_sim_train_plan sp;
    int level;
    CL_CHECK(parse_plan(p, &sp, &level));
    CL_CHECK(probe_of(&sp, level, pr));
    full_step(p->tp, pr, out);
    return CL_OK;
}

cl_result lab_op(cl_run *run, cl_comm *comm, int code, void *args, size_t bytes)
{
    (void)run, (void)comm;
    if (code != LAB29_OP_PROBE || bytes != sizeof(lab29_probe_args)) {
        cl_set_error("lab29 has no operation %d of %zu bytes", code, bytes);
        return CL_ERR_INVALID;
    }
    lab29_probe_args *a = args;
    if (current_case.calls >= current_case.k.budget) {
        cl_set_error("lab29_probe_plan: this case's budget of %d calls is spent",
                     current_case.k.budget);
        return CL_ERR_INVALID;
    }
    cl_sim_train_plan sp;
    int level;
    CL_CHECK(parse_plan(&a->plan, &sp, &level));
    CL_CHECK(probe_of(&sp, level, &a->probe));
    current_case.calls++;
    a->probe.calls_left = current_case.k.budget - current_case.calls;
    return CL_OK;
}
