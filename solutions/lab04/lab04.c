/* lab04.c: lab 04, NCCL principles: ring channels and the double binary tree.
 *
 * You search ring channels that maximise the AllReduce bus bandwidth of a
 * recorded server (every link a ring crosses is shared by all channels that
 * cross it), build NCCL's double binary tree, and export your channels in
 * NCCL's graph XML so that NCCL_GRAPH_FILE can load them. Read
 * labs/lab04/README.md first; the TODOs below are in the order of its
 * sections. Build with `make lab04`, grade with `./grade lab04`.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lab04.h"

/* BEGIN SOLUTION */
static int is_permutation(int n, const int *ring)
{
    int seen[LAB04_MAX_GPUS] = {0};
    for (int i = 0; i < n; i++) {
        if (ring[i] < 0 || ring[i] >= n || seen[ring[i]])
            return 0;
        seen[ring[i]] = 1;
    }
    return 1;
}

/* Uses of every link by nrings rings; returns the number of links. */
static int link_loads(const cl_sim_topo_net *net, const int rings[][LAB04_MAX_GPUS], int nrings,
                      int *load)
{
    int G = net->ngpus, nl = net->g.nl;
    memset(load, 0, (size_t)nl * sizeof *load);
    for (int r = 0; r < nrings; r++)
        for (int i = 0; i < G && G > 1; i++) {
            int a = rings[r][i], b = rings[r][(i + 1) % G];
            for (int k = 0; k < net->npath[a][b]; k++)
                load[net->path[a][b][k]]++;
        }
    return nl;
}

/* Bandwidth of each channel when nrings share the links evenly: the busiest
 * link (uses / bandwidth) sets it. */
static double channel_speed(const cl_sim_topo_net *net, const int rings[][LAB04_MAX_GPUS],
                            int nrings)
{
    static int load[1 << 16];
    int nl = link_loads(net, rings, nrings, load);
    double worst = 0;
    for (int l = 0; l < nl; l++)
        if (load[l] && load[l] / cl_sim_topo_link_gbps(net, l) > worst)
            worst = load[l] / cl_sim_topo_link_gbps(net, l);
    return worst > 0 ? 1 / worst : 0;
}
/* END SOLUTION */

cl_result lab04_ring_bottleneck(const cl_sim_topo_net *net, const int *ring, double *gbps)
{
    /* BEGIN SOLUTION */
    if (!is_permutation(net->ngpus, ring)) {
        cl_set_error("not a ring over all %d GPUs", net->ngpus);
        return CL_ERR_INVALID;
    }
    int rings[1][LAB04_MAX_GPUS];
    memcpy(rings[0], ring, (size_t)net->ngpus * sizeof *ring);
    *gbps = channel_speed(net, (const int(*)[LAB04_MAX_GPUS])rings, 1);
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab04) 1: the bandwidth of one ring alone.
    //   Check that ring is a permutation of 0..ngpus-1 (else cl_set_error + CL_ERR_INVALID).
    //   For every edge a -> b of the ring (the last GPU back to the first) walk its route
    //   net->path[a][b][0 .. net->npath[a][b]) and count how often each link is used.
    //   *gbps = min over used links of cl_sim_topo_link_gbps(net, l) / uses(l).
    (void)net, (void)ring, (void)gbps;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* BEGIN SOLUTION */
/* The search state: channels are found one after the other, each reserving
 * `speed` GB/s on every link it crosses (NCCL's followPath); a failure to
 * close ring c backtracks into ring c-1, within a step budget (NCCL's search
 * timeouts), and the most rings found at this speed are kept. */
typedef struct search {
    const cl_sim_topo_net *net;
    int G, max;
    double speed;
    double rem[1 << 16];
    int cur[LAB04_MAX_CHANNELS][LAB04_MAX_GPUS];
    int best[LAB04_MAX_CHANNELS][LAB04_MAX_GPUS];
    int nbest;
    long budget;
} search;

/* Reserve (sign +1) or release (-1) the speed on the route a -> b; a
 * reservation that does not fit is undone and returns 0. */
