/* lab08.c: lab 08, from nccl-tests sweeps to a tuning table.
 *
 * You fit NCCL's alpha-beta cost model (a latency and a bandwidth) to real
 * nccl-tests AllReduce sweeps, one per NCCL_ALGO / NCCL_PROTO setting, and
 * turn the fitted models of a system into the table a tuner follows: which
 * setting runs each message size. The grader scores the fits and the table
 * on measured points your code never sees. Read labs/lab08/README.md first;
 * the TODOs below are in the order of its sections. Build with `make lab08`,
 * grade with `./grade lab08`.
 */
#include <math.h>

#include "lab08.h"

cl_result lab08_fit_sweep(const lab08_point *points, int n, lab08_fit *out)
{
    // TODO(lab08) 1: fit t(S) = alpha + S / bw to one sweep.
    //   Choose the fit so that small and large sizes count alike: the grader
    //   predicts the sweep's held-out sizes from your alpha and bw (section 1).
    //   bw in GB/s: 1 GB/s is 1e3 bytes per microsecond. Reject what cannot
    //   determine a line with cl_set_error() and CL_ERR_INVALID (lab08.h).
    (void)points, (void)n, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab08_make_table(const lab08_fit *fits, int nconfigs, unsigned long long max_bytes,
                           lab08_row *rows, int *nrows)
{
    // TODO(lab08) 2: the tuning table.
    //   For every size from 0 to max_bytes, the configuration your models
    //   predict fastest (section 2 says how a tuner decides ties). Write the
    //   ranges in increasing order, each as large as possible, with no gap and
    //   no overlap; set *nrows.
    (void)fits, (void)nconfigs, (void)max_bytes, (void)rows, (void)nrows;
    return CL_ERR_NOT_IMPLEMENTED;
}
