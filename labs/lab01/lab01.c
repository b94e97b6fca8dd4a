/* lab01.c: lab 01, why communication becomes the bottleneck.
 *
 * You measure a link with a ping-pong, fit the alpha-beta model to what you
 * measured, use the model to estimate where the time of a training step goes
 * (DP, TP, PP, each split into its alpha and beta parts), and choose the
 * parallel layout of a job. Read labs/lab01/README.md first; the TODOs below
 * are in the order of its sections. Build with `make lab01`, grade with
 * `./grade lab01`.
 */
#include "lab01.h"

cl_result lab01_pingpong(cl_comm *comm, void *buf, size_t bytes, int iters, double *one_way_s)
{
    // TODO(lab01) 1: the ping-pong loop (handout section 1).
    //   Ranks other than 0 and 1 return CL_OK at once. Ranks 0 and 1 exchange
    //   `bytes` of buf `iters` times (rank 0 sends first), using the blocking
    //   calls of p2p.h. Time the loop with cl_comm_time() and store the mean
    //   ONE-WAY time of one message in *one_way_s.
    (void)comm, (void)buf, (void)bytes, (void)iters, (void)one_way_s;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab01_fit_alpha_beta(const double *bytes, const double *seconds, int n, double *alpha_s,
                               double *beta_s_per_byte)
{
    // TODO(lab01) 2: fit t = alpha + beta * n to the points, minimising the sum of
    //   squared relative errors (handout section 2). Write the sums yourself.
    //   CL_ERR_INVALID (after cl_set_error) when n < 2, a time is not positive,
    //   or all sizes are equal.
    (void)bytes, (void)seconds, (void)n, (void)alpha_s, (void)beta_s_per_byte;
    return CL_ERR_NOT_IMPLEMENTED;
}

lab01_cost lab01_ring_allreduce(int p, double bytes, lab01_link link)
{
    // TODO(lab01) 3: the alpha part and the beta part of a ring AllReduce of
    //   `bytes` over p ranks (handout section 3). Both are zero when p == 1.
    (void)p, (void)bytes, (void)link;
    lab01_cost c = {-1, -1};
    return c;
}

cl_result lab01_estimate_step(const lab01_workload *w, const lab01_cluster *c,
                              const lab01_layout *l, lab01_estimate *out)
{
    // TODO(lab01) 4: one training step under the layout (handout section 4):
    //   check the layout (CL_ERR_INVALID with a reason), pick each group's link,
    //   then fill every field of *out. Use lab01_ring_allreduce() from TODO 3.
    (void)w, (void)c, (void)l, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab01_choose_layout(const lab01_workload *w, const lab01_cluster *c, lab01_layout *out)
{
    // TODO(lab01) 5: your decision (handout section 5): the layout of every GPU of
    //   c with the shortest step, among those whose model state fits in memory.
    //   CL_ERR_INVALID (after cl_set_error) when none fits.
    (void)w, (void)c, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}
