/* lab15_harness.h: what lab 15's driver.c shares with its harness_*.c files.
 *
 * driver.c            the student's entries (both sides compile it) and the lab's table
 * harness_parsers.c   the parsers' modes: qos, gids, devinfo and switch, each the student's
 *                     parse of one tool's output
 * harness_validate.c  the validate mode: a cluster's dump split into its sections, and the
 *                     student's findings and fixes for it
 * harness_columns.c   what the student's program wrote, bounded and written as columns
 */
#ifndef COMMLAB_LAB15_HARNESS_H
#define COMMLAB_LAB15_HARNESS_H

#include "harness/harness.h"
#include "lab15.h"

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct qos_args {
    const char *text;
    lab15_qos q; /* out */
} qos_args;

typedef struct gids_args {
    const char *text;
    int n; /* out */
    lab15_gid g[64];
} gids_args;

typedef struct devinfo_args {
    const char *text;
    int n; /* out */
    lab15_port p[16];
} devinfo_args;

typedef struct switch_args {
    const char *text;
    lab15_switch s; /* out */
} switch_args;

typedef struct validate_args {
    lab15_dump d;
    int n; /* out */
    lab15_finding f[LAB15_MAX_FINDINGS];
} validate_args;

#ifndef CL_STUDENT_SIDE

#define FILE_MAX_MIB 16 /* the largest file read: a dump, or one tool's output */

/* --- harness_columns.c --- */

/* A bounded copy of a field the student's program wrote. */
const char *field(char *s, size_t n);

/* Writes item i of items as one line into out (len bytes); returns what snprintf does. */
typedef int (*line_fn)(char *out, size_t len, void *items, int i);

/* The column key: a line for each of the first n items (n clamped to 0..max), in at most
 * cap bytes; the lines that do not fit are cut. */
void col_lines(cl_row *r, const char *key, size_t cap, int n, int max, line_fn line, void *items);

/* --- the modes (harness_parsers.c, harness_validate.c) --- */

cl_result qos_case(cl_case *c);
cl_result gids_case(cl_case *c);
cl_result devinfo_case(cl_case *c);
cl_result switch_case(cl_case *c);
cl_result validate_case(cl_case *c);
#endif

#endif /* COMMLAB_LAB15_HARNESS_H */
