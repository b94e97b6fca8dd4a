/* deadline.h: the one deadline of a harness process, for every wait that could last forever.
 *
 * The harness sets it from --deadline (seconds from the start). Waits on the
 * student's program, on a GPU stream or an event poll it and give up with
 * CL_ERR_TIMEOUT; a watchdog thread ends the process a little after it, with
 * a line saying what the rank was doing, in case a library call (MPI) never
 * returns.
 */
#ifndef COMMLAB_DEADLINE_H
#define COMMLAB_DEADLINE_H

/* Set the deadline to `seconds` from now (<= 0: none), and start the watchdog.
 * This function can't fail. */
void cl_deadline_start(double seconds);

/* Set the deadline to `seconds` from now without a watchdog (tests). */
void cl_deadline_set(double seconds);

/* Seconds left (a large number when there is no deadline). */
double cl_deadline_left(void);

/* The absolute time (cl_wtime()) of the deadline, 0 when none. */
double cl_deadline_at(void);

/* What this process is doing, for the watchdog's last words ("rank 1: in
 * lab05_ring_allreduce, waiting for the student's program"). The text is copied. */
void cl_deadline_doing(const char *what);

/* The wait the process is in now, said after what it is doing ("rank 0's
 * pingpong() waits in cl_wait, operation 12 of the call"); NULL: none. */
void cl_deadline_waiting(const char *what);

/* End the process as at the deadline when one wait (cl_deadline_waiting) has
 * lasted `seconds` (<= 0: never): on MPI a wait that long means no message
 * is coming, and a deadlock then costs that long instead of the whole deadline.
 * Not for the simulator, whose waits include running the model. */
void cl_deadline_stall(double seconds);

#endif /* COMMLAB_DEADLINE_H */
