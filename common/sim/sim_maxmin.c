/* sim_maxmin.c: progressive filling with a heap of link shares, on the links the flows use.
 *
 * Only the links that some flow crosses take part: a stamp table maps a
 * graph link to a compact local index, so a solve costs O(P log L) for P
 * path entries over L distinct links, independent of the size of the graph.
 * A link's share (remaining capacity / unfrozen flows) never decreases while
 * filling goes on (every freeze takes at most the current level, which is the
 * smallest share), so stale heap entries are simply pushed again with their
 * fresh share when they surface.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_graph.h"
#include "sim_maxmin.h"

typedef struct hent {
    double key;
    int link;
} hent;

static int hless(const hent *a, const hent *b)
{
    return a->key < b->key || (a->key == b->key && a->link < b->link);
}

static void hpush(cl_sim_maxmin_ws *w, double key, int link)
{
    hent *h = w->heap;
    int i = w->nheap++;
    h[i] = (hent){key, link};
    while (i > 0) {
        int p = (i - 1) / 2;
        if (!hless(&h[i], &h[p]))
            break;
        hent t = h[i];
        h[i] = h[p];
        h[p] = t;
        i = p;
    }
}

static hent hpop(cl_sim_maxmin_ws *w)
{
    hent *h = w->heap, top = h[0];
    h[0] = h[--w->nheap];
    for (int i = 0;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < w->nheap && hless(&h[l], &h[m]))
            m = l;
        if (r < w->nheap && hless(&h[r], &h[m]))
            m = r;
        if (m == i)
            break;
        hent t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
    return top;
}

typedef struct capped {
    double cap;
    int flow;
} capped;

#define CAPS ((capped *)w->caps)

static int cmp_capped(const void *a, const void *b)
{
    const capped *x = a, *y = b;
    if (x->cap < y->cap)
        return -1;
    if (x->cap > y->cap)
        return 1;
    return x->flow - y->flow;
}

/* Grow every array of one group to the same need, so one capacity describes them all. */
static int grow_group(void **arrs[], const size_t *elem, int n, int *cap, int need)
{
    for (int i = 0; i < n; i++) {
        int c = *cap;
        if (cl_sim_grow(arrs[i], &c, need, elem[i]))
            return -1;
    }
    if (need > *cap) {
        int c = *cap ? *cap * 2 : 64;
        while (c < need)
            c *= 2;
        *cap = c; /* what cl_sim_grow gave each of them */
    }
    return 0;
}

static cl_result reserve(cl_sim_maxmin_ws *w, int nlinks, int nflows, int npath)
{
    if (nlinks > w->cap_map) {
        int old = w->cap_map;
        if (cl_sim_grow((void **)&w->map, &w->cap_map, nlinks, sizeof *w->map))
            return CL_ERR_NOMEM;
        for (int i = old; i < w->cap_map; i++)
            w->map[i] = -1;
    }
    void **l[] = {(void **)&w->lid, (void **)&w->rem,   (void **)&w->cnt, (void **)&w->inc_off,
                  (void **)&w->inc, (void **)&w->lpath, (void **)&w->heap};
    size_t le[] = {sizeof *w->lid, sizeof *w->rem,   sizeof *w->cnt, sizeof *w->inc_off,
                   sizeof *w->inc, sizeof *w->lpath, sizeof(hent)};
    void **f[] = {(void **)&w->frozen, (void **)&w->caps};
    size_t fe[] = {sizeof *w->frozen, sizeof(capped)};
    if (grow_group(l, le, 7, &w->cap_l, npath + 2) || grow_group(f, fe, 2, &w->cap_f, nflows + 1))
        return CL_ERR_NOMEM;
    return CL_OK;
}

