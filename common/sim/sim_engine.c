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
    e->lf = calloc((size_t)g->nl + 1, sizeof *e->lf);
    e->lmark = calloc((size_t)g->nl + 1, sizeof *e->lmark);
    if (!e->lf || !e->lmark)
        return CL_ERR_NOMEM;
    return CL_OK;
}

static int dirty_link(cl_sim_engine *e, int l)
{
    if (e->lmark[l] == -1)
        return 0; /* already listed */
    if (cl_sim_grow((void **)&e->dl, &e->cap_dl, e->ndl + 1, sizeof *e->dl))
        return -1;
    e->dl[e->ndl++] = l;
    e->lmark[l] = -1;
    return 0;
}

/* Flow id starts (attach) or stops (detach) transmitting: update its links' lists. */
static int attach(cl_sim_engine *e, int id)
{
    cl_sim_flow *f = &e->f[id];
    for (int k = 0; k < f->path_len; k++) {
        int l = e->pool[f->path_off + k];
        cl_sim_lflows *L = &e->lf[l];
        if (cl_sim_grow((void **)&L->id, &L->cap, L->n + 1, sizeof *L->id) || dirty_link(e, l))
            return -1;
        L->id[L->n++] = id;
    }
    f->on_links = 1;
    e->dirty = 1;
    return 0;
}

static int detach(cl_sim_engine *e, int id)
{
    cl_sim_flow *f = &e->f[id];
    if (!f->on_links)
        return 0;
    for (int k = 0; k < f->path_len; k++) {
        int l = e->pool[f->path_off + k];
        cl_sim_lflows *L = &e->lf[l];
        for (int i = 0; i < L->n; i++)
            if (L->id[i] == id) {
                L->id[i] = L->id[--L->n];
                break;
            }
        if (dirty_link(e, l))
            return -1;
    }
    f->on_links = 0;
    e->dirty = 1;
    return 0;
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
    *f = (cl_sim_flow){.path_off = e->npool,
                       .path_len = len,
                       .bytes_left = bytes,
                       .t_active = e->now + latency,
                       .cap = cap,
                       .tag = tag,
                       .state = CL_SIM_FLOW_LATENCY};
    e->npool += len;
    e->live[e->nlive++] = e->nf;
    int id = e->nf++;
    if (latency <= 0) {
        f->state = CL_SIM_FLOW_ACTIVE;
        e->dirty = 1;
        if (attach(e, id))
            return -1;
    }
    return id;
}

/* Collect the transmitting flows connected (through shared links) to a dirty
 * link into e->sf; returns their number, or -1 when out of memory. Rates of
 * other flows cannot change: max-min sharing is independent per component. */
static int component(cl_sim_engine *e)
{
    int stamp = ++e->stamp, n = 0;
    if (stamp == -1 || stamp == 0)
        stamp = e->stamp = 1;
    /* links to visit: reuse dl as the queue */
    for (int q = 0; q < e->ndl; q++) {
        int l = e->dl[q];
        e->lmark[l] = stamp;
    }
    for (int q = 0; q < e->ndl; q++) {
        const cl_sim_lflows *L = &e->lf[e->dl[q]];
        for (int i = 0; i < L->n; i++) {
            int id = L->id[i];
            cl_sim_flow *f = &e->f[id];
            if (f->mark == stamp)
                continue;
            f->mark = stamp;
            if (cl_sim_grow((void **)&e->sf, &e->cap_sf, n + 1, sizeof *e->sf))
                return -1;
            e->sf[n++] = id;
            for (int k = 0; k < f->path_len; k++) {
                int l = e->pool[f->path_off + k];
                if (e->lmark[l] != stamp) {
                    e->lmark[l] = stamp;
                    if (cl_sim_grow((void **)&e->dl, &e->cap_dl, e->ndl + 1, sizeof *e->dl))
                        return -1;
                    e->dl[e->ndl++] = l;
                }
            }
        }
    }
    e->ndl = 0;
    return n;
}

