/* sim_paths.c: flows on explicit paths through the flow engine. */
#include "sim_paths.h"

#include <math.h>
#include <stdlib.h>

#include "sim_engine.h"

cl_result cl_sim_paths_run(const cl_sim_graph *g, const cl_sim_path_flow *f, int n,
                           double *finish_s)
{
    for (int i = 0; i < n; i++) {
        if (!(f[i].bytes >= 0) || !isfinite(f[i].bytes) || !(f[i].latency_s >= 0) ||
            !isfinite(f[i].latency_s) || f[i].nlinks < 0) {
            cl_set_error("flow %d: size %g, latency %g: not a finite non-negative number", i,
                         f[i].bytes, f[i].latency_s);
            return CL_ERR_INVALID;
        }
        for (int k = 0; k < f[i].nlinks; k++)
            if (f[i].links[k] < 0 || f[i].links[k] >= g->nl) {
                cl_set_error("flow %d: link %d is not a link of the graph (0..%d)", i,
                             f[i].links[k], g->nl - 1);
                return CL_ERR_INVALID;
            }
    }
    cl_sim_engine e;
    cl_result rc = cl_sim_engine_init(&e, g, 1.0);
    int *done = malloc(((size_t)n + 1) * sizeof *done);
    if (rc == CL_OK && !done)
        rc = CL_ERR_NOMEM;
    /* Every flow is added before the first step: ids are never compacted, and
     * a flow's id is its index. */
    for (int i = 0; rc == CL_OK && i < n; i++)
        if (cl_sim_engine_add(&e, f[i].links, f[i].nlinks, f[i].bytes, f[i].latency_s, 0, i) != i)
            rc = CL_ERR_NOMEM;
    int left = n;
    while (rc == CL_OK && left > 0) {
        int k = cl_sim_engine_step(&e, INFINITY, done, n);
        if (k < 0) {
            cl_set_error("%d flow(s) can never finish: a link on their path has no bandwidth",
                         left);
            rc = CL_ERR_BACKEND;
            break;
        }
        for (int j = 0; j < k; j++)
            finish_s[e.f[done[j]].tag] = e.now;
        left -= k;
    }
    free(done);
    cl_sim_engine_free(&e);
    return rc;
}
