/* driver.c: lab 14's plug-in: fabrics, forwarding tables, deadlock, link loads, placement.
 *
 *   lab14 build    kind=fattree k=8 | kind=leafspine leaves=8 hosts=16 spines=4 uplinks=8
 *                  | kind=rail sus=2 nodes=32 rails=8 spines=8
 *   lab14 route    fabric=FILE algo=dmodk|updown [root=SWITCH]
 *   lab14 deadlock fabric=FILE routes=FILE
 *   lab14 loads    fabric=FILE routes=FILE pattern=ring|shift|alltoall [shift=K] [hosts=all|A-B]
 *   lab14 plan     fabric=FILE job=FILE
 *
 * A fabric is an ibnetdiscover topology file (common/fabric.h); routes files
 * are forwarding tables ("lft SWITCHES HOSTS", then one line of ports per
 * switch); a job file names the servers, their HCAs, the busy ones and the
 * other jobs' flows. Every mode hands the student a fresh copy of its inputs
 * and checks what comes back with the harness's own code: routes are walked,
 * the channel dependency graph is built and searched, loads are recomputed,
 * and a plan's AllReduce is timed by the simulator's flow engine on the
 * student's own routes (common/sim/sim_paths.h).
 *
 * This file holds the student's entries and the lab's table; the modes are in
 * harness_checks.c and harness_plan.c, what they share in harness_fabric.c
 * (lab14_harness.h).
 */
#include "lab14_harness.h"

#ifdef CL_STUDENT_SIDE

static cl_result build(cl_comm *c, void *args)
{
    (void)c;
    build_args *a = args;
    if (a->kind == BUILD_FATTREE)
        return lab14_build_fat_tree(a->p[0], a->f);
    if (a->kind == BUILD_LEAFSPINE)
        return lab14_build_leaf_spine(a->p[0], a->p[1], a->p[2], a->p[3], a->f);
    return lab14_build_rail(a->p[0], a->p[1], a->p[2], a->p[3], a->f, a->hca);
}

static cl_result route(cl_comm *c, void *args)
{
    (void)c;
    route_args *a = args;
    return a->algo == ROUTE_DMODK ? lab14_route_dmodk(a->f, a->r)
                                  : lab14_route_updown(a->f, a->root, a->r);
}

static cl_result deadlock(cl_comm *c, void *args)
{
    (void)c;
    deadlock_args *a = args;
    return lab14_deadlock_free(a->f, a->r, &a->acyclic, a->cycle, &a->len);
}

static cl_result loads(cl_comm *c, void *args)
{
    (void)c;
    loads_args *a = args;
    a->nflows = lab14_pattern_flows(a->pattern, a->shift, a->hosts, a->n, a->bytes, a->flows,
                                    LAB14_MAX_FLOWS);
    if (a->nflows < 0 || a->nflows > LAB14_MAX_FLOWS)
        return CL_ERR_INVALID;
    return lab14_link_loads(a->f, a->r, a->flows, a->nflows, a->load);
}

static cl_result plan(cl_comm *c, void *args)
{
    (void)c;
    plan_args *a = args;
    return lab14_plan(a->f, a->job, a->order, a->r);
}

CL_STUDENT_ENTRIES({"build", build}, {"route", route}, {"deadlock", deadlock}, {"loads", loads},
                   {"plan", plan});

#else

const cl_lab cl_lab_def = {
    .name = "lab14",
    .title = "IB 路由与胖树: fabrics, forwarding tables, deadlock, link loads",
    .arena_bytes = (size_t)96 << 20,
    .modes = (const cl_mode[]){{.name = "build",
                                .help = "your fat tree, leaf-spine or rail fabric (kind=...)",
                                .cases = build_case},
                               {.name = "route",
                                .help = "your forwarding tables of fabric=FILE, checked",
                                .cases = route_case},
                               {.name = "deadlock",
                                .help = "your channel dependency check of routes=FILE",
                                .cases = deadlock_case},
                               {.name = "loads",
                                .help = "your link loads of a pattern on routes=FILE",
                                .cases = loads_case},
                               {.name = "plan",
                                .help = "your placement and routes for job=FILE, timed",
                                .cases = plan_case},
                               {0}},
};

#endif
