/* model.c: lab07_step_time(), the harness's model of a training step, asked through the harness.
 *
 * The model (common/sim/sim_train.h: NCCL's channels for every TP, DP and PP
 * group, simulated on the recorded nodes) runs in the harness, not here: each
 * call sends the plan and gets its cost back, and counts against the case's
 * budget, like one benchmark run of a configuration on a real cluster.
 */
#include <string.h>

#include "lab07_op.h"
#include "student/student.h"

cl_result lab07_step_time(cl_comm *comm, const lab07_plan *p, lab07_cost *out)
{
    lab07_step_args a;
    memset(&a, 0, sizeof a);
    a.plan = *p;
    cl_result rc = cl_lab_call(comm, LAB07_OP_STEP, &a, sizeof a);
    if (rc == CL_OK) /* an invalid plan or a spent budget: the reason is in cl_last_error() */
        *out = a.cost;
    return rc;
}
