/* lab28.h: types and functions of lab 28 (a diagnoser of NCCL jobs).
 * The driver (driver.c) reads a job's diagnostic bundle, splits it into the output of each
 * tool on each node, and calls the function you write in lab28.c. */
#ifndef COMMLAB_LAB28_H
#define COMMLAB_LAB28_H

#include "commlab.h"

#define LAB28_MAX_SECTIONS 32
#define LAB28_MAX_FINDINGS 24

/* One tool's output on one node, as the bundle recorded it. */
typedef struct lab28_section {
    char kind[16];    /* "log" (NCCL_DEBUG=INFO), "env", "topo" (nvidia-smi topo -m), "ibstat" */
    char node[32];    /* the host name */
    const char *text; /* its output, NUL-terminated */
} lab28_section;

typedef struct lab28_bundle {
    int n;
    lab28_section s[LAB28_MAX_SECTIONS];
} lab28_bundle;

/* One fault: what it is (README section 2 lists the codes), where, and the fix. */
typedef struct lab28_finding {
    char code[24]; /* "socket", "p2p_disabled", ... */
    char node[32]; /* the host where it shows, or "-" for the whole job */
    char fix[200]; /* what to change: the setting or the tool, in one line */
} lab28_finding;

/* --- written by the student in lab28.c --- */

/* Every fault of the job, once each, with its fix, into out[0..*n). */
cl_result lab28_diagnose(const lab28_bundle *b, lab28_finding *out, int max, int *n);

#endif /* COMMLAB_LAB28_H */
