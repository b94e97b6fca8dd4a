/* sim_engine.h: the discrete-event flow engine: flows share links max-min fairly in virtual time.
 *
 * A flow is added at the engine's current time with a path, a byte count and
 * a start latency. It first waits out its latency (the per-hop and
 * per-protocol delay, using no bandwidth), then moves its bytes at the rate
 * the max-min solver gives it. Rates are recomputed whenever the set of
 * transmitting flows changes, so between two events every rate is constant
 * and virtual time jumps straight from event to event.
 *
 * Determinism: events at the same time are reported in flow-id order, and
 * nothing depends on memory addresses or the wall clock.
 */
#ifndef COMMLAB_SIM_ENGINE_H
#define COMMLAB_SIM_ENGINE_H

#include "result.h"
#include "sim_graph.h"
#include "sim_maxmin.h"

typedef struct cl_sim_flow {
    int path_off, path_len; /* into the engine's path pool */
    double bytes_left;      /* as of t_upd (kept lazily: rates are constant in between) */
    double t_upd;
    double t_active;        /* time the latency phase ends */
    double rate;            /* bytes/s while transmitting */
    double cap;             /* per-flow rate limit, <= 0 none */
    long tag;               /* owner's cookie */
    int mark;               /* solve stamp */
    int live_pos;           /* index in live[] */
    unsigned ver;           /* bumped when its next event changes: older heap entries are stale */
    unsigned char state;    /* CL_SIM_FLOW_* */
    unsigned char on_links; /* listed in the link incidence (transmitting) */
} cl_sim_flow;

/* A flow's next event (end of latency or completion) in the engine's heap. */
typedef struct cl_sim_event {
    double t;
    int id;
    unsigned ver;
} cl_sim_event;

enum { CL_SIM_FLOW_LATENCY, CL_SIM_FLOW_ACTIVE, CL_SIM_FLOW_DONE };

typedef struct cl_sim_lflows {
    int *id, n, cap;
} cl_sim_lflows;

typedef struct cl_sim_engine {
    const cl_sim_graph *g;
    double now; /* seconds of virtual time */
    cl_sim_flow *f;
    int nf, cap_f;
    int *pool; /* concatenated paths */
    int npool, cap_pool;
    int *live; /* ids of flows not yet done */
    int nlive, cap_live;
    int dirty;   /* rates must be recomputed */
    double *bw;  /* link capacities (scaled copy of the graph's) */
    long events; /* completions so far */
    long solves; /* max-min re-solves so far */
    /* solver input and workspace, kept between solves */
    int *s_off, *s_path;
    double *s_cap, *s_rate;
    int cap_s, cap_sp;
    cl_sim_maxmin_ws ws;
    /* incremental solves: the transmitting flows of every link, the links whose
     * set changed since the last solve; only flows connected to them re-solve */
    struct cl_sim_lflows *lf; /* per link */
    int *lmark;               /* per link: solve stamp */
    int *dl, ndl, cap_dl;     /* dirty links */
    int *sf, cap_sf;          /* flows of the current solve */
    int stamp;
    cl_sim_event *ev; /* min-heap of next events by (time, flow id) */
    int nev, cap_ev;
} cl_sim_engine;

/* Start an engine at time 0 over graph g; bw_scale multiplies every link's
 * bandwidth (a protocol efficiency). Returns CL_ERR_NOMEM on failure. */
cl_result cl_sim_engine_init(cl_sim_engine *e, const cl_sim_graph *g, double bw_scale);

/* Add a flow starting now. Returns its id (>= 0), or -1 when out of memory.
 * Ids are stable while flows are live; once more than half of the table is
 * done flows, an add may compact it, renumbering the live flows (in the same
 * order) and reusing the ids of done ones: read what you need of a completed
 * flow (its tag) before adding more. */
int cl_sim_engine_add(cl_sim_engine *e, const int *path, int len, double bytes, double latency,
                      double cap, long tag);

/* Advance to the next completion, or to t_limit if nothing completes before it.
 * Completed flow ids are written to done[] (at most max_done; the rest complete
 * at the same time and are returned by the next call). Returns the number of
 * completed flows, 0 when t_limit was reached first, or -1 when there is
 * nothing left to do and t_limit is infinite. */
int cl_sim_engine_step(cl_sim_engine *e, double t_limit, int *done, int max_done);

/* Run until every flow is done. Returns CL_OK or CL_ERR_NOMEM. */
cl_result cl_sim_engine_run(cl_sim_engine *e);

/* Forget all flows (done or not) and keep the time. This function can't fail. */
void cl_sim_engine_clear(cl_sim_engine *e);

void cl_sim_engine_free(cl_sim_engine *e);

#endif /* COMMLAB_SIM_ENGINE_H */
