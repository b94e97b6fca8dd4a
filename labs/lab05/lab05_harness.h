/* lab05_harness.h: what lab 05's driver.c shares with harness_tune.c.
 *
 * driver.c        the student's entries (both sides compile it) and the lab's tables
 * harness_tune.c  the chain's message pattern and the tune mode (harness only)
 */
#ifndef COMMLAB_LAB05_HARNESS_H
#define COMMLAB_LAB05_HARNESS_H

#include "harness/coll_suite.h"
#include "lab05.h"

/* The argument block of the tuned Broadcast, the same on both sides. */
typedef struct tune_args {
    cl_coll_args a;
    lab05_chain chain;
    size_t chunk_bytes; /* out: what lab05_broadcast_chunk() chose */
} tune_args;

/* The chunk the suite's Broadcast calls get: a third of the message plus one
 * byte, so rarely whole elements, and the last chunk is short. */
static inline size_t lab05_suite_chunk(size_t bytes) { return bytes / 3 + 1; }

#ifndef CL_STUDENT_SIDE
/* The chain's pattern for the suite's Broadcast calls (cl_coll_entry.pattern). */
int lab05_suite_pattern(const cl_comm *c, const cl_coll_args *a, const cl_trace_event *ev, int n,
                        char *why, size_t len);

/* The tune mode. */
cl_result lab05_tune(cl_run *run, cl_comm *c);
#endif

#endif /* COMMLAB_LAB05_HARNESS_H */
