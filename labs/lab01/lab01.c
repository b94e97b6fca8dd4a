/* lab01.c: lab 01, why communication becomes the bottleneck.
 *
 * You measure a link with a ping-pong, fit the alpha-beta model to what you
 * measured, and use the model to estimate how much of a training step goes
 * to DP, TP and PP communication. Read labs/lab01/README.md first; the TODOs
 * below are in the order of its sections. Build with `make lab01`, grade
 * with `./grade lab01`.
 */
#include "lab01.h"

cl_result lab01_pingpong(cl_comm *comm, void *buf, size_t bytes, int iters, double *one_way_s)
{
    // TODO(lab01) 1: the ping-pong loop.
    //   Ranks other than 0 and 1 return CL_OK at once. Rank 0 sends `bytes` of buf
    //   to rank 1 and receives them back; rank 1 does the opposite, `iters` times.
    //   Time the whole loop with cl_comm_time() and store the mean ONE-WAY time
    //   of one message in *one_way_s (a round trip is two messages).
    //   Use cl_send() and cl_recv(); wrap each call in CL_CHECK().
    (void)comm, (void)buf, (void)bytes, (void)iters, (void)one_way_s;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab01_fit_alpha_beta(const double *bytes, const double *seconds, int n, double *alpha_s,
                               double *beta_s_per_byte)
{
    // TODO(lab01) 2: ordinary least squares for t = alpha + beta * n.
    //   beta = sum((x - mean_x) * (y - mean_y)) / sum((x - mean_x)^2)
    //   alpha = mean_y - beta * mean_x
    //   Return CL_ERR_INVALID (after cl_set_error) when n < 2 or all sizes are equal.
    //   Write the sums yourself: the library's fitting helpers are off limits here.
    (void)bytes, (void)seconds, (void)n, (void)alpha_s, (void)beta_s_per_byte;
    return CL_ERR_NOT_IMPLEMENTED;
}

double lab01_ring_allreduce_time(int p, double bytes, lab01_link link)
{
    // TODO(lab01) 3: a ring AllReduce is a reduce-scatter and an all-gather, each
    //   p-1 steps that move bytes/p per rank. Return 0 for p == 1.
    (void)p, (void)bytes, (void)link;
    return -1.0;
}

cl_result lab01_estimate_step(const lab01_workload *w, const lab01_cluster *c,
                              const lab01_layout *l, lab01_estimate *out)
{
    // TODO(lab01) 4: the per-step estimate (handout section "Step estimate").
    //   a) CL_ERR_INVALID if tp*pp*dp != nodes*gpus_per_node.
    //   b) choose each group's link: TP inside a node if tp <= gpus_per_node,
    //      DP if tp*dp <= gpus_per_node, PP if tp*dp*pp <= gpus_per_node.
    //   c) activation = b*s*h*bytes; gradients = params/(tp*pp)*bytes.
    //   d) tp_s = 4 * layers/pp * micro_batches ring AllReduces of the activation;
    //      dp_s = one ring AllReduce of the gradients over dp ranks;
    //      pp_s = 2 * micro_batches transfers of the activation (0 when pp == 1).
    //   e) comm_s = tp_s + dp_s + pp_s, share = comm_s / (compute_s + comm_s).
    //   Use lab01_ring_allreduce_time() from TODO 3.
    (void)w, (void)c, (void)l, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}