/* Recompute the rates of the flows whose share may have changed. */
static cl_result solve(cl_sim_engine *e)
{
    int n = component(e);
    if (n < 0)
        return CL_ERR_NOMEM;
    int plen = 0;
    for (int j = 0; j < n; j++)
        plen += e->f[e->sf[j]].path_len;
    if (n + 1 > e->cap_s) {
        int c = e->cap_s * 2 > n + 1 ? e->cap_s * 2 : n + 64;
        int *o = realloc(e->s_off, (size_t)c * sizeof *o);
        if (o)
            e->s_off = o;
        double *k = o ? realloc(e->s_cap, (size_t)c * sizeof *k) : NULL;
        if (k)
            e->s_cap = k;
        double *r = k ? realloc(e->s_rate, (size_t)c * sizeof *r) : NULL;
        if (!r)
            return CL_ERR_NOMEM;
        e->s_rate = r;
        e->cap_s = c;
    }
    if (cl_sim_grow((void **)&e->s_path, &e->cap_sp, plen + 1, sizeof *e->s_path))
        return CL_ERR_NOMEM;
    e->s_off[0] = 0;
    for (int j = 0; j < n; j++) {
        const cl_sim_flow *f = &e->f[e->sf[j]];
        memcpy(e->s_path + e->s_off[j], e->pool + f->path_off,
               (size_t)f->path_len * sizeof *e->s_path);
        e->s_cap[j] = f->cap;
        e->s_off[j + 1] = e->s_off[j] + f->path_len;
    }
    cl_result rc = cl_sim_maxmin_ws_solve(&e->ws, e->g->nl, e->bw, n, e->s_off, e->s_path, e->s_cap,
                                          e->s_rate);
    if (rc != CL_OK)
        return rc;
    for (int j = 0; j < n; j++)
        e->f[e->sf[j]].rate = e->s_rate[j];
    /* flows on no link at all (copies inside a GPU) */
    for (int i = 0; i < e->nlive; i++) {
        cl_sim_flow *f = &e->f[e->live[i]];
        if (f->state == CL_SIM_FLOW_ACTIVE && f->path_len == 0)
            f->rate = f->cap > 0 ? f->cap : CL_SIM_RATE_UNBOUNDED;
    }
    e->dirty = 0;
    e->solves++;
    return CL_OK;
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
                        if (attach(e, id))
                            return -1;
                        e->live[w++] = id;
                        continue;
                    }
                }
                if (ndone < max_done) {
                    if (detach(e, id))
                        return -1;
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
    /* Retire every flow that completes at an event at once: one re-solve per
     * distinct completion time, however many flows end there. */
    int *buf = malloc(((size_t)e->nlive + 1) * sizeof *buf);
    if (!buf)
        return CL_ERR_NOMEM;
    cl_result rc = CL_OK;
    while (e->nlive > 0) {
        int n = cl_sim_engine_step(e, INFINITY, buf, e->nlive);
        if (n < 0) {
            rc = e->nlive ? CL_ERR_BACKEND : CL_OK;
            break;
        }
    }
    free(buf);
    return rc;
}

void cl_sim_engine_clear(cl_sim_engine *e)
{
    for (int i = 0; i < e->nlive; i++) { /* forget the incidence of flows still listed */
        cl_sim_flow *f = &e->f[e->live[i]];
        for (int k = 0; f->on_links && k < f->path_len; k++)
            e->lf[e->pool[f->path_off + k]].n = 0;
    }
    for (int q = 0; q < e->ndl; q++)
        e->lmark[e->dl[q]] = 0;
    e->ndl = 0;
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
    free(e->s_off);
    free(e->s_cap);
    free(e->s_rate);
    free(e->s_path);
    cl_sim_maxmin_ws_free(&e->ws);
    if (e->lf && e->g)
        for (int l = 0; l < e->g->nl; l++)
            free(e->lf[l].id);
    free(e->lf);
    free(e->lmark);
    free(e->dl);
    free(e->sf);
    memset(e, 0, sizeof *e);
}
