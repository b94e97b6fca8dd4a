/* harness_bucket.c: lab 22's bucket mode, and the model that scores the bucket: ZeRO-2's
 * ReduceScatter of gradient buckets overlapped with the backward pass (DeepSpeed's
 * reduce_bucket_size with overlap_comm), as the handout states it. */
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

/* --- the bucket mode ---------------------------------------------------------------------- */

cl_result bucket_case(cl_case *cs)
{
    bucket_args a = {0};
    double v;
    long long i;
    CL_CHECK(cl_case_num(cs, "params", &a.k.params));
    CL_CHECK(cl_case_int(cs, "elem_bytes", &i));
    a.k.elem_bytes = (int)i;
    CL_CHECK(cl_case_int(cs, "ranks", &i));
    a.k.ranks = (int)i;
    CL_CHECK(cl_case_num(cs, "backward_s", &a.k.backward_s));
    CL_CHECK(cl_case_num(cs, "alpha_s", &a.k.alpha_s));
    CL_CHECK(cl_case_num(cs, "bytes_per_s", &v));
    a.k.bytes_per_s = v;
    CL_CHECK(cl_case_num(cs, "free_bytes", &a.k.free_bytes));
    if (!(a.k.params >= 1) || a.k.elem_bytes < 1 || a.k.ranks < 2 || !(a.k.backward_s > 0) ||
        !(a.k.alpha_s >= 0) || !(a.k.bytes_per_s > 0) || !(a.k.free_bytes > 0)) {
        cl_set_error("a cluster needs params >= 1, elem_bytes >= 1, ranks >= 2 and positive "
                     "times, bandwidth and memory");
        return CL_ERR_INVALID;
    }
    lab22_cluster k = a.k; /* the student's copy may come back changed */
    cl_result rc = cl_case_call(cs, "bucket", &a, sizeof a);
    cl_row *row = cl_case_row(cs);
    double best_s, best = lab22_best_bucket(&k, &best_s);
    const char *why = "";
    double step = rc == CL_OK ? lab22_bucket_step(&k, a.bucket, &why) : INFINITY;
    cl_col_num(row, "bucket", a.bucket, "%.4g");
    cl_col_str(row, "valid", isfinite(step) ? "yes" : "no");
    cl_col_str(row, "why", rc != CL_OK ? "your function failed" : why);
    cl_col_num(row, "step_s", isfinite(step) ? step : -1, "%.5g");
    cl_col_num(row, "best_bucket", best_s, "%.4g");
    cl_col_num(row, "best_step_s", best, "%.5g");
    return rc;
}
