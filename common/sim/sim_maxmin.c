/* sim_maxmin.c: progressive filling over a link-to-flow incidence built per call. */
#include <stdlib.h>

#include "sim_maxmin.h"

typedef struct capped {
    double cap;
    int flow;
} capped;

static int cmp_capped(const void *a, const void *b)
{
    const capped *x = a, *y = b;
    if (x->cap < y->cap)
        return -1;
    if (x->cap > y->cap)
        return 1;
    return x->flow - y->flow;
}

/* Freeze flow f at rate r: take r from every link on its path. */
static void freeze(int f, double r, const int *path_off, const int *path, double *rem, int *cnt,
                   double *rate, unsigned char *frozen)
{
    frozen[f] = 1;
    rate[f] = r;
    for (int k = path_off[f]; k < path_off[f + 1]; k++) {
        int l = path[k];
        rem[l] -= r;
        if (rem[l] < 0)
            rem[l] = 0;
        cnt[l]--;
    }
}

cl_result cl_sim_maxmin(int nlinks, const double *link_bw, int nflows, const int *path_off,
                        const int *path, const double *flow_cap, double *rate)
{
    if (nflows <= 0)
        return CL_OK;
    for (int k = 0; k < path_off[nflows]; k++)
        if (path[k] < 0 || path[k] >= nlinks)
            return CL_ERR_INVALID;

    double *rem = malloc((size_t)nlinks * sizeof *rem);
    int *cnt = calloc((size_t)nlinks, sizeof *cnt);
    int *inc_off = calloc((size_t)nlinks + 1, sizeof *inc_off);
    int *inc = malloc(((size_t)path_off[nflows] + 1) * sizeof *inc);
    int *active = malloc(((size_t)nlinks + 1) * sizeof *active);
    unsigned char *frozen = calloc((size_t)nflows, 1);
    capped *caps = malloc((size_t)nflows * sizeof *caps);
    cl_result rc = CL_OK;
    if (!rem || !cnt || !inc_off || !inc || !active || !frozen || !caps) {
        rc = CL_ERR_NOMEM;
        goto out;
    }

    /* Incidence link -> flows. */
    for (int k = 0; k < path_off[nflows]; k++)
        inc_off[path[k] + 1]++;
    for (int l = 0; l < nlinks; l++)
        inc_off[l + 1] += inc_off[l];
    for (int l = 0; l < nlinks; l++)
        cnt[l] = inc_off[l]; /* fill cursor for now */
    for (int f = 0; f < nflows; f++)
        for (int k = path_off[f]; k < path_off[f + 1]; k++)
            inc[cnt[path[k]]++] = f;
    int nactive = 0;
    for (int l = 0; l < nlinks; l++) {
        cnt[l] = inc_off[l + 1] - inc_off[l];
        rem[l] = link_bw[l];
        if (cnt[l] > 0)
            active[nactive++] = l;
    }

    int ncap = 0;
    int left = nflows;
    for (int f = 0; f < nflows; f++) {
        if (flow_cap && flow_cap[f] > 0)
            caps[ncap++] = (capped){flow_cap[f], f};
        else if (path_off[f] == path_off[f + 1]) {
            frozen[f] = 1; /* no link, no cap */
            rate[f] = CL_SIM_RATE_UNBOUNDED;
            left--;
        }
    }
    qsort(caps, (size_t)ncap, sizeof *caps, cmp_capped);
    int icap = 0;

    while (left > 0) {
        double level = CL_SIM_RATE_UNBOUNDED;
        int w = 0;
        for (int i = 0; i < nactive; i++) {
            int l = active[i];
            if (cnt[l] <= 0)
                continue;
            active[w++] = l;
            double share = rem[l] / cnt[l];
            if (share < level)
                level = share;
        }
        nactive = w;
        while (icap < ncap && frozen[caps[icap].flow])
            icap++;
        if (icap < ncap && caps[icap].cap < level)
            level = caps[icap].cap;
        double lim = level * (1 + 1e-12) + 1e-300;
        int before = left;
        while (icap < ncap && caps[icap].cap <= lim) {
            int f = caps[icap++].flow;
            if (!frozen[f]) {
                freeze(f, caps[icap - 1].cap, path_off, path, rem, cnt, rate, frozen);
                left--;
            }
        }
        for (int i = 0; i < nactive; i++) {
            int l = active[i];
            if (cnt[l] <= 0 || rem[l] / cnt[l] > lim)
                continue;
            for (int k = inc_off[l]; k < inc_off[l + 1]; k++) {
                int f = inc[k];
                if (!frozen[f]) {
                    freeze(f, level, path_off, path, rem, cnt, rate, frozen);
                    left--;
                }
            }
        }
        if (left == before) /* cannot happen; guard against an endless loop */
            break;
    }
out:
    free(rem);
    free(cnt);
    free(inc_off);
    free(inc);
    free(active);
    free(frozen);
    free(caps);
    return rc;
}
