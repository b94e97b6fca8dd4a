/* lab26_harness.h: what lab 26's driver.c shares with its harness_*.c files (harness only).
 *
 * driver.c         the student's entries (both sides compile it) and the lab's table
 * harness_stage.c  the stage's computation (lab_op): each forward and backward checked against
 *                  sequential execution, computed, and recorded on the rank's clock
 * harness_run.c    the run mode: a stage a rank, the student's schedule, every stage's
 *                  timeline gathered and reported
 */
#ifndef COMMLAB_LAB26_HARNESS_H
#define COMMLAB_LAB26_HARNESS_H

#include <stdint.h>

#include "harness/harness.h"
#include "lab26.h"

#define MAX_STAGES 16
#define MAX_MB     64

/* One stage's state during a run (the harness's; on sim every stage lives in
 * this process, on cpu each process uses its own entry). */
typedef struct stage {
    lab26_stage_args a; /* the buffers the student was given */
    int m, p, s, v;
    uint64_t seed_fwd, seed_bwd;
    double tf, tb, t0;
    unsigned char fwd[MAX_MB], bwd[MAX_MB];
    int in_flight, max_in_flight, nops, errors;
    int kind[2 * MAX_MB], mb[2 * MAX_MB], chunk[2 * MAX_MB];
    double start[2 * MAX_MB], end[2 * MAX_MB];
    char error[200];
} stage;

/* --- harness_stage.c --- */

/* Every stage's state (indexed by rank). */
extern stage stages[MAX_STAGES];

cl_result lab_op(cl_run *run, cl_comm *c, int code, void *args, size_t bytes);

/* --- harness_run.c --- */

cl_result run_mode(cl_run *run, cl_comm *c);

#endif /* COMMLAB_LAB26_HARNESS_H */
