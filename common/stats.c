/* stats.c: median, quartiles and least squares for benchmark samples. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Quantile q in [0, 1] of sorted[0..n-1], interpolating between neighbours. */
static double quantile_sorted(const double *sorted, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    double frac = pos - (double)lo;
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

cl_result cl_summarize(const double *samples, size_t n, cl_summary *out)
{
    if (n == 0) {
        cl_set_error("no samples to summarise");
        return CL_ERR_INVALID;
    }
    double *sorted = malloc(n * sizeof *sorted);
    if (!sorted)
        return CL_ERR_NOMEM;
    memcpy(sorted, samples, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, compare_doubles);

    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += sorted[i];
    out->n = n;
    out->min = sorted[0];
    out->max = sorted[n - 1];
    out->median = quantile_sorted(sorted, n, 0.5);
    out->q1 = quantile_sorted(sorted, n, 0.25);
    out->q3 = quantile_sorted(sorted, n, 0.75);
    out->mean = sum / (double)n;
    free(sorted);
    return CL_OK;
}

double cl_median(const double *samples, size_t n)
{
    cl_summary s;
    if (cl_summarize(samples, n, &s) != CL_OK)
        return NAN;
    return s.median;
}

cl_result cl_fit_line(const double *x, const double *y, size_t n, double *a, double *b)
{
    if (n < 2) {
        cl_set_error("a line needs at least 2 points, got %zu", n);
        return CL_ERR_INVALID;
    }
    double mx = 0, my = 0;
    for (size_t i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
    }
    mx /= (double)n;
    my /= (double)n;
    double sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    if (sxx == 0) {
        cl_set_error("all x values are equal");
        return CL_ERR_INVALID;
    }
    *b = sxy / sxx;
    *a = my - *b * mx;
    return CL_OK;
}
