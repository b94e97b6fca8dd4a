/* sim_paths.h: time flows along routes the caller chose, on a graph the caller built.
 *
 * cl_sim_predict routes a collective's flows by the system file's rules
 * (sim_route.c). A lab whose student computes the routes (lab14: forwarding
 * tables of a fabric) gives the simulator the paths instead: every flow is a
 * list of link ids of g, a byte count and a start latency, and the flow
 * engine (sim_engine.h) shares every link max-min among the flows crossing
 * it, in virtual time, deterministically.
 */
#ifndef COMMLAB_SIM_PATHS_H
#define COMMLAB_SIM_PATHS_H

#include "result.h"
#include "sim_graph.h"

typedef struct cl_sim_path_flow {
    const int *links; /* link ids of g, in order */
    int nlinks;
    double bytes;
    double latency_s; /* before the first byte moves */
} cl_sim_path_flow;

/* Run flows f[0..n) together from time 0 on g; finish_s[i] gets the time
 * flow i completes. CL_ERR_INVALID for a link id outside g, a negative or
 * non-finite size or latency; CL_ERR_NOMEM; CL_ERR_BACKEND when a flow can
 * never finish (a link of zero bandwidth). */
cl_result cl_sim_paths_run(const cl_sim_graph *g, const cl_sim_path_flow *f, int n,
                           double *finish_s);

#endif /* COMMLAB_SIM_PATHS_H */
