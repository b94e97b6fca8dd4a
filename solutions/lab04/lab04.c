/* lab04.c: lab 04, NCCL principles: ring channels and the double binary tree.
 *
 * You search ring channels that maximise the AllReduce bus bandwidth of a
 * recorded server (every link a ring crosses is shared by all channels that
 * cross it, and one channel moves at most the machine's channel cap), build
 * NCCL's double binary tree, and export your channels in NCCL's graph XML so
 * that NCCL_GRAPH_FILE can load them. Read labs/lab04/README.md first; the
 * TODOs below are in the order of its sections. Build with `make lab04`,
 * grade with `./grade lab04`.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lab04.h"

/* BEGIN SOLUTION */
static int is_permutation(int n, const int *ring)
{
    int seen[LAB04_MAX_TREE] = {0};
    for (int i = 0; i < n; i++) {
        if (ring[i] < 0 || ring[i] >= n || seen[ring[i]])
            return 0;
        seen[ring[i]] = 1;
    }
    return 1;
}

/* Per-channel speed of nrings rings sharing the links evenly: the busiest
 * link (uses / bandwidth) sets it, and no channel beats the cap. */
static double channel_speed(const lab04_machine *m, const int rings[][LAB04_MAX_GPUS], int nrings)
{
    int load[LAB04_MAX_LINKS] = {0}, G = m->ngpus;
    for (int r = 0; r < nrings; r++)
        for (int i = 0; i < G && G > 1; i++) {
            int a = rings[r][i], b = rings[r][(i + 1) % G];
            for (int k = 0; k < m->npath[a][b]; k++)
                load[m->path[a][b][k]]++;
        }
    double s = m->channel_cap_gbps;
    for (int l = 0; l < m->nlinks; l++)
        if (load[l] && m->link_gbps[l] / load[l] < s)
            s = m->link_gbps[l] / load[l];
    return s;
}

/* NCCL's path types, fastest first. */
static const char *const types[] = {"LOC", "NVL", "NVB", "PIX", "PXB", "PHB", "SYS"};
#define NTYPES 7

static int type_rank(const char *t)
{
    for (int i = 0; i < NTYPES; i++)
        if (!strcmp(t, types[i]))
            return i;
    return NTYPES - 1;
}
/* END SOLUTION */

cl_result lab04_ring_bottleneck(const lab04_machine *m, const int *ring, double *gbps)
{
    /* BEGIN SOLUTION */
    if (!is_permutation(m->ngpus, ring)) {
        cl_set_error("not a ring over all %d GPUs", m->ngpus);
        return CL_ERR_INVALID;
    }
    int rings[1][LAB04_MAX_GPUS];
    memcpy(rings[0], ring, (size_t)m->ngpus * sizeof *ring);
    *gbps = channel_speed(m, (const int(*)[LAB04_MAX_GPUS])rings, 1);
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab04) 1: the bandwidth of one ring alone.
    //   Check that ring is a permutation of 0..ngpus-1 (else cl_set_error + CL_ERR_INVALID).
    //   Walk the route of every edge of the ring (the last GPU back to the first too),
    //   count how often each link is used, and take the slowest share; one channel
    //   never moves more than m->channel_cap_gbps.
    (void)m, (void)ring, (void)gbps;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* BEGIN SOLUTION */
/* The search at one speed and one path type: channels are found one after
 * the other, each reserving `speed` GB/s on every link it crosses (NCCL's
 * followPath); a failure to close ring c backtracks into ring c-1, within a
 * step budget (NCCL's search timeout), and the most rings found are kept. */
typedef struct search {
    const lab04_machine *m;
    int G, max, type;
    double speed;
    double rem[LAB04_MAX_LINKS];
    int cur[LAB04_MAX_CHANNELS][LAB04_MAX_GPUS];
    int best[LAB04_MAX_CHANNELS][LAB04_MAX_GPUS];
    int nbest;
    long budget;
} search;

