/* sandbox.h: the limits the student's program starts under (internal to boundary/). */
#ifndef COMMLAB_SANDBOX_H
#define COMMLAB_SANDBOX_H

/* The descriptor the child execs the student's program from (execveat). */
#define CL_SANDBOX_PROGRAM_FD 5

/* In the child, between fork and exec: give up root for the user "nobody"
 * (when running as root), forbid new privileges, die with the parent, and load
 * the system-call filter for `permits` (CL_PERMIT_*). A call outside the filter
 * raises SIGSYS, which the student program reports with the call's number.
 * With `unfiltered` (sanitizer builds of the project's own tests only) no
 * filter is loaded. Returns 0, or -1 with a reason in buf (for the child to
 * print before it exits). */
int cl_sandbox_enter(unsigned permits, int unfiltered, char *buf, int bufsize);

/* The name of system call number nr on this machine ("openat"), or NULL. */
const char *cl_sandbox_syscall_name(long nr);

#endif /* COMMLAB_SANDBOX_H */
