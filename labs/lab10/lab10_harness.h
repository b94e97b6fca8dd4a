/* lab10_harness.h: what lab 10's driver.c shares with its harness_*.c files.
 *
 * driver.c         the student's entries (both sides compile it) and the lab's table
 * harness_plan.c   the plan and smi modes: the student's plan of a topology, checked column by
 *                  column, and the CPU affinities of a saved nvidia-smi topo -m
 * harness_bind.c   the bind mode: the student's binding, seen from outside
 * harness_membw.c  the membw mode: node-0 memory bandwidth, the student's binding against the
 *                  harness's local and remote ones
 */
#ifndef COMMLAB_LAB10_HARNESS_H
#define COMMLAB_LAB10_HARNESS_H

#include "harness/harness.h"
#include "lab10.h"

#define MAXD LAB10_MAX_DEVICES
#define LIST LAB10_LIST_LEN

/* The argument blocks of the student's functions, the same on both sides. */

/* What the student's program writes for one plan (in shared memory). */
typedef struct plan_out {
    int load_status;
    char load_error[256];
    int ngpus, nnics;
    int gpu_status[MAXD], nic_status[MAXD], rank_status[MAXD], rank_nic[MAXD];
    char gpu_busid[MAXD][16];
    char gpu_cpuset[MAXD][LIST], nic_cpuset[MAXD][LIST], rank_cpuset[MAXD][LIST];
    char nic_name[MAXD][32];
    int options_status;
    char options_error[256];
    lab10_options options;
} plan_out;

typedef struct plan_args {
    const char *xml; /* shared memory */
    size_t xml_len;
    char host[64];
    plan_out *out; /* shared memory */
} plan_args;

typedef struct bind_args {
    char cpus[LIST];
} bind_args;

typedef struct spin_args {
    double seconds;
} spin_args;

typedef struct copy_args {
    void *dst; /* shared memory the harness placed on one NUMA node */
    const void *src;
    size_t bytes;
    int reps;
} copy_args;

#ifndef CL_STUDENT_SIDE

/* --- the modes (harness_plan.c, harness_bind.c, harness_membw.c) --- */

cl_result plan_case(cl_case *c);
cl_result smi_case(cl_case *c);
cl_result bind_mode(cl_run *run, cl_comm *c);
cl_result membw_mode(cl_run *run, cl_comm *c);
#endif

#endif /* COMMLAB_LAB10_HARNESS_H */