/* Reserve (sign +1) or release (-1) the speed on the route a -> b; a
 * reservation that does not fit is undone and returns 0. */
static int reserve(search *s, int a, int b, int sign)
{
    const lab04_machine *m = s->m;
    for (int k = 0; k < m->npath[a][b]; k++) {
        int l = m->path[a][b][k];
        s->rem[l] -= sign * s->speed;
        if (sign > 0 && s->rem[l] < -1e-9) {
            for (int j = k; j >= 0; j--)
                s->rem[m->path[a][b][j]] += s->speed;
            return 0;
        }
    }
    return 1;
}

static double spare(const search *s, int a, int b)
{
    double x = INFINITY;
    for (int k = 0; k < s->m->npath[a][b]; k++)
        x = fmin(x, s->rem[s->m->path[a][b][k]]);
    return x;
}

static int usable(const search *s, int a, int b)
{
    return type_rank(s->m->path_type[a][b]) <= s->type && spare(s, a, b) >= s->speed - 1e-9;
}

static int grow(search *s, int c, int depth, int *used);

/* Ring c is closed: keep the set if it is the largest so far, then look for ring c+1. */
static int next_ring(search *s, int c)
{
    if (c + 1 > s->nbest) {
        s->nbest = c + 1;
        memcpy(s->best, s->cur, sizeof s->cur);
    }
    if (c + 1 == s->max)
        return 1;
    int used[LAB04_MAX_GPUS] = {0};
    s->cur[c + 1][0] = 0;
    used[0] = 1;
    return grow(s, c + 1, 1, used);
}

/* Extend ring c at position depth; returns 1 when the search is over. */
static int grow(search *s, int c, int depth, int *used)
{
    int G = s->G, v = s->cur[c][depth - 1];
    if (--s->budget < 0)
        return 1;
    if (depth == G) {
        if (!usable(s, v, s->cur[c][0]) || !reserve(s, v, s->cur[c][0], +1))
            return 0;
        int done = next_ring(s, c);
        reserve(s, v, s->cur[c][0], -1);
        return done;
    }
    int cand[LAB04_MAX_GPUS], nc = 0;
    for (int w = 0; w < G; w++)
        if (!used[w] && usable(s, v, w))
            cand[nc++] = w;
    /* most spare bandwidth first, so that later channels still find room */
    for (int i = 1; i < nc; i++)
        for (int j = i; j > 0 && spare(s, v, cand[j]) > spare(s, v, cand[j - 1]) + 1e-9; j--) {
            int t = cand[j];
            cand[j] = cand[j - 1];
            cand[j - 1] = t;
        }
    for (int i = 0; i < nc; i++) {
        int w = cand[i];
        if (!reserve(s, v, w, +1))
            continue;
        used[w] = 1;
        s->cur[c][depth] = w;
        int done = grow(s, c, depth + 1, used);
        used[w] = 0;
        reserve(s, v, w, -1);
        if (done)
            return 1;
    }
    return 0;
}

/* NCCL's per-channel speeds (v2.21.5 src/graph/search.cc). */
static const double speeds70[] = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
static const double speeds90[] = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
/* END SOLUTION */

