/* lab19.c: lab 19, topology-aware scheduling on a tree fabric.
 *
 * You write Slurm's hostlist compression, the topology.conf of the tree
 * plugin for a fabric, and the placement policy a scheduler uses on that
 * fabric. Read labs/lab19/README.md first; the TODOs below follow its
 * sections. lab19.h states the structures. Build with `make lab19`, grade
 * with `./grade lab19`.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab19.h"

cl_result lab19_hostlist(const char *const *names, int n, char *out, size_t cap)
{
    // TODO(lab19) 1: Slurm's hostlist (handout section 1). A name is a prefix
    //   and a numeric suffix; names that share a prefix go into one bracket of
    //   ranges, and a range keeps the width of its zero-padded numbers. The
    //   names come in any order; the expression must name exactly them and be
    //   no longer than Slurm's own.
    (void)names, (void)n;
    if (cap)
        out[0] = '\0';
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab19_topology_conf(const lab19_fabric *f, char *out, size_t cap)
{
    // TODO(lab19) 2: the tree plugin's topology.conf (handout section 2): one
    //   line per switch; a leaf lists its nodes, a switch above the leaves
    //   lists the switches below it, each as a hostlist (TODO 1).
    (void)f;
    if (cap)
        out[0] = '\0';
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab19_place(const lab19_fabric *f, const lab19_state *s, const lab19_job *job, int *nodes)
{
    // TODO(lab19) 3: the placement policy (handout section 3). Choose
    //   job->nodes nodes that fit the job: as few leaf switches as the job's
    //   size allows, and leave the idle GPUs and nodes as little scattered as
    //   you can for the jobs still to come.
    (void)f, (void)s, (void)job, (void)nodes;
    return CL_ERR_NOT_IMPLEMENTED;
}
