/* harness_bucket.c: the model that scores the bucket: ZeRO-2's ReduceScatter of gradient
 * buckets overlapped with the backward pass (DeepSpeed's reduce_bucket_size with
 * overlap_comm), as the handout states it. */
#include <math.h>

#include "lab22_harness.h"

/* One bucket of x elements: a ring ReduceScatter, N-1 steps of x/N elements. */
static double comm(const lab22_cluster *k, double x)
{
    return (k->ranks - 1) * (k->alpha_s + x * k->elem_bytes / k->ranks / k->bytes_per_s);
}

double lab22_bucket_step(const lab22_cluster *k, double s, const char **why)
{
    double psi = k->params, tb = k->backward_s;
    if (!(s >= 1) || s > psi) {
        *why = "the bucket is not between 1 element and the model";
        return INFINITY;
    }
    if (2 * s * k->elem_bytes > k->free_bytes) {
        *why = "two buckets do not fit in the free memory";
        return INFINITY;
    }
    *why = "";
    double nb = ceil(psi / s), last = psi - (nb - 1) * s, finish;
    if (nb <= 1) {
        finish = tb + comm(k, psi);
    } else {
        /* Bucket i is full at (i + 1) p and goes when the link is free; the last one when
         * the backward pass ends. The link frees after the later of the first bucket's
         * queue and the second last bucket's own transfer. */
        double p = tb * s / psi, c = comm(k, s);
        double f = fmax(p + (nb - 1) * c, (nb - 1) * p + c);
        finish = fmax(tb, f) + comm(k, last);
    }
    return tb / 2 + finish; /* the forward pass, the backward pass, what is left of the link */
}

double lab22_best_bucket(const lab22_cluster *k, double *best_s)
{
    double psi = k->params, smax = fmin(psi, floor(k->free_bytes / (2.0 * k->elem_bytes)));
    const char *why;
    double best = INFINITY;
    *best_s = 0;
    if (smax < 1)
        return best;
    for (int i = 0; i <= 4000; i++) {
        double s = i == 4000 ? smax : floor(exp(log(smax) * i / 4000.0));
        double t = lab22_bucket_step(k, s, &why);
        if (t < best)
            best = t, *best_s = s;
    }
    for (int m = 1; m <= 4096; m++) {
        double s = ceil(psi / m), t = s <= smax ? lab22_bucket_step(k, s, &why) : INFINITY;
        if (t < best)
            best = t, *best_s = s;
    }
    return best;
}