cl_result cl_sim_maxmin_ws_solve(cl_sim_maxmin_ws *w, int nlinks, const double *link_bw, int nflows,
                                 const int *path_off, const int *path, const double *flow_cap,
                                 double *rate)
{
    if (nflows <= 0)
        return CL_OK;
    int np = path_off[nflows];
    for (int k = 0; k < np; k++)
        if (path[k] < 0 || path[k] >= nlinks)
            return CL_ERR_INVALID;
    CL_CHECK(reserve(w, nlinks, nflows, np));

    /* Compact the links: local index per distinct link, in order of first use. */
    int nl = 0;
    for (int k = 0; k < np; k++) {
        int g = path[k];
        if (w->map[g] < 0) {
            w->map[g] = nl;
            w->lid[nl] = g;
            w->cnt[nl] = 0;
            nl++;
        }
        w->lpath[k] = w->map[g];
        w->cnt[w->lpath[k]]++;
    }
    for (int l = 0; l < nl; l++)
        w->map[w->lid[l]] = -1; /* leave the stamp table clean for the next solve */
    /* Incidence link -> flows (counting sort by link). */
    w->inc_off[0] = 0;
    for (int l = 0; l < nl; l++) {
        w->inc_off[l + 1] = w->inc_off[l] + w->cnt[l];
        w->rem[l] = link_bw[w->lid[l]];
    }
    for (int l = 0; l < nl; l++)
        w->cnt[l] = w->inc_off[l];
    for (int f = 0; f < nflows; f++)
        for (int k = path_off[f]; k < path_off[f + 1]; k++)
            w->inc[w->cnt[w->lpath[k]]++] = f;
    for (int l = 0; l < nl; l++)
        w->cnt[l] = w->inc_off[l + 1] - w->inc_off[l];

    memset(w->frozen, 0, (size_t)nflows);
    int ncap = 0, left = nflows;
    for (int f = 0; f < nflows; f++) {
        if (flow_cap && flow_cap[f] > 0)
            CAPS[ncap++] = (capped){flow_cap[f], f};
        else if (path_off[f] == path_off[f + 1]) {
            w->frozen[f] = 1; /* no link, no cap */
            rate[f] = CL_SIM_RATE_UNBOUNDED;
            left--;
        }
    }
    if (ncap > 1)
        qsort(w->caps, (size_t)ncap, sizeof(capped), cmp_capped);
    w->nheap = 0;
    for (int l = 0; l < nl; l++)
        hpush(w, w->rem[l] / w->cnt[l], l);

    int icap = 0;
    while (left > 0) {
        /* the smallest current share among links that still carry unfrozen flows */
        double share = CL_SIM_RATE_UNBOUNDED;
        int link = -1;
        while (w->nheap > 0) {
            hent e = ((hent *)w->heap)[0];
            int l = e.link;
            if (w->cnt[l] <= 0) {
                hpop(w);
                continue;
            }
            double s = w->rem[l] / w->cnt[l];
            if (s > e.key * (1 + 1e-12) + 1e-300) { /* stale: it grew since */
                hpop(w);
                hpush(w, s, l);
                continue;
            }
            share = s;
            link = l;
            break;
        }
        while (icap < ncap && w->frozen[CAPS[icap].flow])
            icap++;
        if (icap < ncap && CAPS[icap].cap <= share) {
            int f = CAPS[icap++].flow;
            double r = CAPS[icap - 1].cap;
            w->frozen[f] = 1;
            rate[f] = r;
            left--;
            for (int k = path_off[f]; k < path_off[f + 1]; k++) {
                int l = w->lpath[k];
                w->rem[l] = w->rem[l] > r ? w->rem[l] - r : 0;
                w->cnt[l]--;
            }
            continue;
        }
        if (link < 0)
            break; /* cannot happen: unfrozen flows without links or caps */
        hpop(w);
        double level = share;
        for (int k = w->inc_off[link]; k < w->inc_off[link + 1]; k++) {
            int f = w->inc[k];
            if (w->frozen[f])
                continue;
            w->frozen[f] = 1;
            rate[f] = level;
            left--;
            for (int j = path_off[f]; j < path_off[f + 1]; j++) {
                int l = w->lpath[j];
                w->rem[l] = w->rem[l] > level ? w->rem[l] - level : 0;
                w->cnt[l]--;
            }
        }
    }
    return CL_OK;
}

void cl_sim_maxmin_ws_free(cl_sim_maxmin_ws *w)
{
    free(w->map);
    free(w->lid);
    free(w->rem);
    free(w->cnt);
    free(w->inc_off);
    free(w->inc);
    free(w->lpath);
    free(w->heap);
    free(w->frozen);
    free(CAPS);
    memset(w, 0, sizeof *w);
}

cl_result cl_sim_maxmin(int nlinks, const double *link_bw, int nflows, const int *path_off,
                        const int *path, const double *flow_cap, double *rate)
{
    cl_sim_maxmin_ws w = {0};
    cl_result rc =
        cl_sim_maxmin_ws_solve(&w, nlinks, link_bw, nflows, path_off, path, flow_cap, rate);
    cl_sim_maxmin_ws_free(&w);
    return rc;
}
