/* sim_maxmin.h: max-min fair sharing of link bandwidth among flows (progressive filling).
 *
 * Every flow follows a path of directed links. All unfrozen flows grow at the
 * same rate until a link is full (its remaining capacity divided by its
 * unfrozen flows is the smallest) or a flow reaches its own cap; those flows
 * are frozen at that level and filling goes on with the rest. The result is
 * the unique max-min fair allocation (Bertsekas & Gallager, Data Networks,
 * 6.5.2).
 */
#ifndef COMMLAB_SIM_MAXMIN_H
#define COMMLAB_SIM_MAXMIN_H

#include "result.h"

/* Rate of a flow whose path is empty and has no cap (a copy inside one GPU). */
#define CL_SIM_RATE_UNBOUNDED 1e18

/* Reusable scratch space of the solver (zero-initialise; free with
 * cl_sim_maxmin_ws_free). Repeated solves with one workspace allocate nothing
 * once it has grown to the largest problem seen. */
typedef struct cl_sim_maxmin_ws {
    int *map; /* graph link -> local index, -1 between solves */
    int cap_map;
    int *lid, *cnt, *inc_off;
    double *rem;
    int cap_l;
    int *inc, *lpath;
    void *heap; /* (share, link) entries, at most one per link */
    int nheap;
    unsigned char *frozen;
    void *caps;
    int cap_f;
} cl_sim_maxmin_ws;

/* Compute max-min fair rates.
 *   link_bw[nlinks]            capacity of each link (bytes/s)
 *   path_off[nflows + 1], path flow f crosses links path[path_off[f] .. path_off[f+1])
 *   flow_cap[nflows] or NULL   a per-flow limit; <= 0 means none
 *   rate[nflows]               output (bytes/s)
 * Returns CL_OK, CL_ERR_INVALID for a link id out of range, CL_ERR_NOMEM. */
cl_result cl_sim_maxmin(int nlinks, const double *link_bw, int nflows, const int *path_off,
                        const int *path, const double *flow_cap, double *rate);

/* cl_sim_maxmin with a workspace kept between calls (the flow engine's). */
cl_result cl_sim_maxmin_ws_solve(cl_sim_maxmin_ws *ws, int nlinks, const double *link_bw,
                                 int nflows, const int *path_off, const int *path,
                                 const double *flow_cap, double *rate);

void cl_sim_maxmin_ws_free(cl_sim_maxmin_ws *ws);

#endif /* COMMLAB_SIM_MAXMIN_H */
