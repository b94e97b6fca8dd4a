/* probe.c: lab30_probe_time(), the simulator's time of one AllReduce, asked through the harness.
 *
 * The simulator (common/sim: routed flows on the fabric, NCCL's latencies) runs in the
 * harness, not here: each call counts against the case's budget, and only jobs up to the
 * fabric's probe_max_gpus can be asked for, like the small allocation a team gets before
 * the big one.
 */
#include <string.h>

#include "lab30_op.h"
#include "student/student.h"

cl_result lab30_probe_time(cl_comm *comm, int algo, long gpus, double bytes, double *time_s)
{
    lab30_probe_args a;
    memset(&a, 0, sizeof a);
    a.algo = algo, a.gpus = gpus, a.bytes = bytes;
    cl_result rc = cl_lab_call(comm, LAB30_OP_PROBE, &a, sizeof a);
    if (rc == CL_OK) /* the reason of a refusal is in cl_last_error() */
        *time_s = a.time_s;
    return rc;
}
