/* coll_suite.h: a collective lab's harness, as nccl-tests' common.cu is for its collectives.
 *
 * A collective lab lists its collectives in cl_lab.collectives; the harness
 * then gives it three modes:
 *   verify   the correctness matrix: counts that do not divide evenly by the
 *            ranks (and are smaller than them), int32/int64/float/double,
 *            sum/prod/max/min, several roots; fresh inputs for every call
 *   bench    one collective at one size (--coll, --bytes): the student's and
 *            the library's, interleaved, --repeats samples each
 *   sweep    every selected collective from --min-bytes to --max-bytes by
 *            --factor, with nccl-tests' columns
 * Every call gets fresh inputs from a seed the student's program never sees,
 * and every call's output is checked (warm-up included): wrong elements,
 * elements written past the end of the output, changes to the input, any
 * operation outside CL_ALLOW_COLLECTIVE, and, when the entry says how, the
 * message pattern of its algorithm (each rank's trace).
 *
 * The student's side (driver.c with CL_STUDENT_SIDE) names one entry per
 * collective, with the same name, taking a cl_coll_args (coll.h).
 */
#ifndef COMMLAB_COLL_SUITE_H
#define COMMLAB_COLL_SUITE_H

#include "harness.h"

/* The pattern an algorithm must show: called on every rank after each
 * verified call with the rank's trace; returns 1 when it fits, else 0 with a
 * reason in why. */
typedef int (*cl_pattern_fn)(const cl_comm *comm, const cl_coll_args *a, const cl_trace_event *ev,
                             int n, char *why, size_t why_len);

/* The student's side: entry `name` calls fn(comm, sendbuf, recvbuf, count, dtype, op, scratch),
 * the parameters of an AllReduce (and of a ReduceScatter). */
#define CL_COLL_REDUCING_ENTRY(name, fn)                                                           \
    static cl_result name(cl_comm *c, void *args)                                                  \
    {                                                                                              \
        const cl_coll_args *a = args;                                                              \
        return fn(c, a->sendbuf, a->recvbuf, a->count, a->dtype, a->op, a->scratch);               \
    }

typedef struct cl_coll_entry {
    const char *name; /* the student entry, and what --coll selects */
    cl_coll_kind kind;
    int baseline;          /* also time the library's collective of this kind */
    cl_pattern_fn pattern; /* NULL: any correct algorithm */
} cl_coll_entry;

/* The three modes (main.c adds them when cl_lab.collectives is set). */
cl_result cl_coll_verify(cl_run *run, cl_comm *comm);
cl_result cl_coll_bench(cl_run *run, cl_comm *comm);
cl_result cl_coll_sweep(cl_run *run, cl_comm *comm);

/* Helpers for pattern checks: the transfers of a trace (sends and receives,
 * in order), as (peer, bytes) pairs of one direction. Returns how many. */
int cl_trace_transfers(const cl_trace_event *ev, int n, int sends, int *peer, size_t *bytes,
                       int max);

#endif /* COMMLAB_COLL_SUITE_H */
