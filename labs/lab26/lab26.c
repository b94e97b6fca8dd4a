/* lab26.c: lab 26, pipeline parallelism: the 1F1B schedule over point-to-point transfers.
 *
 * You write one stage's part of a training step: which micro-batch to run
 * forward or backward next, and the sends and receives of activations and
 * gradients between neighbouring stages, so that the pipeline never
 * deadlocks, keeps at most p - s activations alive, and idles only for the
 * unavoidable bubble. Read labs/lab26/README.md first; the TODOs below are in
 * the order of its sections. Build with `make lab26`, grade with `./grade lab26`.
 */
#include "lab26.h"

cl_result lab26_1f1b(cl_comm *comm, const lab26_stage_args *a)
{
    // TODO(lab26) 1: warm-up: forwards only (how many on stage s?).
    // TODO(lab26) 2: steady state: one forward, one backward, each transfer paired
    //   with the one that goes the other way to the same neighbour.
    // TODO(lab26) 3: cool-down: the backwards still owed.
    (void)comm, (void)a;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab26_interleaved(cl_comm *comm, const lab26_stage_args *a)
{
    // TODO(lab26) 4 (stretch): the interleaved schedule: which chunk and micro-batch
    //   each forward and backward is, the warm-up, and transfers that never deadlock.
    (void)comm, (void)a;
    return CL_ERR_NOT_IMPLEMENTED;
}
