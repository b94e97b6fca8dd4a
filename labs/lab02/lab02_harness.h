/* lab02_harness.h: what lab 02's driver.c shares with its harness_*.c files.
 *
 * driver.c           the student's entries (both sides compile it) and the lab's table
 * harness_codes.c    the codes and split modes: one legend code, one row of cells
 * harness_parse.c    the parse mode: the case's file read whole and the student's parse of
 *                    it, made safe to read and reported one row per device
 * harness_analyse.c  the analyse mode: the student's analysis of the library's parse
 * harness_probe.c    the probe mode: this machine's CUDA runtime against the student's parse
 *                    of nvidia-smi's output
 */
#ifndef COMMLAB_LAB02_HARNESS_H
#define COMMLAB_LAB02_HARNESS_H

#include "harness/harness.h"
#include "lab02.h"

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct code_args {
    char code[32];
    cl_link out;
} code_args;

typedef struct split_args {
    char text[2048];
    int want;
    char codes[LAB02_MAX_CELLS][8]; /* out */
    int count;                      /* out */
    long rest;                      /* out: offset of *rest in text, -1 outside it */
} split_args;

typedef struct parse_args {
    const char *text, *path; /* shared by the harness */
    cl_topo *out;            /* shared, zeroed; the student fills it */
} parse_args;

typedef struct analyse_args {
    const cl_topo *topo; /* shared */
    int group[CL_TOPO_MAX_DEVICES], ngroup;
    int ndomains, domain[CL_TOPO_MAX_DEVICES]; /* out */
    int sys_pairs, group_domains;              /* out */
    int nic[CL_TOPO_MAX_DEVICES];              /* out */
    cl_result nic_status;                      /* out */
    char nic_error[200];                       /* out */
} analyse_args;

#ifndef CL_STUDENT_SIDE

/* --- harness_parse.c --- */

/* The whole of file `path` in *text (NUL-terminated, to free()); a reason otherwise. */
cl_result read_text(const char *path, char **text);

/* The student's parse of text into *t (a copy in the harness's memory). */
cl_result student_parse(cl_case *c, const char *text, const char *path, cl_topo *t);

/* --- harness_analyse.c --- */

/* Call the student's analysis of t (shared for the call) into *a. */
cl_result student_analyse(cl_case *c, const cl_topo *t, analyse_args *a);

/* --- the modes (harness_codes.c, harness_parse.c, harness_analyse.c, harness_probe.c) --- */

cl_result codes_case(cl_case *c);
cl_result split_case(cl_case *c);
cl_result parse_case(cl_case *c);
cl_result analyse_case(cl_case *c);
cl_result probe_case(cl_case *c);
#endif

#endif /* COMMLAB_LAB02_HARNESS_H */
