/* lab20_harness.h: what lab 20's driver.c shares with its harness_*.c files.
 *
 * driver.c           the student's entries (both sides compile it) and the lab's table
 * harness_tables.c   the collectives the suite runs, the lab's own modes and their options
 * harness_pattern.c  the message patterns: the pairwise schedule and the two-level AlltoAll's
 * harness_data.c     buffers, fresh inputs and checks, and the calls of both sides
 * harness_hier.c     the hier and compare modes
 * harness_moe.c      the moe mode: MoE layers planned and dispatched
 */
#ifndef COMMLAB_LAB20_HARNESS_H
#define COMMLAB_LAB20_HARNESS_H

#include "harness/coll_suite.h"
#include "lab20_args.h"

#ifndef CL_STUDENT_SIDE
#include <stdint.h>

#define LAB20_GUARD 64 /* poisoned elements after every output */

/* --- harness_tables.c --- */

extern const cl_coll_entry lab20_collectives[];
extern const cl_mode lab20_modes[];
extern const cl_option lab20_options[];

/* --- harness_pattern.c --- */

/* The suite's patterns (cl_coll_entry.pattern): the pairwise exchange's schedule. */
int pairwise_pattern(const cl_comm *c, const cl_coll_args *a, const cl_trace_event *ev, int n,
                     char *why, size_t len);
int pairwise_v_pattern(const cl_comm *c, const cl_coll_args *a, const cl_trace_event *ev, int n,
                       char *why, size_t len);

/* Message patterns: 1 when the rank's trace fits, else 0 and why. */
int lab20_pairwise_fits(const cl_comm *c, size_t block_bytes, const cl_trace_event *ev, int n,
                        char *why, size_t len);
int lab20_hier_fits(const cl_comm *c, int local, size_t block_bytes, const cl_trace_event *ev,
                    int n, char *why, size_t len);

/* --- the modes (harness_hier.c, harness_moe.c) --- */

cl_result lab20_hier_verify(cl_run *run, cl_comm *comm);
cl_result lab20_compare(cl_run *run, cl_comm *comm);
cl_result lab20_moe_mode(cl_run *run, cl_comm *comm);

/* --- harness_data.c --- */

/* Ranks per node: --local, else the simulated system's GPUs per node, else 1. */
cl_result lab20_local(cl_run *run, cl_comm *c, int *local);

/* One AlltoAll's buffers on this rank: count elements of t (a multiple of p),
 * a guard after the output, scratch of 2 * count elements (4 KiB at least).
 * With v (p * 4 entries: sendcounts, sdispls, recvcounts, rdispls, in
 * elements) it is an AlltoAllv of those counts instead. */
typedef struct a2a {
    void *send, *recv, *scratch;
    size_t count, send_elems, recv_elems, scratch_bytes;
    cl_dtype t;
    const size_t *v;
    const size_t *(*counts_of)(int rank, void *ctx); /* AlltoAllv: another rank's sendcounts */
    void *ctx;
    uint64_t seed;
} a2a;

cl_result lab20_a2a_open(cl_comm *c, a2a *b, size_t count, cl_dtype t);
cl_result lab20_a2av_open(cl_comm *c, a2a *b, const size_t *v, cl_dtype t,
                          const size_t *(*counts_of)(int rank, void *ctx), void *ctx);
void lab20_a2a_close(cl_comm *c, a2a *b);

/* Fresh inputs (a seed the student's program never sees) and a poisoned output. */
cl_result lab20_a2a_fill(cl_run *run, cl_comm *c, a2a *b);

/* bad[0] wrong output elements, bad[1] elements written past the end, bad[2]
 * input elements changed: summed over every rank. */
cl_result lab20_a2a_check(cl_comm *c, const a2a *b, int64_t bad[3]);

/* The student's call on every rank (after a barrier): its status, forbidden
 * operation and time (the slowest rank's), agreed on every rank. why gets the
 * first failure's reason. */
typedef struct call_out {
    cl_result status;
    char error[400];
    char forbidden[48];
    double seconds;
} call_out;

cl_result lab20_call(cl_comm *c, const char *entry, void *args, size_t bytes, unsigned allow,
                     call_out *out);

/* The library's AlltoAll on b, timed from a barrier (slowest rank). */
cl_result lab20_library(cl_comm *c, const a2a *b, double *seconds);

/* The argument blocks of the student's collectives on b. */
void lab20_coll_args(const a2a *b, cl_coll_args *a);
#endif

#endif /* COMMLAB_LAB20_HARNESS_H */
