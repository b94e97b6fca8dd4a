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
    // TODO(lab01) 1: the ping-pong loop.
    //   Ranks other than 0 and 1 return CL_OK at once. Rank 0 sends `bytes` of buf
    //   to rank 1 and receives them back; rank 1 does the opposite, `iters` times.
    //   Time the whole loop with cl_comm_time() and store the mean ONE-WAY time
    //   of one message in *one_way_s (a round trip is two messages).
    //   Use cl_send() and cl_recv(); wrap each call in CL_CHECK().
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
    double mean_x = 0, mean_y = 0;
    for (int i = 0; i < n; i++) {
        mean_x += bytes[i];
        mean_y += seconds[i];
    }
    mean_x /= n;
    mean_y /= n;
    double sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        sxx += (bytes[i] - mean_x) * (bytes[i] - mean_x);
        sxy += (bytes[i] - mean_x) * (seconds[i] - mean_y);
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
    // TODO(lab01) 2: ordinary least squares for t = alpha + beta * n.
    //   beta = sum((x - mean_x) * (y - mean_y)) / sum((x - mean_x)^2)
    //   alpha = mean_y - beta * mean_x
    //   Return CL_ERR_INVALID (after cl_set_error) when n < 2 or all sizes are equal.
    //   Write the sums yourself: the library's fitting helpers are off limits here.
    (void)bytes, (void)seconds, (void)n, (void)alpha_s, (void)beta_s_per_byte;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

double lab01_ring_allreduce_time(int p, double bytes, lab01_link link)
{
    /* BEGIN SOLUTION */
    if (p <= 1)
        return 0.0;
    /* Reduce-scatter then all-gather: 2(p-1) steps of bytes/p each. */
    return 2.0 * (p - 1) * link.alpha_s + 2.0 * (p - 1) / p * bytes / link.bandwidth_Bps;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab01) 3: a ring AllReduce is a reduce-scatter and an all-gather, each
    //   p-1 steps that move bytes/p per rank. Return 0 for p == 1.
    (void)p, (void)bytes, (void)link;
    return -1.0;
    END SKELETON */
}

cl_result lab01_estimate_step(const lab01_workload *w, const lab01_cluster *c,
                              const lab01_layout *l, lab01_estimate *out)
{
    /* BEGIN SOLUTION */
    int gpus = c->nodes * c->gpus_per_node;
    if (l->tp * l->pp * l->dp != gpus) {
        cl_set_error("tp*pp*dp = %d but the cluster has %d GPUs", l->tp * l->pp * l->dp, gpus);
        return CL_ERR_INVALID;
    }
    /* A group stays inside a node when all the ranks it spans fit in one. */
    lab01_link tp_link = l->tp <= c->gpus_per_node ? c->intra : c->inter;
    lab01_link dp_link = l->tp * l->dp <= c->gpus_per_node ? c->intra : c->inter;
    lab01_link pp_link = l->tp * l->dp * l->pp <= c->gpus_per_node ? c->intra : c->inter;

    double activation = (double)w->micro_batch * w->seq_len * w->hidden * w->bytes_per_element;
    double gradients = w->params / (l->tp * l->pp) * w->bytes_per_element;
    /* Megatron TP: 2 AllReduces forward and 2 backward per layer and micro-batch. */
    double tp_calls = 4.0 * w->layers / l->pp * w->micro_batches;

    out->tp_s = tp_calls * lab01_ring_allreduce_time(l->tp, activation, tp_link);
    out->dp_s = lab01_ring_allreduce_time(l->dp, gradients, dp_link);
    out->pp_s = l->pp > 1
                    ? 2.0 * w->micro_batches * (pp_link.alpha_s + activation / pp_link.bandwidth_Bps)
                    : 0.0;
    out->comm_s = out->tp_s + out->dp_s + out->pp_s;
    out->share = out->comm_s / (w->compute_s + out->comm_s);
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
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
    END SKELETON */
}
