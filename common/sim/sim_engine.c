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

/* ---- the event heap: (time, flow id), stale entries skipped by version ---- */

static int ev_less(const cl_sim_event *a, const cl_sim_event *b)
{
    return a->t < b->t || (a->t == b->t && a->id < b->id);
}

static int ev_push(cl_sim_engine *e, double t, int id)
{
    if (cl_sim_grow((void **)&e->ev, &e->cap_ev, e->nev + 1, sizeof *e->ev))
        return -1;
    cl_sim_event *h = e->ev;
    int i = e->nev++;
    h[i] = (cl_sim_event){t, id, e->f[id].ver};
    while (i > 0) {
        int p = (i - 1) / 2;
        if (!ev_less(&h[i], &h[p]))
            break;
        cl_sim_event x = h[i];
        h[i] = h[p];
        h[p] = x;
        i = p;
    }
    return 0;
}

static void ev_pop(cl_sim_engine *e)
{
    cl_sim_event *h = e->ev;
    h[0] = h[--e->nev];
    for (int i = 0;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < e->nev && ev_less(&h[l], &h[m]))
            m = l;
        if (r < e->nev && ev_less(&h[r], &h[m]))
            m = r;
        if (m == i)
            break;
        cl_sim_event x = h[i];
        h[i] = h[m];
        h[m] = x;
        i = m;
    }
}

static int ev_valid(const cl_sim_engine *e, const cl_sim_event *v)
{
    return v->id < e->nf && e->f[v->id].ver == v->ver && e->f[v->id].state != CL_SIM_FLOW_DONE;
}

/* The time of flow id's next event (inf: a rate of 0 never completes). */
static double next_time(const cl_sim_engine *e, int id)
{
    const cl_sim_flow *f = &e->f[id];
    if (f->state == CL_SIM_FLOW_LATENCY)
        return f->t_active;
    if (f->bytes_left <= 0)
        return f->t_upd;
    if (f->rate <= 0)
        return INFINITY;
    return f->t_upd + f->bytes_left / f->rate;
}

/* Re-file flow id's next event after a change (new state or rate). */
static int refile(cl_sim_engine *e, int id)
{
    e->f[id].ver++;
    double t = next_time(e, id);
    return isinf(t) ? 0 : ev_push(e, t, id);
}

/* Bring flow id's byte count to time t at its current rate. */
static void advance(cl_sim_engine *e, int id, double t)
{
    cl_sim_flow *f = &e->f[id];
    if (f->state == CL_SIM_FLOW_ACTIVE && t > f->t_upd) {
        f->bytes_left -= f->rate * (t - f->t_upd);
        if (f->bytes_left < 0)
            f->bytes_left = 0;
    }
    f->t_upd = t;
}

/* Rebuild the heap from the live flows (after a compaction, or when stale
 * entries outnumber the live ones). */
