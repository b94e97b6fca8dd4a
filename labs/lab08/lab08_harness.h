/* lab08_harness.h: what lab 08's driver.c shares with its harness_*.c files.
 *
 * driver.c             the student's entries (both sides compile it) and the lab's table
 * harness_cases.c      the fit and table modes, and the check of a table
 * harness_calibrate.c  the calibrate mode: the recorded sweeps of a system, fitted, and a table
 * harness_sweep.c      the sweep mode: the library's AllReduce per size, nccl-tests' way
 */
#ifndef COMMLAB_LAB08_HARNESS_H
#define COMMLAB_LAB08_HARNESS_H

#include "harness/harness.h"
#include "lab08.h"

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct fit_args {
    int n;
    lab08_point points[LAB08_MAX_POINTS];
    lab08_fit out; /* out */
} fit_args;

typedef struct table_args {
    int nconfigs;
    lab08_fit fits[LAB08_MAX_CONFIGS];
    unsigned long long max_bytes;
    int nrows;                      /* out */
    lab08_row rows[LAB08_MAX_ROWS]; /* out */
} table_args;

#ifndef CL_STUDENT_SIDE
/* --- harness_cases.c --- */

/* Whether the rows cover 0 .. max_bytes in order with valid configurations;
 * the reason in why when not. */
int table_valid(const table_args *a, char *why, size_t len);

/* The cases modes. */
cl_result fit_case(cl_case *c);
cl_result table_case(cl_case *c);

/* --- the ranks modes (harness_calibrate.c, harness_sweep.c) --- */

cl_result calibrate(cl_run *run, cl_comm *c);
cl_result sweep(cl_run *run, cl_comm *c);
#endif

#endif /* COMMLAB_LAB08_HARNESS_H */
