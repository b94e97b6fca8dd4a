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
    /* BEGIN SOLUTION */
    int rank = cl_comm_rank(comm);
    if (rank > 1)
        return CL_OK;
    int peer = 1 - rank;
    double start = cl_comm_time(comm);
    for (int i = 0; i < iters; i++) {
        if (rank == 0) {
            CL_CHECK(cl_send(comm, buf, bytes, peer));
            CL_CHECK(cl_recv(comm, buf, bytes, peer));
        } else {
            CL_CHECK(cl_recv(comm, buf, bytes, peer));
            CL_CHECK(cl_send(comm, buf, bytes, peer));
        }
    }
    *one_way_s = (cl_comm_time(comm) - start) / (2.0 * iters);
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab01) 1: the ping-pong loop (handout section 1).
    //   Ranks other than 0 and 1 return CL_OK at once. Ranks 0 and 1 exchange
    //   `bytes` of buf `iters` times (rank 0 sends first), using the blocking
    //   calls of p2p.h. Time the loop with cl_comm_time() and store the mean
    //   ONE-WAY time of one message in *one_way_s.
    (void)comm, (void)buf, (void)bytes, (void)iters, (void)one_way_s;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab01_fit_alpha_beta(const double *bytes, const double *seconds, int n, double *alpha_s,
                               double *beta_s_per_byte)
{
    /* BEGIN SOLUTION */
    if (n < 2) {
        cl_set_error("need at least 2 points to fit a line, got %d", n);
        return CL_ERR_INVALID;
    }
    /* Weighted least squares with w = 1/t^2: each point's error counts
     * relative to its own time, so 8 B and 2 MiB weigh the same. */
    double sw = 0, mean_x = 0, mean_y = 0;
    for (int i = 0; i < n; i++) {
        if (!(seconds[i] > 0)) {
            cl_set_error("point %d: time %g s is not positive", i, seconds[i]);
            return CL_ERR_INVALID;
        }
        double w = 1.0 / (seconds[i] * seconds[i]);
        sw += w;
        mean_x += w * bytes[i];
        mean_y += w * seconds[i];
    }
    mean_x /= sw;
    mean_y /= sw;
    double sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        double w = 1.0 / (seconds[i] * seconds[i]);
        sxx += w * (bytes[i] - mean_x) * (bytes[i] - mean_x);
        sxy += w * (bytes[i] - mean_x) * (seconds[i] - mean_y);
    }
    if (sxx == 0) {
        cl_set_error("all message sizes are equal: the slope is undefined");
        return CL_ERR_INVALID;
    }
    *beta_s_per_byte = sxy / sxx;
    *alpha_s = mean_y - *beta_s_per_byte * mean_x;
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab01) 2: fit t = alpha + beta * n to the points, minimising the sum of
    //   squared relative errors (handout section 2). Write the sums yourself.
    //   CL_ERR_INVALID (after cl_set_error) when n < 2, a time is not positive,
    //   or all sizes are equal.
    (void)bytes, (void)seconds, (void)n, (void)alpha_s, (void)beta_s_per_byte;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

lab01_cost lab01_ring_allreduce(int p, double bytes, lab01_link link)
{
    /* BEGIN SOLUTION */
    lab01_cost c = {0, 0};
    if (p <= 1)
        return c;
    /* Reduce-scatter then all-gather: 2(p-1) steps of bytes/p each. */
    c.alpha_s = 2.0 * (p - 1) * link.alpha_s;
    c.beta_s = 2.0 * (p - 1) / p * bytes / link.bandwidth_Bps;
    return c;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab01) 3: the alpha part and the beta part of a ring AllReduce of
    //   `bytes` over p ranks (handout section 3). Both are zero when p == 1.
    (void)p, (void)bytes, (void)link;
    lab01_cost c = {-1, -1};
    return c;
    END SKELETON */
}

/* BEGIN SOLUTION */
/* The link of a group whose ranks lie in blocks of `span` consecutive ranks:
 * inside a node when the block fits in one (sizes are powers of two). */
static lab01_link link_of(const lab01_cluster *c, long span)
{
    return span <= c->gpus_per_node ? c->intra : c->inter;
}

