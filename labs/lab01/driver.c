/* driver.c: lab 01's plug-in: the ping-pong, the fit, the step model and the layout choice.
 *
 *   lab01 sweep    [--backend cpu|gpu|sim] [-e 2M] [--repeats 5]   (2 ranks)
 *   lab01 bench    [--bytes 4M] [--repeats 15]                     (2 ranks)
 *   lab01 fit      points=8:1.2e-6,1024:1.5e-6,...
 *   lab01 ring     p=8 bytes=50331648 alpha_s=3.4e-6 bandwidth_Bps=240e9
 *   lab01 estimate params=13e9 ... nodes=4 gpus_per_node=8 ... tp=8 pp=2 dp=2
 *   lab01 plan     params=13e9 ... nodes=4 gpus_per_node=8 ...   (your layout, then its step)
 * Cases modes also read --cases FILE (labs/lab01/scale.cases: the scale sweep).
 *
 * sweep and bench interleave the student's ping-pong with the harness's own
 * loop, on buffers filled with fresh bytes for every call. The harness checks
 * that both ranks end with rank 0's bytes, counts the messages each rank
 * really sent and received (its trace), and times the call from outside.
 *
 * This file holds the student's entries and the lab's table; the ping-pong modes are in
 * harness_pingpong.c, the model's cases in harness_model.c (lab01_harness.h).
 */
#include "lab01_harness.h"

#ifdef CL_STUDENT_SIDE

static cl_result pingpong(cl_comm *c, void *args)
{
    pingpong_args *a = args;
    return lab01_pingpong(c, a->buf, a->bytes, a->iters, &a->one_way_s);
}

static cl_result fit(cl_comm *c, void *args)
{
    (void)c;
    fit_args *a = args;
    return lab01_fit_alpha_beta(a->bytes, a->seconds, a->n, &a->alpha_s, &a->beta_s_per_byte);
}

static cl_result ring(cl_comm *c, void *args)
{
    (void)c;
    ring_args *a = args;
    a->out = lab01_ring_allreduce(a->p, a->bytes, a->link);
    return CL_OK;
}

static cl_result estimate(cl_comm *c, void *args)
{
    (void)c;
    step_args *a = args;
    return lab01_estimate_step(&a->w, &a->c, &a->l, &a->out);
}

static cl_result plan(cl_comm *c, void *args)
{
    (void)c;
    step_args *a = args;
    CL_CHECK(lab01_choose_layout(&a->w, &a->c, &a->l));
    return lab01_estimate_step(&a->w, &a->c, &a->l, &a->out);
}

CL_STUDENT_ENTRIES({"pingpong", pingpong}, {"fit", fit}, {"ring", ring}, {"estimate", estimate},
                   {"plan", plan});

#else

const cl_lab cl_lab_def = {
    .name = "lab01",
    .title = "通信为何成为瓶颈: the alpha-beta model",
    .modes =
        (const cl_mode[]){{.name = "sweep",
                           .help = "ping-pong from 8 B to --max-bytes, yours and the harness's",
                           .ranks = sweep,
                           .min_ranks = 2},
                          {.name = "bench",
                           .help = "ping-pong bandwidth at --bytes, yours and the harness's",
                           .ranks = bench,
                           .min_ranks = 2},
                          {.name = "fit",
                           .help = "your alpha-beta fit of points=BYTES:SECONDS,...",
                           .cases = fit_case},
                          {.name = "ring",
                           .help = "your ring AllReduce time: p= bytes= alpha_s= bandwidth_Bps=",
                           .cases = ring_case},
                          {.name = "estimate",
                           .help = "your step estimate of a workload, cluster and layout",
                           .cases = estimate_case},
                          {.name = "plan",
                           .help = "your layout for a workload and cluster, and its step",
                           .cases = plan_case},
                          {0}},
};

#endif
