/* sim_engine.c: event loop over flows: latency phase, then max-min shared transmission. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_engine.h"
#include "sim_maxmin.h"

cl_result cl_sim_engine_init(cl_sim_engine *e, const cl_sim_graph *g, double bw_scale)
{
    memset(e, 0, sizeof *e);
    e->g = g;
    e->bw = malloc(((size_t)g->nl + 1) * sizeof *e->bw);
    if (!e->bw)
        return CL_ERR_NOMEM;
    for (int i = 0; i < g->nl; i++)
        e->bw[i] = g->l[i].bw * bw_scale;
    return CL_OK;
}

int cl_sim_engine_add(cl_sim_engine *e, const int *path, int len, double bytes, double latency,
                      double cap, long tag)
{
    if (cl_sim_grow((void **)&e->f, &e->cap_f, e->nf + 1, sizeof *e->f) ||
        cl_sim_grow((void **)&e->pool, &e->cap_pool, e->npool + len, sizeof *e->pool) ||
        cl_sim_grow((void **)&e->live, &e->cap_live, e->nlive + 1, sizeof *e->live))
        return -1;
    memcpy(e->pool + e->npool, path, (size_t)len * sizeof *path);
    cl_sim_flow *f = &e->f[e->nf];
    *f = (cl_sim_flow){.path_off = e->npool, .path_len = len, .bytes_left = bytes,
                       .t_active = e->now + latency, .cap = cap, .tag = tag,
                       .state = CL_SIM_FLOW_LATENCY};
    e->npool += len;
    e->live[e->nlive++] = e->nf;
    if (latency <= 0) {
        f->state = CL_SIM_FLOW_ACTIVE;
        e->dirty = 1;
    }
    return e->nf++;
}

/* Recompute rates of the transmitting flows. */
static cl_result solve(cl_sim_engine *e)
{
    int n = 0, plen = 0;
    for (int i = 0; i < e->nlive; i++) {
        cl_sim_flow *f = &e->f[e->live[i]];
        if (f->state == CL_SIM_FLOW_ACTIVE) {
            n++;
            plen += f->path_len;
        }
    }
    int *off = malloc(((size_t)n + 1) * sizeof *off);
    int *path = malloc(((size_t)plen + 1) * sizeof *path);
    double *cap = malloc(((size_t)n + 1) * sizeof *cap);
    double *rate = malloc(((size_t)n + 1) * sizeof *rate);
    cl_result rc = CL_ERR_NOMEM;
    if (off && path && cap && rate) {
        int j = 0;
        off[0] = 0;
        for (int i = 0; i < e->nlive; i++) {
            cl_sim_flow *f = &e->f[e->live[i]];
            if (f->state != CL_SIM_FLOW_ACTIVE)
                continue;
            memcpy(path + off[j], e->pool + f->path_off, (size_t)f->path_len * sizeof *path);
            cap[j] = f->cap;
            off[j + 1] = off[j] + f->path_len;
            j++;
        }
        rc = cl_sim_maxmin(e->g->nl, e->bw, n, off, path, cap, rate);
        if (rc == CL_OK) {
            j = 0;
            for (int i = 0; i < e->nlive; i++) {
                cl_sim_flow *f = &e->f[e->live[i]];
                if (f->state == CL_SIM_FLOW_ACTIVE)
                    f->rate = rate[j++];
            }
            e->dirty = 0;
        }
    }
    free(off);
    free(path);
    free(cap);
    free(rate);
    return rc;
}

/* Time at which flow f next changes state. */
static double next_time(const cl_sim_engine *e, const cl_sim_flow *f)
{
    if (f->state == CL_SIM_FLOW_LATENCY)
        return f->t_active;
    if (f->bytes_left <= 0)
        return e->now;
    if (f->rate <= 0)
        return INFINITY;
    return e->now + f->bytes_left / f->rate;
}

int cl_sim_engine_step(cl_sim_engine *e, double t_limit, int *done, int max_done)
{
    for (;;) {
        if (e->dirty && solve(e) != CL_OK)
            return -1;
        if (e->nlive == 0) {
            if (isinf(t_limit))
                return -1;
            e->now = t_limit > e->now ? t_limit : e->now;
            return 0;
        }
        double t = INFINITY;
        for (int i = 0; i < e->nlive; i++) {
            double ti = next_time(e, &e->f[e->live[i]]);
            if (ti < t)
                t = ti;
        }
        if (isinf(t) && isinf(t_limit))
            return -1; /* flows that can never finish: a zero-capacity path */
        if (t > t_limit) {
            double dt = t_limit - e->now;
            for (int i = 0; i < e->nlive; i++) {
                cl_sim_flow *f = &e->f[e->live[i]];
                if (f->state == CL_SIM_FLOW_ACTIVE)
                    f->bytes_left -= f->rate * dt;
            }
            e->now = t_limit;
            return 0;
        }
        double dt = t - e->now;
        double tol = 1e-12 * (t > 1e-9 ? t : 1e-9);
        int ndone = 0, w = 0, activated = 0;
        for (int i = 0; i < e->nlive; i++) {
            int id = e->live[i];
            cl_sim_flow *f = &e->f[id];
            double ti = next_time(e, f);
            if (f->state == CL_SIM_FLOW_ACTIVE)
                f->bytes_left -= f->rate * dt;
            if (ti <= t + tol) {
                if (f->state == CL_SIM_FLOW_LATENCY) {
                    f->state = CL_SIM_FLOW_ACTIVE;
                    activated = 1;
                    if (f->bytes_left > 0) {
                        e->live[w++] = id;
                        continue;
                    }
                }
                if (ndone < max_done) {
                    f->state = CL_SIM_FLOW_DONE;
                    f->bytes_left = 0;
                    done[ndone++] = id;
                    continue;
                }
            }
            e->live[w++] = id;
        }
        e->nlive = w;
        e->now = t;
        if (ndone > 0 || activated)
            e->dirty = 1;
        if (ndone > 0) {
            e->events += ndone;
            return ndone;
        }
    }
}

cl_result cl_sim_engine_run(cl_sim_engine *e)
{
    int buf[256];
    while (e->nlive > 0) {
        int n = cl_sim_engine_step(e, INFINITY, buf, 256);
        if (n < 0)
            return e->nlive ? CL_ERR_BACKEND : CL_OK;
    }
    return CL_OK;
}

void cl_sim_engine_clear(cl_sim_engine *e)
{
    e->nf = 0;
    e->npool = 0;
    e->nlive = 0;
    e->dirty = 0;
}

void cl_sim_engine_free(cl_sim_engine *e)
{
    free(e->f);
    free(e->pool);
    free(e->live);
    free(e->bw);
    memset(e, 0, sizeof *e);
}
