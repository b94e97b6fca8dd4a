/* lab05_harness.h: what lab 05's driver.c shares with harness_tune.c.
 *
 * driver.c        the student's entries (both sides compile it) and the lab's table
 * harness_tune.c  the chain's message pattern, the tune mode, and the tables of
 *                 collectives and modes that name them (harness only)
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
/* --- harness_tune.c --- */

/* The suite's collectives (the Broadcast's calls checked against the chain's pattern)
 * and the lab's own modes (tune). */
extern const cl_coll_entry lab05_collectives[];
extern const cl_mode lab05_modes[];
#endif

#endif /* COMMLAB_LAB05_HARNESS_H */
