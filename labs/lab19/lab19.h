/* lab19.h: types and functions of lab 19 (topology-aware scheduling on a tree fabric).
 * The driver (driver.c) calls the functions you write in lab19.c. */
#ifndef COMMLAB_LAB19_H
#define COMMLAB_LAB19_H

#include <stddef.h>

#include "commlab.h"

#define LAB19_MAX_NODES    512
#define LAB19_MAX_SWITCHES 160
#define LAB19_NAME         24 /* host and switch names, NUL included */

/* One switch of the tree. Leaves (level 1) have nodes below them; a switch of
 * level k > 1 has switches of level k - 1 below it. Exactly one switch, the
 * top, has no parent. */
typedef struct lab19_switch {
    char name[LAB19_NAME];
    int level;
    int parent;     /* index in lab19_fabric.sw of the switch above; -1 for the top */
    double up_gbps; /* what its links to the parent carry, Gb/s in each direction (0: top) */
} lab19_switch;

/* The fabric: its switches, its nodes in host-name order, and which leaf each
 * node hangs from. A node has gpus_per_node GPUs and injects node_gbps. */
typedef struct lab19_fabric {
    int nswitches, nnodes, gpus_per_node;
    double node_gbps;
    lab19_switch sw[LAB19_MAX_SWITCHES];
    char node[LAB19_MAX_NODES][LAB19_NAME];
    int leaf[LAB19_MAX_NODES]; /* index in sw of node i's leaf switch */
} lab19_fabric;

/* The cluster when a job is placed. */
typedef struct lab19_state {
    double now;                             /* seconds since the trace began */
    int free_gpus[LAB19_MAX_NODES];         /* idle GPUs of each node */
    double uplink_load[LAB19_MAX_SWITCHES]; /* Gb/s the running jobs send through each
                                               switch's uplinks (see the handout) */
    int queued;                             /* jobs waiting behind this one */
} lab19_state;

/* A job: gpus <= gpus_per_node runs on one node (it shares the node with
 * others); a larger job asks for gpus / gpus_per_node whole nodes. */
typedef struct lab19_job {
    int id;
    int gpus;
    int nodes;     /* nodes it needs: 1, or gpus / gpus_per_node whole ones */
    double submit; /* seconds since the trace began */
} lab19_job;

/* --- written by the student in lab19.c, in the order of the handout --- */

/* Slurm's hostlist of n distinct host names (in any order): an expression that
 * names exactly those hosts, no longer than Slurm's own (dgx[001-004,007]). */
cl_result lab19_hostlist(const char *const *names, int n, char *out, size_t cap);

/* The topology.conf of the tree plugin for the fabric: one line per switch. */
cl_result lab19_topology_conf(const lab19_fabric *f, char *out, size_t cap);

/* Where the job runs: job->nodes distinct node indices in nodes[], each with
 * job->gpus (one node) or all (whole nodes) GPUs free. The harness calls it
 * only when such a set exists. */
cl_result lab19_place(const lab19_fabric *f, const lab19_state *s, const lab19_job *job,
                      int *nodes);

#endif /* COMMLAB_LAB19_H */
