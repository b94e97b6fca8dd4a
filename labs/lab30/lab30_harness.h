/* lab30_harness.h: what lab 30's driver.c shares with its harness_*.c files.
 *
 * driver.c           the student's entries (both sides compile it) and the lab's table
 * harness_case.c     the fabrics, and a case's fabric and points
 * harness_time.c     the time of one AllReduce: simulated on a switched fabric, the handout's
 *                    formulas on a torus and for SHARP; the probe the student's program asks for
 * harness_choose.c   the choose and table modes: every algorithm's time at each point
 * harness_pattern.c  the torus AllReduce's messages, each to a torus neighbour
 */
#ifndef COMMLAB_LAB30_HARNESS_H
#define COMMLAB_LAB30_HARNESS_H

#include "harness/coll_suite.h"
#include "lab30_op.h"

/* The argument block of the student's lab30_choose(), the same on both sides. */
typedef struct choose_args {
    lab30_fabric f;
    int n;
    lab30_point pts[LAB30_MAX_POINTS];
    int algo[LAB30_MAX_POINTS]; /* out */
} choose_args;

#ifndef CL_STUDENT_SIDE
#include "sim/sim.h"

#define ALGO_BIT(x) (1 << (x)) /* algorithm x's bit in lab30_fabric.algos */

/* --- harness_case.c --- */

/* A fabric of the lab. */
struct fabric_def {
    lab30_fabric f;
    const char *system; /* switched: the simulator's system */
};

#define CACHED_MACHINES 8 /* machines kept: both switched fabrics are the same DGX H100 machine */

/* The case's fabric and the probes the student's program has asked for in it, and the
 * simulator's machines. */
struct current {
    const struct fabric_def *def;
    cl_sim_machine m[CACHED_MACHINES]; /* the machine built for m_gpus[i] GPUs */
    long m_gpus[CACHED_MACHINES];
    int next;
    int calls;
};
extern struct current current_case;

/* The case's fabric= (into current_case, its probes counted from zero) and points=GPUS:BYTES,... */
cl_result load_case(cl_case *c, choose_args *a);

/* --- harness_time.c --- */

/* The time in seconds of one AllReduce of bytes by algorithm algo on gpus GPUs of the
 * case's fabric (CL_ERR_INVALID for a point the fabric does not run). */
cl_result time_of(int algo, long gpus, double bytes, double *out);

/* The operation behind lab30_probe_time(), counted against the case's budget. */
cl_result lab_op(cl_run *run, cl_comm *comm, int code, void *args, size_t bytes);

/* --- the modes (harness_choose.c) --- */

cl_result table_case(cl_case *c);
cl_result choose_case(cl_case *c);

/* --- harness_pattern.c --- */

/* The torus AllReduce's messages (cl_coll_entry.pattern). */
int torus_pattern(const cl_comm *c, const cl_coll_args *a, const cl_trace_event *ev, int n,
                  char *why, size_t len);
#endif

#endif /* COMMLAB_LAB30_HARNESS_H */
