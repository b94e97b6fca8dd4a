/* run.h: the harness's state of one run (internal to harness/). */
#ifndef COMMLAB_RUN_H
#define COMMLAB_RUN_H

#include <stdio.h>

#include "harness.h"
#include "p2p_backend.h"

#define CL_MAX_PARAMS 128

typedef struct cl_report cl_report;

struct cl_run {
    const cl_lab *lab;
    const cl_mode *mode;
    cl_opts o;
    const char **lab_values;     /* by the index of lab->options */
    char *params[CL_MAX_PARAMS]; /* key=value arguments */
    int nparams;
    cl_report *report;
    int hello_done;
    uint64_t draws; /* seeds drawn (with --seed) */
    char argv0[512];
};

/* The report (report.c). */
cl_report *cl_report_new(const cl_run *run);
void cl_report_free(cl_report *r);
/* Write the JSON (if --json) with the run's status and, with `print`, the
 * table's end. Called once, by the process that hosts world rank 0, or by a
 * failing rank (which prints nothing: rank 0's table is the one). */
cl_result cl_report_finish(cl_run *run, cl_result status, const char *error, int print);

/* Options (options.c): the lab's modes and a collective lab's three, --help,
 * and parsing into run (CL_ERR_INVALID with a one-line reason). */
void cl_collect_modes(const cl_lab *lab);
void cl_usage(const cl_lab *lab, FILE *f);
cl_result cl_parse_options(cl_run *run, int argc, char **argv, int *help);

/* The modes' runners (cases.c, main.c). */
cl_result cl_run_cases(cl_run *run, cl_comm *comm);

#endif /* COMMLAB_RUN_H */
