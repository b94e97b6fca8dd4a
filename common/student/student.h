/* student.h: the student's program: the functions a lab lets the harness call, and its runtime.
 *
 * A lab's plug-in (labs/labNN/driver.c) is compiled twice. In the student's
 * program (with CL_STUDENT_SIDE defined) it only names, with
 * CL_STUDENT_ENTRIES, the functions of the student's file the harness may
 * call, each behind a small adapter that unpacks the call's argument block:
 *
 *     static cl_result allreduce(cl_comm *c, void *args)
 *     {
 *         cl_coll_args *a = args;
 *         return lab05_ring_allreduce(c, a->sendbuf, a->recvbuf, a->count, a->dtype,
 *                                     a->op, a->scratch);
 *     }
 *     CL_STUDENT_ENTRIES({"allreduce", allreduce});
 *
 * The runtime (student/main.c) owns main(): it waits for the harness's calls,
 * runs each entry on its rank, and forwards every call of the p2p.h interface
 * to the harness (student/forward.c). On "sim" one program hosts every
 * simulated rank, each on a stack of its own, one running at a time.
 */
#ifndef COMMLAB_STUDENT_H
#define COMMLAB_STUDENT_H

#include "p2p.h"

/* One function the harness may call: args points to the call's argument
 * block, in memory the harness shares (see boundary/wire.h). */
typedef cl_result (*cl_entry_fn)(cl_comm *comm, void *args);

typedef struct cl_entry {
    const char *name;
    cl_entry_fn fn;
} cl_entry;

typedef struct cl_student_table {
    const cl_entry *entries;
    int n;
} cl_student_table;

/* Defined once by every lab's plug-in, with CL_STUDENT_ENTRIES. */
extern const cl_student_table cl_student_entries;

/* An operation the lab's harness provides (an emulated link, a modelled
 * kernel): code and an argument block of at most 64 KiB, which comes back with
 * what the operation wrote. For code a lab gives the student, never for the
 * student to call directly; the harness checks, times and records it. */
cl_result cl_lab_call(cl_comm *c, int code, void *args, size_t bytes);

#define CL_STUDENT_ENTRIES(...)                                                                    \
    static const cl_entry cl_entries_[] = {__VA_ARGS__};                                           \
    const cl_student_table cl_student_entries = {cl_entries_,                                      \
                                                 sizeof cl_entries_ / sizeof cl_entries_[0]}

#endif /* COMMLAB_STUDENT_H */
