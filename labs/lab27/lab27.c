/* lab27.c: a benchmark harness in the manner of nccl-tests: the counts of each row, the
 * timing and the check of one size, the sweep and its report, and the record of one
 * change measured before and after. See README.md. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab27.h"

/* --- 1. the counts of a row ------------------------------------------------------------------ */

void lab27_sizes_of(cl_coll_kind kind, size_t bytes, int nranks, lab27_sizes *s)
{
    // TODO(lab27) 1: the count, send and receive counts, size column, the bytes algbw
    //                counts and the busbw factor of one row (README section 1).
    (void)kind, (void)bytes, (void)nranks;
    memset(s, 0, sizeof *s);
}

/* --- 2. one size: timed, then checked ----------------------------------------------------------
 */

cl_result lab27_bench(cl_comm *c, cl_coll_kind kind, size_t bytes, int warmup, int iters,
                      void *sendbuf, void *recvbuf, lab27_result *r)
{
    // TODO(lab27) 2: out-of-place then in-place: warmup untimed calls, a barrier, iters
    //                timed calls (the time of one, averaged over the ranks), then fresh
    //                inputs, one call and the wrong elements of every rank (README section 2).
    (void)c, (void)kind, (void)bytes, (void)warmup, (void)iters, (void)sendbuf, (void)recvbuf;
    memset(r, 0, sizeof *r);
    return CL_ERR_NOT_IMPLEMENTED;
}

/* --- 3. the sweep and its report ------------------------------------------------------------- */

cl_result lab27_sweep(cl_comm *c, const lab27_config *cfg, char *text, size_t cap)
{
    // TODO(lab27) 3: warm up every size, then measure each size of the sweep, and write
    //                nccl-tests' report on rank 0: its header, one row per size, its
    //                footer (README section 3).
    (void)c, (void)cfg, (void)cap;
    text[0] = '\0';
    return CL_ERR_NOT_IMPLEMENTED;
}

/* --- 4. the record of one change ------------------------------------------------------------- */

cl_result lab27_compare(const double *before, const double *after, int n, lab27_effect *e)
{
    // TODO(lab27) 4: the medians, the effect (median of the paired ratios), its spread,
    //                and your verdict: does the change help, hurt, or can these samples
    //                not tell (README section 4)?
    (void)before, (void)after, (void)n;
    memset(e, 0, sizeof *e);
    return CL_ERR_NOT_IMPLEMENTED;
}
