/* stats.h: robust summaries of repeated measurements (median and spread). */
#ifndef COMMLAB_STATS_H
#define COMMLAB_STATS_H

#include <stddef.h>

#include "result.h"

typedef struct cl_summary {
    size_t n;
    double min, max;
    double median;
    double q1, q3; /* quartiles (linear interpolation) */
    double mean;
} cl_summary;

/* Summarise n >= 1 samples (the array is not modified). Returns
 * CL_ERR_INVALID for n == 0, CL_ERR_NOMEM if the scratch copy fails. */
cl_result cl_summarize(const double *samples, size_t n, cl_summary *out);

/* Median of n >= 1 samples, or NaN for n == 0. The array is not modified. */
double cl_median(const double *samples, size_t n);

/* Least-squares line y = a + b x through n >= 2 points. CL_ERR_INVALID when
 * n < 2 or all x are equal. */
cl_result cl_fit_line(const double *x, const double *y, size_t n, double *a, double *b);

#endif /* COMMLAB_STATS_H */