static lab01_cost scaled(lab01_cost c, double k)
{
    c.alpha_s *= k;
    c.beta_s *= k;
    return c;
}
/* END SOLUTION */
cl_result lab01_estimate_step(const lab01_workload *w, const lab01_cluster *c,
                              const lab01_layout *l, lab01_estimate *out)
{
    /* BEGIN SOLUTION */
    long gpus = (long)c->nodes * c->gpus_per_node;
    if ((long)l->tp * l->pp * l->dp != gpus || l->tp < 1 || l->pp < 1 || l->dp < 1) {
        cl_set_error("tp*pp*dp = %ld but the cluster has %ld GPUs", (long)l->tp * l->pp * l->dp,
                     gpus);
        return CL_ERR_INVALID;
    }
    if (w->layers % l->pp != 0) {
        cl_set_error("pp = %d does not divide the %d layers", l->pp, w->layers);
        return CL_ERR_INVALID;
    }
    if (w->global_batch % (w->micro_batch * l->dp) != 0) {
        cl_set_error("micro_batch * dp = %d does not divide the global batch %d",
                     w->micro_batch * l->dp, w->global_batch);
        return CL_ERR_INVALID;
    }
    int m = w->global_batch / (w->micro_batch * l->dp);
    double activation = (double)w->micro_batch * w->seq_len * w->hidden * w->bytes_per_element;
    double gradients = w->params / ((double)l->tp * l->pp) * w->bytes_per_element;
    double tokens = (double)w->global_batch * w->seq_len;

    out->micro_batches = m;
    out->compute_s = 6.0 * w->params * tokens / ((double)gpus * w->gpu_flops);
    out->bubble_s = out->compute_s * (l->pp - 1) / m;
    /* Megatron TP: 2 AllReduces forward and 2 backward per layer and micro-batch. */
    out->tp = scaled(lab01_ring_allreduce(l->tp, activation, link_of(c, l->tp)),
                     4.0 * w->layers / l->pp * m);
    out->dp = lab01_ring_allreduce(l->dp, gradients, link_of(c, (long)l->tp * l->dp));
    lab01_link pl = link_of(c, gpus);
    out->pp.alpha_s = l->pp > 1 ? 2.0 * m * pl.alpha_s : 0.0;
    out->pp.beta_s = l->pp > 1 ? 2.0 * m * activation / pl.bandwidth_Bps : 0.0;
    out->comm_s = out->tp.alpha_s + out->tp.beta_s + out->dp.alpha_s + out->dp.beta_s +
                  out->pp.alpha_s + out->pp.beta_s;
    out->step_s = out->compute_s + out->bubble_s + out->comm_s;
    out->share = out->comm_s / out->step_s;
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab01) 4: one training step under the layout (handout section 4):
    //   check the layout (CL_ERR_INVALID with a reason), pick each group's link,
    //   then fill every field of *out. Use lab01_ring_allreduce() from TODO 3.
    (void)w, (void)c, (void)l, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab01_choose_layout(const lab01_workload *w, const lab01_cluster *c, lab01_layout *out)
{
    /* BEGIN SOLUTION */
    int gpus = c->nodes * c->gpus_per_node;
    double best = 0;
    int found = 0;
    for (int tp = 1; tp <= gpus; tp *= 2)
        for (int pp = 1; tp * pp <= gpus; pp *= 2) {
            lab01_layout l = {tp, pp, gpus / (tp * pp)};
            lab01_estimate e;
            if (16.0 * w->params / ((double)tp * pp) > c->mem_bytes ||
                lab01_estimate_step(w, c, &l, &e) != CL_OK)
                continue;
            if (!found || e.step_s < best) {
                best = e.step_s;
                *out = l;
                found = 1;
            }
        }
    if (!found) {
        cl_set_error("no layout of %d GPUs holds %.3g parameters in %.3g bytes per GPU", gpus,
                     w->params, c->mem_bytes);
        return CL_ERR_INVALID;
    }
    cl_clear_error();
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab01) 5: your decision (handout section 5): the layout of every GPU of
    //   c with the shortest step, among those whose model state fits in memory.
    //   CL_ERR_INVALID (after cl_set_error) when none fits.
    (void)w, (void)c, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
