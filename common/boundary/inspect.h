/* inspect.h: what the harness can see of the student's program from outside.
 *
 * Labs that let the student's code change its own process (lab 10 binds it to
 * CPUs) check the effect from the harness's side, with the kernel's view of
 * that process, instead of trusting what the code reports.
 */
#ifndef COMMLAB_INSPECT_H
#define COMMLAB_INSPECT_H

#include <sys/types.h>

struct cl_comm;

/* The process id of the student's program, or 0 when none is running. This
 * function can't fail. */
pid_t cl_student_pid(void);

/* How many transfers (cl_isend, cl_irecv) the rank of comm has posted and not
 * yet seen complete through cl_wait or cl_test, during its current call; 0
 * outside one. Lab 11's modelled GPU counts the channels that take its SMs with
 * it. This function can't fail. */
int cl_student_in_flight(const struct cl_comm *comm);

#endif /* COMMLAB_INSPECT_H */