static int ev_rebuild(cl_sim_engine *e)
{
    e->nev = 0;
    for (int i = 0; i < e->nlive; i++) {
        int id = e->live[i];
        double t = next_time(e, id);
        if (!isinf(t) && ev_push(e, t, id))
            return -1;
    }
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

/* Flow id begins to transmit now: it joins its links (and the next solve), or,
 * without links, moves at its cap (a copy inside one GPU: at once). */
static int start(cl_sim_engine *e, int id)
{
    cl_sim_flow *f = &e->f[id];
    f->t_upd = e->now;
    f->rate = 0;
    if (f->path_len == 0) {
        f->rate = f->cap > 0 ? f->cap : CL_SIM_RATE_UNBOUNDED;
        return refile(e, id);
    }
    if (f->bytes_left <= 0)
        return refile(e, id); /* nothing to move: done now */
    f->ver++;                 /* no event until the solve gives it a rate */
    return attach(e, id);
}

/* Drop the flows that are done: live flows move to the front (keeping their
 * order, so ties still break the same way) with their paths, and the link
 * lists follow. A simulation that never goes quiet (ranks drifting apart in a
 * long ring) then holds only what is in flight, not every flow it ever ran. */
static cl_result compact(cl_sim_engine *e)
{
    int *newid = malloc(((size_t)e->nf + 1) * sizeof *newid);
    int *pool = malloc(((size_t)e->npool + 1) * sizeof *pool);
    if (!newid || !pool) {
        free(newid);
        free(pool);
        return CL_ERR_NOMEM;
    }
    for (int i = 0; i < e->nf; i++)
        newid[i] = -1;
    for (int i = 0; i < e->nlive; i++)
        newid[e->live[i]] = 0;
    int n = 0, np = 0;
    for (int id = 0; id < e->nf; id++) /* ascending ids keep the id order of live flows */
        if (newid[id] == 0) {
            cl_sim_flow f = e->f[id];
            memcpy(pool + np, e->pool + f.path_off, (size_t)f.path_len * sizeof *pool);
            f.path_off = np;
            np += f.path_len;
            newid[id] = n;
            e->f[n++] = f;
        }
    for (int i = 0; i < e->nlive; i++)
        e->live[i] = newid[e->live[i]];
    for (int id = 0; id < n; id++) { /* every listed flow is live: rename it in its links */
        const cl_sim_flow *f = &e->f[id];
        if (!f->on_links)
            continue;
        for (int k = 0; k < f->path_len; k++) {
            cl_sim_lflows *L = &e->lf[pool[f->path_off + k]];
            for (int j = 0; j < L->n; j++)
                if (L->id[j] >= 0 && L->id[j] < e->nf && newid[L->id[j]] == id && L->id[j] != id) {
                    L->id[j] = ~id; /* renamed: marked until every list is done */
                    break;
                }
        }
    }
    for (int id = 0; id < n; id++) {
        const cl_sim_flow *f = &e->f[id];
        for (int k = 0; f->on_links && k < f->path_len; k++) {
            cl_sim_lflows *L = &e->lf[pool[f->path_off + k]];
            for (int j = 0; j < L->n; j++)
                if (L->id[j] < 0)
                    L->id[j] = ~L->id[j];
        }
    }
    memcpy(e->pool, pool, (size_t)np * sizeof *pool);
    e->npool = np;
    e->nf = n;
    for (int i = 0; i < e->nlive; i++)
        e->f[e->live[i]].live_pos = i;
    free(newid);
    free(pool);
    return ev_rebuild(e) ? CL_ERR_NOMEM : CL_OK;
}

int cl_sim_engine_add(cl_sim_engine *e, const int *path, int len, double bytes, double latency,
                      double cap, long tag)
{
    if ((e->nf + 1 > e->cap_f || e->npool + len > e->cap_pool) && e->nf - e->nlive > e->nf / 2 &&
        compact(e) != CL_OK)
        return -1;
    if (cl_sim_grow((void **)&e->f, &e->cap_f, e->nf + 1, sizeof *e->f) ||
        cl_sim_grow((void **)&e->pool, &e->cap_pool, e->npool + len, sizeof *e->pool) ||
        cl_sim_grow((void **)&e->live, &e->cap_live, e->nlive + 1, sizeof *e->live))
        return -1;
    memcpy(e->pool + e->npool, path, (size_t)len * sizeof *path);
    cl_sim_flow *f = &e->f[e->nf];
    *f = (cl_sim_flow){.path_off = e->npool,
                       .path_len = len,
                       .bytes_left = bytes,
                       .t_upd = e->now,
                       .t_active = e->now + latency,
                       .cap = cap,
                       .tag = tag,
                       .live_pos = e->nlive,
                       .state = CL_SIM_FLOW_LATENCY};
    e->npool += len;
    e->live[e->nlive++] = e->nf;
    int id = e->nf++;
    if (latency <= 0) {
        f->state = CL_SIM_FLOW_ACTIVE;
        if (start(e, id))
            return -1;
    } else if (ev_push(e, f->t_active, id)) {
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
    if (n == 1) { /* alone on its links: the slowest of them, or its cap */
        int id = e->sf[0];
        cl_sim_flow *f = &e->f[id];
        double r = CL_SIM_RATE_UNBOUNDED;
        for (int k = 0; k < f->path_len; k++) {
            double b = e->bw[e->pool[f->path_off + k]];
            r = b < r ? b : r;
        }
        if (f->cap > 0 && f->cap < r)
            r = f->cap;
        advance(e, id, e->now);
        f->rate = r;
        e->dirty = 0;
        e->solves++;
        return refile(e, id) ? CL_ERR_NOMEM : CL_OK;
    }
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
    for (int j = 0; j < n; j++) {
        int id = e->sf[j];
        advance(e, id, e->now);
        e->f[id].rate = e->s_rate[j];
        if (refile(e, id))
            return CL_ERR_NOMEM;
    }
    e->dirty = 0;
    e->solves++;
    return CL_OK;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Remove flow id from live[] (it is done). */
static void unlive(cl_sim_engine *e, int id)
{
    int pos = e->f[id].live_pos, last = e->live[--e->nlive];
    e->live[pos] = last;
    e->f[last].live_pos = pos;
}

int cl_sim_engine_step(cl_sim_engine *e, double t_limit, int *done, int max_done)
{
    for (;;) {
        if (e->dirty && solve(e) != CL_OK)
            return -1;
        if (e->nev > 4 * e->nlive + 1024 && ev_rebuild(e))
            return -1;
        while (e->nev > 0 && !ev_valid(e, &e->ev[0]))
            ev_pop(e);
        if (e->nev == 0) {
            if (isinf(t_limit))
                return -1; /* nothing left, or flows that can never finish (0 capacity) */
            e->now = t_limit > e->now ? t_limit : e->now;
            return 0;
        }
        double t = e->ev[0].t;
        if (t > t_limit) {
            e->now = t_limit; /* byte counts follow lazily */
            return 0;
        }
        double tol = 1e-12 * (t > 1e-9 ? t : 1e-9);
        int ndone = 0, changed = 0;
        while (e->nev > 0 && e->ev[0].t <= t + tol) {
            cl_sim_event v = e->ev[0];
            ev_pop(e);
            if (!ev_valid(e, &v))
                continue;
            cl_sim_flow *f = &e->f[v.id];
            if (f->state == CL_SIM_FLOW_LATENCY) {
                f->state = CL_SIM_FLOW_ACTIVE;
                e->now = t > e->now ? t : e->now;
                if (start(e, v.id))
                    return -1;
                changed = 1;
                continue;
            }
            if (ndone == max_done) { /* the rest of this instant: next call */
                if (ev_push(e, v.t, v.id))
                    return -1;
                break;
            }
            done[ndone++] = v.id;
        }
        e->now = t > e->now ? t : e->now;
        for (int i = 0; i < ndone; i++) {
            int id = done[i];
            cl_sim_flow *f = &e->f[id];
            if (detach(e, id))
                return -1;
            f->state = CL_SIM_FLOW_DONE;
            f->bytes_left = 0;
            f->t_upd = e->now;
            f->ver++;
            unlive(e, id);
        }
        if (ndone > 1)
            qsort(done, (size_t)ndone, sizeof *done, cmp_int);
        if (ndone > 0 || changed)
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
    e->nev = 0;
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
    free(e->ev);
    memset(e, 0, sizeof *e);
}
