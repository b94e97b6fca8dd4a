/* lab08.h: types and functions of lab 08 (calibrating an NCCL tuning table from nccl-tests).
 * The plug-in (driver.c) calls the functions you write in lab08.c. */
#ifndef COMMLAB_LAB08_H
#define COMMLAB_LAB08_H

#include "commlab.h"

#define LAB08_MAX_POINTS  64 /* measured sizes of one sweep */
#define LAB08_MAX_CONFIGS 8  /* configurations (NCCL_ALGO / NCCL_PROTO settings) of a system */
#define LAB08_MAX_ROWS    32 /* rows of a tuning table */

/* One row of an nccl-tests AllReduce sweep: nccl-tests' "size" (bytes per
 * rank) and its out-of-place "time" column (microseconds). */
typedef struct lab08_point {
    double bytes;
    double time_us;
} lab08_point;

/* The alpha-beta model of one configuration:
 *     t(S) = alpha_us + S / (bw_gbps * 1e3)      microseconds, S in bytes
 * (1 GB/s is 1e3 bytes per microsecond). bw_gbps is an algorithm bandwidth
 * in nccl-tests' sense (algbw = S / t for large S). */
typedef struct lab08_fit {
    double alpha_us;
    double bw_gbps;
} lab08_fit;

/* One row of a tuning table: every size from min_bytes to max_bytes
 * (inclusive) runs configuration `config` (an index into the fits given). */
typedef struct lab08_row {
    unsigned long long min_bytes, max_bytes;
    int config;
} lab08_row;

/* --- written by the student in lab08.c, in the order of the handout --- */

/* Fit the model to the n points of one sweep (any order). CL_ERR_INVALID
 * (with a reason) when they cannot determine it: fewer than two different
 * sizes, a size below 0 or a time not above 0, or a fit whose bandwidth is
 * not positive. */
cl_result lab08_fit_sweep(const lab08_point *points, int n, lab08_fit *out);

/* The tuning table of a system whose nconfigs configurations have the fitted
 * models fits[]: rows that cover 0 .. max_bytes without a gap or an overlap,
 * in increasing order, at most LAB08_MAX_ROWS; *nrows gets their number.
 * CL_ERR_INVALID when nconfigs is not 1 .. LAB08_MAX_CONFIGS. */
cl_result lab08_make_table(const lab08_fit *fits, int nconfigs, unsigned long long max_bytes,
                           lab08_row *rows, int *nrows);

#endif /* COMMLAB_LAB08_H */
