/* sim_channels.c: NCCL's ring search (speed tables, reservations, budget) and concurrent channels.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_channels.h"
#include "sim_maxmin.h"

#define GBPS         1e9
#define EPS          1e-9
#define SEARCH_STEPS (1 << 14) /* NCCL_SEARCH_TIMEOUT: steps of the search at one speed */

/* NVIDIA/nccl v2.21.5 src/graph/search.cc. */
static const double intra[] = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
static const double inter_[] = {48, 30, 28, 24, 20, 18,  15,  12,   10,  9,
                                7,  6,  5,  4,  3,  2.4, 1.2, 0.24, 0.12};
static const double intra90[] = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
static const double inter90[] = {48, 45, 42, 40, 30,  24,  22,   20,  17.5,
                                 15, 12, 6,  3,  2.4, 1.2, 0.24, 0.12};

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

int cl_sim_channel_speeds(int sm, int inter, const double **out)
{
    if (sm >= 90) {
        *out = inter ? inter90 : intra90;
        return inter ? LEN(inter90) : LEN(intra90);
    }
    *out = inter ? inter_ : intra;
    return inter ? LEN(inter_) : LEN(intra);
}

double cl_sim_channel_cap(int sm, int inter)
{
    const double *s;
    cl_sim_channel_speeds(sm, inter, &s);
    return s[0];
}

double cl_sim_channels_speed(const cl_sim_topo_net *net, const cl_sim_channels *c)
{
    if (c->n < 1 || c->k < 2)
        return 0;
    int nl = net->g.nl;
    int *load = calloc((size_t)nl + 1, sizeof *load);
    if (!load)
        return 0;
    for (int r = 0; r < c->n; r++)
        for (int i = 0; i < c->k; i++) {
            int a = c->ring[r][i], b = c->ring[r][(i + 1) % c->k];
            for (int h = 0; h < net->npath[a][b]; h++)
                load[net->path[a][b][h]]++;
        }
    double s = c->cap > 0 ? c->cap : INFINITY;
    for (int l = 0; l < nl; l++)
        if (load[l] && cl_sim_topo_link_gbps(net, l) / load[l] < s)
            s = cl_sim_topo_link_gbps(net, l) / load[l];
    free(load);
    return isinf(s) ? 0 : s;
}

int cl_sim_channels_worst_path(const cl_sim_topo_net *net, const cl_sim_channels *c)
{
    int worst = CL_SIM_PATH_LOC;
    for (int r = 0; r < c->n; r++)
        for (int i = 0; i < c->k && c->k > 1; i++) {
            int t = net->path_type[c->ring[r][i]][c->ring[r][(i + 1) % c->k]];
            worst = t > worst ? t : worst;
        }
    return worst;
}

void cl_sim_channels_dup(int sm, int *n, double *speed)
{
    if (*n == 0 || *speed < 25.0 || (sm > 80 && *speed < 50.0 && *n > 4))
        return;
    int dup = 2 * *n < CL_SIM_CHANNELS_MAX ? 2 * *n : CL_SIM_CHANNELS_MAX;
    *speed /= (dup + *n - 1) / *n; /* DIVUP(dup, n) */
    *n = dup;
}

/* --- the search ----------------------------------------------------------------------------- */

typedef struct search {
    const cl_sim_topo_net *net;
    const int *m;     /* members */
    int k, max, type; /* hops of path types above `type` are not tried */
    double speed;
    double *rem; /* GB/s left on every link */
    int cur[CL_SIM_CHANNELS_MAX][CL_SIM_TOPO_MAX_GPUS];
    int best[CL_SIM_CHANNELS_MAX][CL_SIM_TOPO_MAX_GPUS];
    int nbest;
    long steps;
} search;

/* Reserve (sign +1) or release (-1) the speed on the route a -> b; a
 * reservation that does not fit is undone and returns 0 (followPath). */
static int reserve(search *s, int a, int b, int sign)
{
    const cl_sim_topo_net *net = s->net;
    int n = net->npath[a][b];
    for (int h = 0; h < n; h++) {
        int l = net->path[a][b][h];
        s->rem[l] -= sign * s->speed;
        if (sign > 0 && s->rem[l] < -EPS) {
            for (int j = h; j >= 0; j--)
                s->rem[net->path[a][b][j]] += s->speed;
            return 0;
        }
    }
    return 1;
}

static double spare(const search *s, int a, int b)
{
    double m = INFINITY;
    for (int h = 0; h < s->net->npath[a][b]; h++)
        m = fmin(m, s->rem[s->net->path[a][b][h]]);
    return m;
}

static int grow(search *s, int c, int depth, unsigned long long used);

/* Ring c is closed: keep the set if it has the most channels so far, then
 * look for ring c + 1 from the first member. Returns 1 when the search ends. */
