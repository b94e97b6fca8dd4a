/* model.c: lab 07's cost model of one training step's communication (the handout's formulas).
 *
 * Every group of a kind communicates at the same time; each group runs one
 * ring whose slowest hop sets its pace, and the slowest group sets the step.
 * A ring collective of k ranks takes k-1 steps (AllGather, ReduceScatter) or
 * 2(k-1) (AllReduce), each moving S/k bytes per rank after a fixed latency.
 */
#include <string.h>

#include "lab07.h"

#define ALPHA_S 3.4e-6   /* NCCL's per-step NVLink latency of the Simple protocol (tuning.cc) */
#define UNBOUNDED 1e30

static double best_ring(const double bw[LAB07_MAX_GPUS][LAB07_MAX_GPUS], int *v, int k, int depth,
                        double cur)
{
    if (depth == k) {
        double closing = bw[v[k - 1]][v[0]];
        return closing < cur ? closing : cur;
    }
    double best = 0;
    for (int i = depth; i < k; i++) {
        int tmp = v[depth];
        v[depth] = v[i];
        v[i] = tmp;
        double hop = bw[v[depth - 1]][v[depth]];
        double c = hop < cur ? hop : cur;
        if (c > best) { /* a branch can only get slower: prune what cannot win */
            double r = best_ring(bw, v, k, depth + 1, c);
            if (r > best)
                best = r;
        }
        v[i] = v[depth];
        v[depth] = tmp;
    }
    return best;
}

double lab07_ring_gbps(const double bw[LAB07_MAX_GPUS][LAB07_MAX_GPUS], const int *members, int k)
{
    if (k <= 0 || k > LAB07_MAX_GPUS)
        return 0;
    if (k == 1)
        return UNBOUNDED;
    int v[LAB07_MAX_GPUS];
    memcpy(v, members, (size_t)k * sizeof v[0]);
    return best_ring(bw, v, k, 1, UNBOUNDED);
}

/* Ring bandwidth of every subset of GPUs, computed once per bandwidth matrix. */
static double cache_bw[LAB07_MAX_GPUS][LAB07_MAX_GPUS];
static double cache_ring[1 << LAB07_MAX_GPUS];
static int cache_valid;

static double ring_of_set(const double bw[LAB07_MAX_GPUS][LAB07_MAX_GPUS], const int *members,
                          int k)
{
    if (!cache_valid || memcmp(cache_bw, bw, sizeof cache_bw) != 0) {
        memcpy(cache_bw, bw, sizeof cache_bw);
        for (int i = 0; i < (1 << LAB07_MAX_GPUS); i++)
            cache_ring[i] = -1;
        cache_valid = 1;
    }
    unsigned mask = 0;
    for (int i = 0; i < k; i++)
        mask |= 1u << members[i];
    if (cache_ring[mask] < 0)
        cache_ring[mask] = lab07_ring_gbps(bw, members, k);
    return cache_ring[mask];
}

/* Time of a ring AllReduce (factor 2) or AllGather/ReduceScatter (factor 1). */
static double ring_time(int k, double bytes, double gbps, int factor)
{
    if (k <= 1)
        return 0;
    return factor * (k - 1) * (ALPHA_S + bytes / k / (gbps * 1e9));
}

cl_result lab07_step_time(const double bw[LAB07_MAX_GPUS][LAB07_MAX_GPUS], const lab07_layout *l,
                          const lab07_workload *w, const lab07_plan *p, lab07_cost *out)
{
    int n = p->ngpus;
    if (n < 1 || n > LAB07_MAX_GPUS || l->tp < 1 || l->pp < 1 || l->dp < 1 ||
        l->tp * l->pp * l->dp != n) {
        cl_set_error("layout tp=%d pp=%d dp=%d does not fit %d GPUs", l->tp, l->pp, l->dp, n);
        return CL_ERR_INVALID;
    }
    for (int r = 0; r < n; r++)
        if (p->gpu_of_rank[r] < 0 || p->gpu_of_rank[r] >= n) {
            cl_set_error("rank %d runs on GPU %d, not one of 0..%d", r, p->gpu_of_rank[r], n - 1);
            return CL_ERR_INVALID;
        }
    int tp = l->tp, dp = l->dp, pp = l->pp;
    double tp_bw = UNBOUNDED, dp_bw = UNBOUNDED, pp_bw = UNBOUNDED;
    int g[LAB07_MAX_GPUS];
    for (int p_ = 0; p_ < pp; p_++)
        for (int d = 0; d < dp; d++) { /* TP group (d, p_) */
            for (int t = 0; t < tp; t++)
                g[t] = p->gpu_of_rank[t + tp * (d + dp * p_)];
            double r = ring_of_set(bw, g, tp);
            tp_bw = r < tp_bw ? r : tp_bw;
        }
    for (int p_ = 0; p_ < pp; p_++)
        for (int t = 0; t < tp; t++) { /* DP group (t, p_) */
            for (int d = 0; d < dp; d++)
                g[d] = p->gpu_of_rank[t + tp * (d + dp * p_)];
            double r = ring_of_set(bw, g, dp);
            dp_bw = r < dp_bw ? r : dp_bw;
        }
    for (int t = 0; t < tp; t++)
        for (int d = 0; d < dp; d++)
            for (int p_ = 0; p_ + 1 < pp; p_++) { /* PP hop (t, d): stage p_ to p_+1 */
                double b = bw[p->gpu_of_rank[t + tp * (d + dp * p_)]]
                             [p->gpu_of_rank[t + tp * (d + dp * (p_ + 1))]];
                pp_bw = b < pp_bw ? b : pp_bw;
            }
    double grad = w->model_bytes / (tp * pp); /* the gradients one GPU holds */
    /* Megatron TP with sequence parallelism: per layer and micro-batch, 2 AllGathers and
     * 2 ReduceScatters forward and as many backward; ring RS + AG = one AllReduce. */
    double tp_calls = 4.0 * w->layers / pp * w->micro_batches;
    memset(out, 0, sizeof *out);
    out->tp_s = tp_calls * ring_time(tp, w->act_bytes, tp_bw, 2);
    out->dp_s = ring_time(dp, grad, dp_bw, 2);
    out->pp_s = pp > 1 ? 2.0 * w->micro_batches * (ALPHA_S + w->act_bytes / (pp_bw * 1e9)) : 0;
    out->total_s = out->tp_s + out->dp_s + out->pp_s;
    out->tp_gbps = tp > 1 ? tp_bw : 0;
    out->dp_gbps = dp > 1 ? dp_bw : 0;
    out->pp_gbps = pp > 1 ? pp_bw : 0;
    return CL_OK;
}
