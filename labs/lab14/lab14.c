/* lab14.c: InfiniBand routing and fat trees: build fabrics, route them, prove them
 * deadlock-free, load them, and place a job on one.
 *
 * Read labs/lab14/README.md first; lab14.h has the types. Fill in the TODOs in
 * order. Your functions run in their own program on a 1 MiB stack: take large
 * arrays from malloc. */
#include <stdlib.h>
#include <string.h>

#include "lab14.h"

/* --- helpers every part may use ---------------------------------------------------------- */

static inline void clear_fabric(lab14_fabric *f, int nhosts, int nnodes)
{
    memset(f, 0, sizeof *f);
    f->nhosts = nhosts;
    f->nnodes = nnodes;
    for (int a = 0; a < LAB14_MAX_NODES; a++)
        for (int p = 0; p < LAB14_MAX_PORTS; p++)
            f->link[a][p] = (lab14_end){-1, -1};
}

static inline void cable(lab14_fabric *f, int a, int pa, int b, int pb)
{
    f->link[a][pa] = (lab14_end){b, pb};
    f->link[b][pb] = (lab14_end){a, pa};
}

/* ========================================================================================= */
/* TODO 1: fabrics                                                                            */
/* ========================================================================================= */

cl_result lab14_build_fat_tree(int k, lab14_fabric *f)
{
    // TODO(lab14) 1a: the k-ary fat tree: hosts, edge, aggregation and core switches,
    // numbered and cabled as section 1 of the handout says; levels 0..3.
    (void)k;
    (void)f;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab14_build_leaf_spine(int leaves, int hosts_per_leaf, int spines, int uplinks,
                                 lab14_fabric *f)
{
    // TODO(lab14) 1b: the leaf-spine: hosts under each leaf, the leaf's uplinks spread
    // over the spines as section 1 says (uplink j goes to spine j mod spines).
    (void)leaves;
    (void)hosts_per_leaf;
    (void)spines;
    (void)uplinks;
    (void)f;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab14_build_rail(int sus, int nodes_per_su, int rails, int spines, lab14_fabric *f,
                           int *hca)
{
    // TODO(lab14) 1c: the rail-optimised fabric is a leaf-spine with one leaf per unit
    // and rail; say where HCA r of every server is (hca[]).
    (void)sus;
    (void)nodes_per_su;
    (void)rails;
    (void)spines;
    (void)f;
    (void)hca;
    return CL_ERR_NOT_IMPLEMENTED;
}

/* ========================================================================================= */
/* TODO 2: routes                                                                             */
/* ========================================================================================= */

cl_result lab14_route_dmodk(const lab14_fabric *f, lab14_routes *r)
{
    // TODO(lab14) 2a: D-mod-K. Destination d climbs from its leaf by the up port
    // floor(d / W_l) mod u_l at level l; every route to d meets that path and follows it
    // down. Fill r->out for every switch and host (section 2).
    (void)f;
    (void)r;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab14_route_updown(const lab14_fabric *f, int root, lab14_routes *r)
{
    // TODO(lab14) 2b: up*-down* from root: rank the switches by hops from the root, call
    // the end of a cable nearer the root (then the smaller node) its up end, and route
    // every switch to every host by the rule of section 2 (down first, then up).
    (void)f;
    (void)root;
    (void)r;
    return CL_ERR_NOT_IMPLEMENTED;
}

/* ========================================================================================= */
/* TODO 3: deadlock freedom                                                                   */
/* ========================================================================================= */

cl_result lab14_deadlock_free(const lab14_fabric *f, const lab14_routes *r, int *acyclic,
                              int *cycle, int *len)
{
    // TODO(lab14) 3: follow every route (every ordered pair of hosts), record each
    // dependency "channel b is used right after channel a", and search the graph for a
    // cycle; report one if there is (section 3).
    (void)f;
    (void)r;
    (void)cycle;
    *acyclic = -1;
    *len = 0;
    return CL_ERR_NOT_IMPLEMENTED;
}

/* ========================================================================================= */
/* TODO 4: link loads                                                                         */
/* ========================================================================================= */

int lab14_pattern_flows(int pattern, int shift, const int *hosts, int n, double bytes,
                        lab14_flow *out, int max)
{
    // TODO(lab14) 4a: the flows of a ring, a shift or an AlltoAll over hosts[], in the
    // order section 4 gives.
    (void)pattern;
    (void)shift;
    (void)hosts;
    (void)n;
    (void)bytes;
    (void)out;
    (void)max;
    return 0;
}

cl_result lab14_link_loads(const lab14_fabric *f, const lab14_routes *r, const lab14_flow *fl,
                           int n, double *load)
{
    // TODO(lab14) 4b: walk every flow's route and add its bytes to each channel it
    // uses; a route that does not arrive is CL_ERR_INVALID.
    (void)f;
    (void)r;
    (void)fl;
    (void)n;
    (void)load;
    return CL_ERR_NOT_IMPLEMENTED;
}

/* ========================================================================================= */
/* TODO 5: the plan                                                                           */
/* ========================================================================================= */

cl_result lab14_plan(const lab14_fabric *f, const lab14_job *job, int *order, lab14_routes *r)
{
    // TODO(lab14) 5: choose job->servers free servers and their ring order, and the
    // tables, so that the job's ring flows share no channel with each other or with the
    // other jobs' flows (section 5). Start from your routes of TODO 2.
    (void)f;
    (void)job;
    (void)order;
    (void)r;
    return CL_ERR_NOT_IMPLEMENTED;
}