static int next_ring(search *s, int c)
{
    if (c + 1 > s->nbest) {
        s->nbest = c + 1;
        memcpy(s->best, s->cur, sizeof s->cur);
    }
    if (c + 1 == s->max)
        return 1;
    s->cur[c + 1][0] = s->m[0];
    return grow(s, c + 1, 1, 1ull);
}

/* Extend ring c at position depth (used: bit i for member i taken). */
static int grow(search *s, int c, int depth, unsigned long long used)
{
    if (--s->steps < 0)
        return 1;
    int v = s->cur[c][depth - 1];
    if (depth == s->k) {
        if (s->net->path_type[v][s->cur[c][0]] > s->type || !reserve(s, v, s->cur[c][0], +1))
            return 0;
        int done = next_ring(s, c);
        reserve(s, v, s->cur[c][0], -1);
        return done;
    }
    int cand[CL_SIM_TOPO_MAX_GPUS], nc = 0;
    double sp[CL_SIM_TOPO_MAX_GPUS];
    for (int i = 0; i < s->k; i++) {
        if (used & (1ull << i))
            continue;
        if (s->net->path_type[v][s->m[i]] > s->type)
            continue;
        double x = spare(s, v, s->m[i]);
        if (x < s->speed - EPS)
            continue;
        /* most spare bandwidth first, so that later channels still find room */
        int j = nc++;
        for (; j > 0 && x > sp[j - 1] + EPS; j--) {
            cand[j] = cand[j - 1];
            sp[j] = sp[j - 1];
        }
        cand[j] = i;
        sp[j] = x;
    }
    for (int j = 0; j < nc; j++) {
        int w = s->m[cand[j]];
        if (!reserve(s, v, w, +1))
            continue;
        s->cur[c][depth] = w;
        int done = grow(s, c, depth + 1, used | (1ull << cand[j]));
        reserve(s, v, w, -1);
        if (done)
            return 1;
    }
    return 0;
}

cl_result cl_sim_channels_search(const cl_sim_topo_net *net, const int *members, int k, int sm,
                                 int max_channels, cl_sim_channels *out)
{
    memset(out, 0, sizeof *out);
    unsigned long long seen = 0;
    if (k < 1 || k > net->ngpus || max_channels < 1 || max_channels > CL_SIM_CHANNELS_MAX) {
        cl_set_error("channels over %d of %d GPUs, at most %d: out of range", k, net->ngpus,
                     max_channels);
        return CL_ERR_INVALID;
    }
    int inter = 0;
    for (int i = 0; i < k; i++) {
        if (members[i] < 0 || members[i] >= net->ngpus || (seen & (1ull << members[i]))) {
            cl_set_error("GPU %d is not a distinct GPU of the net", members[i]);
            return CL_ERR_INVALID;
        }
        seen |= 1ull << members[i];
        inter |= members[i] / net->gpus_per_node != members[0] / net->gpus_per_node;
    }
    out->k = k;
    out->cap = cl_sim_channel_cap(sm, inter);
    if (k < 2)
        return CL_OK;
    /* The members' own order first, as NCCL tries the PCI order first. */
    out->n = 1;
    memcpy(out->ring[0], members, (size_t)k * sizeof *members);
    out->speed = cl_sim_channels_speed(net, out);
    double best = out->speed, max_bw = 0;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++)
            if (i != j)
                max_bw = fmax(max_bw, cl_sim_topo_path_gbps(net, members[i], members[j]));
    const double *speeds;
    int ns = cl_sim_channel_speeds(sm, inter, &speeds);
    search *s = calloc(1, sizeof *s);
    double *rem = malloc(((size_t)net->g.nl + 1) * sizeof *rem);
    if (!s || !rem) {
        free(s);
        free(rem);
        return CL_ERR_NOMEM;
    }
    /* The most a set can move: the smallest bandwidth out of a member. */
    double bound = INFINITY;
    for (int i = 0; i < k; i++) {
        double out_bw = 0;
        int v = net->gpu_v[members[i]];
        for (int e = net->g.adj_off[v]; e < net->g.adj_off[v + 1]; e++)
            out_bw += net->g.l[net->g.adj[e]].bw / 1e9;
        bound = fmin(bound, out_bw);
    }
    /* As NCCL: at each speed, the fastest path type first, then relaxed. */
    int lo = CL_SIM_PATH_NET, hi = CL_SIM_PATH_LOC;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++)
            if (i != j) {
                int t = net->path_type[members[i]][members[j]];
                lo = t < lo ? t : lo;
                hi = t > hi ? t : hi;
            }
    for (int i = 0; i < ns && best < bound * (1 - EPS); i++) {
        if (speeds[i] > max_bw + EPS || speeds[i] * max_channels <= best * (1 + EPS))
            continue;
        for (int type = lo; type <= hi && best < bound * (1 - EPS); type++) {
            s->net = net;
            s->m = members;
            s->k = k;
            s->max = max_channels;
            s->type = type;
            s->speed = speeds[i];
            s->rem = rem;
            s->nbest = 0;
            s->steps = SEARCH_STEPS;
            for (int l = 0; l < net->g.nl; l++)
                rem[l] = cl_sim_topo_link_gbps(net, l);
            s->cur[0][0] = members[0];
            grow(s, 0, 1, 1ull);
            if (s->nbest * speeds[i] > best * (1 + EPS)) {
                best = s->nbest * speeds[i];
                out->n = s->nbest;
                out->speed = speeds[i];
                for (int c = 0; c < s->nbest; c++)
                    memcpy(out->ring[c], s->best[c], (size_t)k * sizeof(int));
            }
        }
    }
    free(s);
    free(rem);
    return CL_OK;
}