static int reserve(search *s, int a, int b, int sign)
{
    const cl_sim_topo_net *net = s->net;
    int n = net->npath[a][b];
    for (int k = 0; k < n; k++) {
        int l = net->path[a][b][k];
        s->rem[l] -= sign * s->speed;
        if (sign > 0 && s->rem[l] < -1e-9) {
            for (int j = k; j >= 0; j--)
                s->rem[net->path[a][b][j]] += s->speed;
            return 0;
        }
    }
    return 1;
}

static double spare(const search *s, int a, int b)
{
    double m = INFINITY;
    for (int k = 0; k < s->net->npath[a][b]; k++)
        m = fmin(m, s->rem[s->net->path[a][b][k]]);
    return m;
}

static int grow(search *s, int c, int depth, int *used);

/* Ring c is complete: keep it if it is the most so far, then look for ring c+1. */
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
        if (!reserve(s, v, s->cur[c][0], +1))
            return 0;
        int done = next_ring(s, c);
        reserve(s, v, s->cur[c][0], -1);
        return done;
    }
    int cand[LAB04_MAX_GPUS], nc = 0;
    for (int w = 0; w < G; w++)
        if (!used[w] && spare(s, v, w) >= s->speed - 1e-9)
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

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}
/* END SOLUTION */

cl_result lab04_search_rings(const cl_sim_topo_net *net, int rings[][LAB04_MAX_GPUS],
                             int max_rings, int *nrings)
{
    /* BEGIN SOLUTION */
    static search s;
    int G = net->ngpus, nl = net->g.nl;
    if (max_rings < 1 || max_rings > LAB04_MAX_CHANNELS || nl > (1 << 16)) {
        cl_set_error("max_rings must be 1..%d", LAB04_MAX_CHANNELS);
        return CL_ERR_INVALID;
    }
    *nrings = 1;
    for (int i = 0; i < G; i++)
        rings[0][i] = i;
    if (G < 2)
        return CL_OK;
    /* Candidate per-channel speeds: every link's bandwidth split 1..max ways. */
    static double speeds[1 << 12];
    int ns = 0;
    for (int l = 0; l < nl; l++)
        for (int k = 1; k <= max_rings && ns < (1 << 12); k++) {
            double v = cl_sim_topo_link_gbps(net, l) / k;
            int dup = 0;
            for (int i = 0; i < ns && !dup; i++)
                dup = fabs(speeds[i] - v) < 1e-9 * v;
            if (!dup)
                speeds[ns++] = v;
        }
    qsort(speeds, (size_t)ns, sizeof *speeds, cmp_desc);
    double best = channel_speed(net, (const int(*)[LAB04_MAX_GPUS])rings, 1);
    for (int i = 0; i < ns; i++) {
        s.net = net;
        s.G = G;
        s.max = max_rings;
        s.speed = speeds[i];
        s.nbest = 0;
        s.budget = 200000;
        for (int l = 0; l < nl; l++)
            s.rem[l] = cl_sim_topo_link_gbps(net, l);
        int used[LAB04_MAX_GPUS] = {0};
        s.cur[0][0] = 0;
        used[0] = 1;
        grow(&s, 0, 1, used);
        if (s.nbest == 0)
            continue;
        double value = s.nbest * channel_speed(net, (const int(*)[LAB04_MAX_GPUS])s.best,
                                               s.nbest);
        if (value > best * (1 + 1e-9)) {
            best = value;
            *nrings = s.nbest;
            memcpy(rings, s.best, (size_t)s.nbest * sizeof rings[0]);
        }
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab04) 2: search ring channels, as NCCL's search.cc does.
    //   A channel reserves a speed s (GB/s) on every link of every route it uses; try
    //   speeds from high to low (e.g. every link bandwidth / k, k = 1..max_rings), and at
    //   each speed find as many rings as the links allow (depth-first from GPU 0,
    //   backtracking when a ring cannot close). Score a set of C rings by
    //   C x (min over links of bandwidth / uses) and keep the best set.
    //   An index-order ring (0,1,...,n-1) ignores NVLink: on a DGX-1 it crosses the
    //   6 GB/s SMP link. Return at most max_rings rings and set *nrings.
    (void)net, (void)rings, (void)max_rings, (void)nrings;
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
    if (n < 1 || n > LAB04_MAX_GPUS || !is_permutation(n, order)) {
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
    // TODO(lab04) 3: NCCL's double binary tree (src/graph/trees.cc).
    //   Tree 0 over positions 0..n-1: position 0 is the root, with no parent and one
    //   child, the largest power of two below n. For p > 0, bit = lowest set bit of p;
    //   parent = (p ^ bit) | (bit << 1), or p ^ bit when that is >= n;
    //   children p - bit/2 and p + bit/2 (halve the step while the second is >= n);
    //   none when bit == 1.
    //   Tree 1: n even -> the mirror (position p plays n-1-p); n odd -> the shift by one.
    //   Store GPU order[p] for position p in up[] and down[][] of t0 and t1 (-1: none).
    (void)n, (void)order, (void)t0, (void)t1;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* BEGIN SOLUTION */
static int path_rank(const char *code)
{
    static const char *order[] = {"LOC", "NVL", "NVB", "PIX", "PXB", "PHB", "SYS"};
    for (int i = 0; i < 7; i++)
        if (!strcmp(code, order[i]))
            return i;
    return 6;
}

static void write_graph(FILE *f, int id, int pattern, const cl_sim_topo_net *net,
                        const int rings[][LAB04_MAX_GPUS], int nrings, double speed,
                        const char *type)
{
    fprintf(f,
            "  <graph id=\"%d\" pattern=\"%d\" crossnic=\"0\" nchannels=\"%d\" speedintra=\"%g\" "
            "speedinter=\"%g\" latencyinter=\"0\" typeintra=\"%s\" typeinter=\"PIX\" "
            "samechannels=\"0\">\n",
            id, pattern, nrings, speed, speed, type);
    for (int r = 0; r < nrings; r++) {
        fprintf(f, "    <channel>\n");
        for (int i = 0; i < net->ngpus; i++)
            fprintf(f, "      <gpu dev=\"%d\"/>\n", rings[r][i]);
        fprintf(f, "    </channel>\n");
    }
    fprintf(f, "  </graph>\n");
}
/* END SOLUTION */

cl_result lab04_write_graph_xml(FILE *f, const cl_sim_topo_net *net,
                                const int rings[][LAB04_MAX_GPUS], int nrings)
{
    /* BEGIN SOLUTION */
    int G = net->ngpus, worst = 1;
    for (int r = 0; r < nrings; r++)
        for (int i = 0; i < G && G > 1; i++) {
            int rank = path_rank(net->path_code[rings[r][i]][rings[r][(i + 1) % G]]);
            worst = rank > worst ? rank : worst;
        }
    static const char *names[] = {"LOC", "NVL", "NVB", "PIX", "PXB", "PHB", "SYS"};
    double speed = channel_speed(net, rings, nrings);
    fprintf(f, "<graphs version=\"1\">\n");
    write_graph(f, 0, 4, net, rings, nrings, speed, names[worst]);
    write_graph(f, 1, 1, net, rings, nrings, speed, names[worst]);
    fprintf(f, "</graphs>\n");
    return ferror(f) ? CL_ERR_IO : CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab04) 4: the NCCL graph file (the format of src/graph/search.cc).
    //   <graphs version="1">
    //     <graph id="0" pattern="4" crossnic="0" nchannels="C" speedintra="S" speedinter="S"
    //            latencyinter="0" typeintra="NVL" typeinter="PIX" samechannels="0">
    //       <channel><gpu dev="0"/><gpu dev="3"/>...</channel>   one per ring, in ring order
    //     </graph>
    //     <graph id="1" pattern="1" ...> the same channels (tree chains) </graph>
    //   </graphs>
    //   S = GB/s per channel; typeintra = the slowest path type the rings use
    //   (net->path_code: NVL < PIX < PXB < PHB < SYS).
    (void)f, (void)net, (void)rings, (void)nrings;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
