/* lab06_harness.h: what lab 06's driver.c shares with its harness_*.c files.
 *
 * driver.c             the student's entries (both sides compile it) and the lab's table
 * harness_patterns.c   each algorithm's message pattern, and the selected AllReduce's
 * harness_calibrate.c  the calibrate mode: alpha, beta and gamma as the student's code meets
 *                      them, or given by --model (select's model too)
 * harness_select.c     the select mode: the four algorithms and the selector, interleaved
 * harness_model.c      the model mode: the student's costs and choice for one case
 * harness_tables.c     the lab's collectives (with their patterns), modes and options
 * probe.c              calibrate's ping-pong and reduction loop, in the student's program
 */
#ifndef COMMLAB_LAB06_HARNESS_H
#define COMMLAB_LAB06_HARNESS_H

#include "harness/coll_suite.h"
#include "lab06.h"

#define NALGO LAB06_ALGO_COUNT

/* The argument blocks of the lab's own entries, the same on both sides. */
typedef struct pingpong_args {
    void *buf;
    size_t bytes;
    int iters;
} pingpong_args;

typedef struct reduce_args {
    void *a, *b;
    size_t count;
    int iters;
} reduce_args;

typedef struct cost_args {
    lab06_model m;
    int p;
    double bytes;
    double cost[NALGO]; /* out */
    int selected;       /* out */
} cost_args;

#ifdef CL_STUDENT_SIDE
/* --- probe.c --- */

cl_result lab06_probe_pingpong(cl_comm *c, void *args);
cl_result lab06_probe_reduce_loop(cl_comm *c, void *args);
#else
#include "harness/patterns.h"

/* --- harness_patterns.c --- */

/* Each algorithm's message pattern (harness/patterns.h), in lab06_algo order. */
extern const cl_pattern_fn patterns[NALGO];

/* The selected AllReduce: the pattern of one of the four algorithms. */
int pattern_any(const cl_comm *c, const cl_coll_args *a, const cl_trace_event *ev, int n, char *why,
                size_t len);

/* --- harness_calibrate.c --- */

/* The model of --model A,B,G, or measured; reported. */
cl_result get_model(cl_run *run, cl_comm *c, lab06_model *m);

/* --- the modes (harness_calibrate.c, harness_select.c, harness_model.c) --- */

cl_result calibrate_mode(cl_run *run, cl_comm *c);
cl_result select_mode(cl_run *run, cl_comm *c);
cl_result model_case(cl_case *c);

/* --- harness_tables.c --- */

extern const cl_coll_entry lab06_collectives[];
extern const cl_mode lab06_modes[];
extern const cl_option lab06_options[];
#endif

#endif /* COMMLAB_LAB06_HARNESS_H */