/* --- channels at once ------------------------------------------------------------------------- */

cl_result cl_sim_channels_busbw(const cl_sim_topo_net *net, const cl_sim_channels *const *sets,
                                int nsets, double *busbw)
{
    int nf = 0, plen = 0;
    for (int i = 0; i < nsets; i++) {
        busbw[i] = 0;
        if (sets[i]->k < 2)
            continue;
        nf += sets[i]->n;
        for (int r = 0; r < sets[i]->n; r++)
            for (int h = 0; h < sets[i]->k; h++) {
                int a = sets[i]->ring[r][h], b = sets[i]->ring[r][(h + 1) % sets[i]->k];
                plen += net->npath[a][b];
            }
    }
    if (nf == 0)
        return CL_OK;
    int *owner = malloc((size_t)nf * sizeof *owner), *off = malloc(((size_t)nf + 1) * sizeof *off);
    int *path = malloc(((size_t)plen + 1) * sizeof *path),
        *aoff = malloc(((size_t)nf + 1) * sizeof *aoff);
    int *apath = malloc(((size_t)plen + 1) * sizeof *apath),
        *live = malloc((size_t)nf * sizeof *live);
    double *left = malloc((size_t)nf * sizeof *left), *cap = malloc((size_t)nf * sizeof *cap);
    double *acap = malloc((size_t)nf * sizeof *acap), *rate = malloc((size_t)nf * sizeof *rate);
    double *end = calloc((size_t)nsets, sizeof *end),
           *bw = malloc(((size_t)net->g.nl + 1) * sizeof *bw);
    cl_result rc = CL_OK;
    if (!owner || !off || !path || !aoff || !apath || !live || !left || !cap || !acap || !rate ||
        !end || !bw) {
        rc = CL_ERR_NOMEM;
        goto done;
    }
    for (int l = 0; l < net->g.nl; l++)
        bw[l] = net->g.l[l].bw;
    int f = 0;
    off[0] = 0;
    for (int i = 0; i < nsets; i++) {
        const cl_sim_channels *c = sets[i];
        for (int r = 0; r < c->n && c->k >= 2; r++, f++) {
            owner[f] = i;
            left[f] = GBPS; /* each channel moves the same amount */
            cap[f] = c->cap > 0 ? c->cap * GBPS : 0;
            off[f + 1] = off[f];
            for (int h = 0; h < c->k; h++) {
                int a = c->ring[r][h], b = c->ring[r][(h + 1) % c->k];
                for (int j = 0; j < net->npath[a][b]; j++)
                    path[off[f + 1]++] = net->path[a][b][j];
            }
            live[f] = f;
        }
    }
    int nlive = nf;
    double now = 0;
    while (nlive > 0) {
        aoff[0] = 0;
        for (int j = 0; j < nlive; j++) {
            int g = live[j], len = off[g + 1] - off[g];
            memcpy(apath + aoff[j], path + off[g], (size_t)len * sizeof *path);
            aoff[j + 1] = aoff[j] + len;
            acap[j] = cap[g];
        }
        CL_TRY(cl_sim_maxmin(net->g.nl, bw, nlive, aoff, apath, acap, rate));
        double dt = INFINITY;
        for (int j = 0; j < nlive; j++)
            if (rate[j] > 0)
                dt = fmin(dt, left[live[j]] / rate[j]);
        if (isinf(dt)) {
            cl_set_error("a channel crosses a link without bandwidth");
            rc = CL_ERR_INVALID;
            goto done;
        }
        now += dt;
        int w = 0;
        for (int j = 0; j < nlive; j++) {
            int g = live[j];
            left[g] -= rate[j] * dt;
            if (left[g] <= GBPS * 1e-12) {
                end[owner[g]] = now;
                continue;
            }
            live[w++] = g;
        }
        nlive = w;
    }
    for (int i = 0; i < nsets; i++)
        if (sets[i]->k >= 2 && sets[i]->n > 0 && end[i] > 0)
            busbw[i] = sets[i]->n / end[i]; /* n x 1 GB / seconds */
done:
    free(owner), free(off), free(path), free(aoff), free(apath), free(live);
    free(left), free(cap), free(acap), free(rate), free(end), free(bw);
    return rc;
}
