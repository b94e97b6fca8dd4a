/* lab04_harness.h: what lab 04's driver.c shares with its harness_*.c files.
 *
 * driver.c          the student's entries (both sides compile it) and the lab's table
 * harness_rings.c   the case's machine as the harness models it and as the student receives
 *                   it, and the modes on it: bottleneck, search and xml
 * harness_trees.c   the trees mode: the student's double binary tree
 * harness_bench.c   the bench mode: the backend's AllReduce, with or without NCCL_GRAPH_FILE
 * harness_lists.c   the cases' lists of GPUs and ranks, read from text and written as columns
 */
#ifndef COMMLAB_LAB04_HARNESS_H
#define COMMLAB_LAB04_HARNESS_H

#include "harness/harness.h"
#include "lab04.h"

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct bottleneck_args {
    lab04_machine m;
    int ring[LAB04_MAX_GPUS];
    double gbps; /* out */
} bottleneck_args;

typedef struct search_args {
    lab04_machine m;
    int max_rings;
    int rings[LAB04_MAX_CHANNELS][LAB04_MAX_GPUS]; /* out */
    int nrings;                                    /* out */
} search_args;

typedef struct trees_args {
    int n;
    int order[LAB04_MAX_TREE];
    lab04_tree t0, t1; /* out */
} trees_args;

typedef struct xml_args {
    lab04_machine m;
    int rings[LAB04_MAX_CHANNELS][LAB04_MAX_GPUS];
    int nrings;
    char xml[LAB04_XML_BYTES]; /* out */
} xml_args;

#ifndef CL_STUDENT_SIDE

/* --- harness_lists.c --- */

/* "3,1,0,2" into v (at most max); the count, or -1 for anything else. */
int parse_list(const char *s, int *v, int max);

/* v[0..n) as "3,1,0,2", rows of `per` separated by ';': readable, and what xml= takes. */
void col_list(cl_row *r, const char *key, const int *v, int n, int per);

/* --- the modes (harness_rings.c, harness_trees.c, harness_bench.c) --- */

cl_result bottleneck_case(cl_case *c);
cl_result search_case(cl_case *c);
cl_result xml_case(cl_case *c);
cl_result trees_case(cl_case *c);
cl_result bench(cl_run *run, cl_comm *comm);
#endif

#endif /* COMMLAB_LAB04_HARNESS_H */
