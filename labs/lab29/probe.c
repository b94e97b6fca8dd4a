/* probe.c: lab29_probe_plan(), the simulator's measurement of a plan, asked through the harness.
 *
 * The simulator (common/sim/sim_train.h on the recorded server) runs in the harness, not
 * here: each call sends the plan and gets the measurement back, and counts against the
 * case's budget, like one trial run of a configuration on the real cluster.
 */
#include <string.h>

#include "lab29_op.h"
#include "student/student.h"

cl_result lab29_probe_plan(cl_comm *comm, const lab29_plan *p, lab29_probe *out)
{
    lab29_probe_args a;
    memset(&a, 0, sizeof a);
    a.plan = *p;
    cl_result rc = cl_lab_call(comm, LAB29_OP_PROBE, &a, sizeof a);
    if (rc == CL_OK) /* an invalid plan or a spent budget: the reason is in cl_last_error() */
        *out = a.probe;
    return rc;
}