cl_result lab04_search_rings(const lab04_machine *m, int rings[][LAB04_MAX_GPUS], int max_rings,
                             int *nrings)
{
    /* BEGIN SOLUTION */
    static search s;
    int G = m->ngpus;
    if (max_rings < 1 || max_rings > LAB04_MAX_CHANNELS) {
        cl_set_error("max_rings must be 1..%d", LAB04_MAX_CHANNELS);
        return CL_ERR_INVALID;
    }
    /* The PCI order first, as NCCL tries it: a reference any search must beat. */
    *nrings = 1;
    for (int i = 0; i < G; i++)
        rings[0][i] = i;
    if (G < 2)
        return CL_OK;
    double best = channel_speed(m, (const int(*)[LAB04_MAX_GPUS])rings, 1);
    const double *speeds = m->sm >= 90 ? speeds90 : speeds70;
    int ns = m->sm >= 90 ? (int)(sizeof speeds90 / sizeof *speeds90)
                         : (int)(sizeof speeds70 / sizeof *speeds70);
    for (int i = 0; i < ns; i++) {
        if (speeds[i] > m->channel_cap_gbps || speeds[i] * max_rings <= best * (1 + 1e-9))
            continue;
        /* the fastest routes first; slower path types only when they add channels */
        for (int type = 1; type < NTYPES; type++) {
            s.m = m;
            s.G = G;
            s.max = max_rings;
            s.type = type;
            s.speed = speeds[i];
            s.nbest = 0;
            s.budget = 1 << 14;
            for (int l = 0; l < m->nlinks; l++)
                s.rem[l] = m->link_gbps[l];
            int used[LAB04_MAX_GPUS] = {0};
            s.cur[0][0] = 0;
            used[0] = 1;
            grow(&s, 0, 1, used);
            if (s.nbest * speeds[i] > best * (1 + 1e-9)) {
                best = s.nbest * speeds[i];
                *nrings = s.nbest;
                memcpy(rings, s.best, (size_t)s.nbest * sizeof rings[0]);
            }
        }
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab04) 2: search ring channels as NCCL's search.cc does (handout section 2).
    //   At most max_rings rings, each visiting every GPU once, into rings[][], and their
    //   number in *nrings: the set that gives the highest bus bandwidth when every ring
    //   carries an equal share of the data. Without a search you get one ring in index
    //   order, and that is slow on most machines.
    (void)m, (void)rings, (void)max_rings, (void)nrings;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* BEGIN SOLUTION */
/* NCCL's btree (src/graph/trees.cc): parent and children of rank r among n. */
static void btree(int n, int r, int *u, int *d0, int *d1)
{
    int bit;
    for (bit = 1; bit < n; bit <<= 1)
        if (bit & r)
            break;
    if (r == 0) {
        *u = -1;
        *d0 = -1;
        *d1 = n > 1 ? bit >> 1 : -1;
        return;
    }
    int up = (r ^ bit) | (bit << 1);
    if (up >= n)
        up = r ^ bit;
    *u = up;
    int low = bit >> 1;
    *d0 = low == 0 ? -1 : r - low;
    int down1 = low == 0 ? -1 : r + low;
    while (down1 >= n) {
        down1 = low == 0 ? -1 : r + low;
        low >>= 1;
    }
    *d1 = down1;
}

/* Position p's neighbours in tree 1 (mirror for even n, shift for odd n). */
static void tree1(int n, int p, int *u, int *d0, int *d1)
{
    int v[3];
    if (n % 2 == 1) {
        btree(n, (p - 1 + n) % n, &v[0], &v[1], &v[2]);
        for (int i = 0; i < 3; i++)
            v[i] = v[i] == -1 ? -1 : (v[i] + 1) % n;
    } else {
        btree(n, n - 1 - p, &v[0], &v[1], &v[2]);
        for (int i = 0; i < 3; i++)
            v[i] = v[i] == -1 ? -1 : n - 1 - v[i];
    }
    *u = v[0];
    *d0 = v[1];
    *d1 = v[2];
}
/* END SOLUTION */

cl_result lab04_double_tree(int n, const int *order, lab04_tree *t0, lab04_tree *t1)
{
    /* BEGIN SOLUTION */
    if (n < 1 || n > LAB04_MAX_TREE || !is_permutation(n, order)) {
        cl_set_error("order must be a permutation of 0..%d", n - 1);
        return CL_ERR_INVALID;
    }
    t0->n = t1->n = n;
    for (int p = 0; p < n; p++) {
        int u, d0, d1;
        lab04_tree *t[2] = {t0, t1};
        for (int k = 0; k < 2; k++) {
            if (k == 0)
                btree(n, p, &u, &d0, &d1);
            else
                tree1(n, p, &u, &d0, &d1);
            int g = order[p];
            t[k]->up[g] = u < 0 ? -1 : order[u];
            t[k]->down[g][0] = d0 < 0 ? -1 : order[d0];
            t[k]->down[g][1] = d1 < 0 ? -1 : order[d1];
        }
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab04) 3: NCCL's double binary tree over order[0..n) (handout section 3:
    //   ncclGetBtree, then its mirror or shift). Store every GPU's parent in up[] and its
    //   children in down[][] of t0 and t1 (-1: none). Reject n out of range or an order
    //   that is not a permutation.
    (void)n, (void)order, (void)t0, (void)t1;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* BEGIN SOLUTION */
/* Append to the text; 0 when it no longer fits. */
static int put(char *xml, size_t cap, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(xml + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (n < 0 || *len + (size_t)n + 1 > cap)
        return 0;
    *len += (size_t)n;
    return 1;
}
/* END SOLUTION */

cl_result lab04_write_graph_xml(const lab04_machine *m, const int rings[][LAB04_MAX_GPUS],
                                int nrings, char *xml, size_t cap)
{
    /* BEGIN SOLUTION */
    int G = m->ngpus, worst = 1;
    for (int r = 0; r < nrings; r++)
        for (int i = 0; i < G && G > 1; i++) {
            int t = type_rank(m->path_type[rings[r][i]][rings[r][(i + 1) % G]]);
            worst = t > worst ? t : worst;
        }
    /* ncclTopoDupChannels: fast channels are doubled, each at half the speed. */
    double speed = channel_speed(m, rings, nrings);
    int n = nrings;
    if (speed >= 25.0 && !(m->sm > 80 && speed < 50.0 && nrings > 4)) {
        n = 2 * nrings < LAB04_MAX_CHANNELS ? 2 * nrings : LAB04_MAX_CHANNELS;
        speed /= (n + nrings - 1) / nrings;
    }
    size_t len = 0;
    xml[0] = '\0';
    int ok = put(xml, cap, &len, "<graphs version=\"1\">\n");
    for (int id = 0; id < 2 && ok; id++) {
        ok = put(xml, cap, &len,
                 "  <graph id=\"%d\" pattern=\"%d\" crossnic=\"0\" nchannels=\"%d\" "
                 "speedintra=\"%g\" speedinter=\"%g\" latencyinter=\"0\" typeintra=\"%s\" "
                 "typeinter=\"PIX\" samechannels=\"0\">\n",
                 id, id == 0 ? 4 : 1, n, speed, speed, types[worst]);
        for (int c = 0; c < n && ok; c++) {
            ok = put(xml, cap, &len, "    <channel>\n");
            for (int i = 0; i < G && ok; i++)
                ok = put(xml, cap, &len, "      <gpu dev=\"%#x\"/>\n", rings[c % nrings][i]);
            ok = ok && put(xml, cap, &len, "    </channel>\n");
        }
        ok = ok && put(xml, cap, &len, "  </graph>\n");
    }
    ok = ok && put(xml, cap, &len, "</graphs>\n");
    if (!ok) {
        cl_set_error("the graph file needs more than %zu bytes", cap);
        return CL_ERR_INVALID;
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab04) 4: the graph file NCCL_GRAPH_FILE loads (src/graph/search.cc,
    //   ncclTopoGetXmlFromGraphs writes it; the handout shows its form).
    //   <graphs version="1"> with graph id 0 (ring pattern) and graph id 1 (tree pattern),
    //   the same channels in each, in your rings' order, after NCCL's channel
    //   duplication; speedintra = the GB/s of one channel, typeintra = the slowest path
    //   type your rings use. Write it into xml (at most cap bytes, '\0'-terminated).
    (void)m, (void)rings, (void)nrings, (void)xml, (void)cap;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
