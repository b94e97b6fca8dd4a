/* p2p_sim.h: what the simulator backend offers the harness beyond p2p.h.
 *
 * The harness's side only. Simulated ranks are coroutines of the harness's
 * process; a rank that proxies the student's program waits for the program's
 * records outside virtual time (cl_sim_wait_external). When no rank can run,
 * the scheduler calls the idle hook (the boundary's exchange with the student
 * program) before it advances virtual time: the student's code runs in zero
 * virtual time, between events.
 */
#ifndef COMMLAB_P2P_SIM_H
#define COMMLAB_P2P_SIM_H

#include <stdint.h>

#include "p2p.h"
#include "result.h"

/* The hook the scheduler calls when every rank waits and some wait
 * externally; NULL removes it. */
void cl_sim_set_idle(cl_result (*idle)(void));

/* Block the calling rank until cl_sim_wake() names it. */
cl_result cl_sim_wait_external(cl_comm *c);
void cl_sim_wake(int world_rank);

/* The harness's data on a simulated buffer (see sim/sim_data.h): fill with
 * the inputs of rank `owner` for (seed, t, op) from global index first, or
 * raw bytes (t == -1); poison; count the elements of [p, p + count) that are
 * not the reduction over ranks lo..hi-1 of those inputs. */
cl_result cl_sim_fill(cl_comm *c, void *p, size_t count, int t, cl_op op, uint64_t seed, int owner,
                      int64_t first);
cl_result cl_sim_poison(cl_comm *c, void *p, size_t bytes);
cl_result cl_sim_wrong(cl_comm *c, const void *p, size_t count, int t, cl_op op, uint64_t seed,
                       int lo, int hi, int64_t first, size_t *wrong);

/* *n = bytes of [p, p + bytes) written since they were poisoned. */
cl_result cl_sim_touched(cl_comm *c, const void *p, size_t bytes, size_t *n);

/* Charge `seconds` of computation to the calling rank (it sleeps in virtual
 * time). */
cl_result cl_sim_compute(cl_comm *c, double seconds);

#endif /* COMMLAB_P2P_SIM_H */
