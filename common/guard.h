/* guard.h: run-time refusal of library functions that a lab asks students to write themselves.
 *
 * The grader lists the library functions a lab forbids in the environment
 * variable COMMLAB_FORBID ("cl_fit_line,cl_topo_load") of the lab's program.
 * The list is read once, before main() runs, and removed from the
 * environment. Each guarded library function starts with CL_GUARD(name):
 * when name is on the list, the process prints
 *   commlab-guard: forbidden call to NAME
 * on stderr and ends at once with status CL_GUARD_EXIT. This catches calls
 * that a static check of the student's object file cannot see (through a
 * function pointer or a symbol lookup). Only functions that the lab's own
 * driver never calls may be listed: the guard does not know who the caller is.
 */
#ifndef COMMLAB_GUARD_H
#define COMMLAB_GUARD_H

#define CL_GUARD_EXIT 99

/* Ends the process (status CL_GUARD_EXIT) when name is forbidden in this run;
 * otherwise returns at once. This function can't fail. */
void cl_guard_check(const char *name);

#define CL_GUARD(name) cl_guard_check(name)

#endif /* COMMLAB_GUARD_H */
