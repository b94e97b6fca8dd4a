/* lab09_harness.h: what lab 09's driver.c shares with its harness_*.c files (the argument
 * blocks, which the student's program shares too, are in exchange.h).
 *
 * driver.c             the student's entries (both sides compile it) and the lab's table
 * harness_payload.c    fresh payload bytes, and the count of those that arrived wrong
 * harness_rings.c      the rings laid out in shared memory, their counters started; the
 *                      numeric options
 * harness_exchange.c   the stress and race modes: messages of every size both ways
 * harness_allreduce.c  the allreduce mode: the student's AllReduce on the rings
 * harness_bench.c      the bench mode: the student's ring against MPI and memcpy
 */
#ifndef COMMLAB_LAB09_HARNESS_H
#define COMMLAB_LAB09_HARNESS_H

#include "exchange.h"
#include "harness/harness.h"

#ifndef CL_STUDENT_SIDE

/* --- harness_payload.c --- */

/* n bytes of owner's stream of seed from position first into buf, and the count of the
 * bytes of buf that differ from them. Host memory: "cpu" only. */
void fill(unsigned char *buf, size_t n, uint64_t seed, int owner, size_t first);
size_t count_wrong(const unsigned char *buf, size_t n, uint64_t seed, int owner, size_t first);

/* --- harness_rings.c --- */

extern layout rings; /* this process's, once laid out */

/* CL_ERR_INVALID with a reason unless nslots x chunk is a ring of at most budget bytes. */
cl_result rings_check(uint64_t nslots, size_t chunk, size_t budget);

/* Every ring empty, its counters at start. */
void rings_reset(int nrings, uint64_t start);

/* nrings rings of at most `budget` bytes in the region the ranks share, in
 * the shape nslots x chunk, their counters at start; every rank calls it. */
cl_result rings_open(cl_comm *c, int nrings, size_t budget, uint64_t nslots, size_t chunk,
                     uint64_t start);

/* The option --name as a number, or fallback when it is absent or empty. */
uint64_t opt_u64(cl_run *run, const char *name, uint64_t fallback);

/* --- the modes (harness_exchange.c, harness_allreduce.c, harness_bench.c) --- */

cl_result stress_mode(cl_run *run, cl_comm *c);
cl_result race_mode(cl_run *run, cl_comm *c);
cl_result allreduce_mode(cl_run *run, cl_comm *c);
cl_result bench_mode(cl_run *run, cl_comm *c);
#endif

#endif /* COMMLAB_LAB09_HARNESS_H */
