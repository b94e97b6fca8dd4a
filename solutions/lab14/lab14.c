/* lab14.c: InfiniBand routing and fat trees: build fabrics, route them, prove them
 * deadlock-free, load them, and place a job on one.
 *
 * Read labs/lab14/README.md first; lab14.h has the types. Fill in the TODOs in
 * order. Your functions run in their own program on a 1 MiB stack: take large
 * arrays from malloc. */
#include <stdlib.h>
#include <string.h>

#include "lab14.h"

/* --- helpers every part may use ---------------------------------------------------------- */

static inline void clear_fabric(lab14_fabric *f, int nhosts, int nnodes)
{
    memset(f, 0, sizeof *f);
    f->nhosts = nhosts;
    f->nnodes = nnodes;
    for (int a = 0; a < LAB14_MAX_NODES; a++)
        for (int p = 0; p < LAB14_MAX_PORTS; p++)
            f->link[a][p] = (lab14_end){-1, -1};
}

static inline void cable(lab14_fabric *f, int a, int pa, int b, int pb)
{
    f->link[a][pa] = (lab14_end){b, pb};
    f->link[b][pb] = (lab14_end){a, pa};
}

/* ========================================================================================= */
/* TODO 1: fabrics                                                                            */
/* ========================================================================================= */

cl_result lab14_build_fat_tree(int k, lab14_fabric *f)
{
    /* BEGIN SOLUTION */
    if (k < 2 || k > 16 || k % 2)
        return CL_ERR_INVALID;
    int h = k / 2, H = k * k * k / 4;
    int edge0 = H, agg0 = H + k * h, core0 = H + 2 * k * h, N = core0 + h * h;
    clear_fabric(f, H, N);
    f->gbps = 100;
    for (int a = 0; a < N; a++) {
        f->nports[a] = a < H ? 1 : k;
        f->level[a] = a < H ? 0 : a < agg0 ? 1 : a < core0 ? 2 : 3;
    }
    for (int p = 0; p < k; p++)
        for (int e = 0; e < h; e++) {
            int edge = edge0 + p * h + e;
            for (int i = 0; i < h; i++)
                cable(f, p * h * h + e * h + i, 0, edge, i);
            for (int a = 0; a < h; a++)
                cable(f, edge, h + a, agg0 + p * h + a, e);
        }
    for (int p = 0; p < k; p++)
        for (int a = 0; a < h; a++)
            for (int j = 0; j < h; j++)
                cable(f, agg0 + p * h + a, h + j, core0 + a * h + j, p);
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab14) 1a: the k-ary fat tree: hosts, edge, aggregation and core switches,
    // numbered and cabled as section 1 of the handout says; levels 0..3.
    (void)k;
    (void)f;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab14_build_leaf_spine(int leaves, int hosts_per_leaf, int spines, int uplinks,
                                 lab14_fabric *f)
{
    /* BEGIN SOLUTION */
    int L = leaves, h = hosts_per_leaf, S = spines, u = uplinks;
    if (L < 1 || h < 1 || S < 1 || u < S || u % S || h + u > LAB14_MAX_PORTS ||
        L * (u / S) > LAB14_MAX_PORTS || L * h > LAB14_MAX_HOSTS || L + S > LAB14_MAX_SWITCHES)
        return CL_ERR_INVALID;
    int c = u / S, H = L * h, leaf0 = H, spine0 = H + L;
    clear_fabric(f, H, spine0 + S);
    f->gbps = 100;
    for (int a = 0; a < H; a++)
        f->nports[a] = 1;
    for (int l = 0; l < L; l++) {
        f->nports[leaf0 + l] = h + u;
        f->level[leaf0 + l] = 1;
        for (int i = 0; i < h; i++)
            cable(f, l * h + i, 0, leaf0 + l, i);
        for (int j = 0; j < u; j++)
            cable(f, leaf0 + l, h + j, spine0 + j % S, l * c + j / S);
    }
    for (int s = 0; s < S; s++) {
        f->nports[spine0 + s] = L * c;
        f->level[spine0 + s] = 2;
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab14) 1b: the leaf-spine: hosts under each leaf, the leaf's uplinks spread
    // over the spines as section 1 says (uplink j goes to spine j mod spines).
    (void)leaves;
    (void)hosts_per_leaf;
    (void)spines;
    (void)uplinks;
    (void)f;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab14_build_rail(int sus, int nodes_per_su, int rails, int spines, lab14_fabric *f,
                           int *hca)
{
    /* BEGIN SOLUTION */
    if (sus < 1 || rails < 1 || nodes_per_su < 1)
        return CL_ERR_INVALID;
    cl_result rc = lab14_build_leaf_spine(sus * rails, nodes_per_su, spines, nodes_per_su, f);
    if (rc != CL_OK)
        return rc;
    f->gbps = 400;
    for (int su = 0; su < sus; su++)
        for (int i = 0; i < nodes_per_su; i++)
            for (int r = 0; r < rails; r++)
                hca[(su * nodes_per_su + i) * rails + r] = (su * rails + r) * nodes_per_su + i;
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab14) 1c: the rail-optimised fabric is a leaf-spine with one leaf per unit
    // and rail; say where HCA r of every server is (hca[]).
    (void)sus;
    (void)nodes_per_su;
    (void)rails;
    (void)spines;
    (void)f;
    (void)hca;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* ========================================================================================= */
/* TODO 2: routes                                                                             */
/* ========================================================================================= */

/* BEGIN SOLUTION */
/* The ports of switch a towards level[a] + 1, in port order; returns how many. */
static int up_ports(const lab14_fabric *f, int a, int *up)
{
    int n = 0;
    for (int p = 0; p < f->nports[a]; p++) {
        int b = f->link[a][p].node;
        if (b >= 0 && f->level[b] == f->level[a] + 1)
            up[n++] = p;
    }
    return n;
}

/* below[a] = 1 for every node from which d is reached going down only. */
static void mark_below(const lab14_fabric *f, int d, unsigned char *below)
{
    memset(below, 0, (size_t)f->nnodes);
    below[d] = 1;
    for (int lv = 1; lv <= 3; lv++)
        for (int a = f->nhosts; a < f->nnodes; a++) {
            if (f->level[a] != lv)
                continue;
            for (int p = 0; p < f->nports[a] && !below[a]; p++) {
                int b = f->link[a][p].node;
                below[a] = b >= 0 && f->level[b] == lv - 1 && below[b];
            }
        }
}
/* END SOLUTION */

cl_result lab14_route_dmodk(const lab14_fabric *f, lab14_routes *r)
{
    /* BEGIN SOLUTION */
    int H = f->nhosts, up[LAB14_MAX_PORTS];
    /* up-port counts per level, the same for every switch of a level */
    int u[4] = {1, 0, 0, 0}, W[5] = {0, 1, 0, 0, 0};
    for (int a = H; a < f->nnodes; a++) {
        int lv = f->level[a];
        if (lv < 1 || lv > 3)
            return CL_ERR_INVALID;
        int n = up_ports(f, a, up);
        if (u[lv] && n && n != u[lv])
            return CL_ERR_INVALID;
        if (n)
            u[lv] = n;
    }
    for (int lv = 1; lv <= 3; lv++)
        W[lv + 1] = W[lv] * (u[lv] ? u[lv] : 1);
    unsigned char *below = malloc((size_t)f->nnodes);
    short *down = malloc((size_t)f->nnodes * sizeof *down); /* d's up path, reversed */
    if (!below || !down) {
        free(below);
        free(down);
        return CL_ERR_NOMEM;
    }
    for (int d = 0; d < H; d++) {
        mark_below(f, d, below);
        for (int a = 0; a < f->nnodes; a++)
            down[a] = -1;
        /* d's own up path: at level l take up port floor(d / W[l]) mod u[l] */
        int a = f->link[d][0].node;
        down[a] = (short)f->link[d][0].port;
        for (;;) {
            int n = up_ports(f, a, up);
            if (!n)
                break;
            int p = up[(d / W[f->level[a]]) % n];
            int b = f->link[a][p].node;
            down[b] = (short)f->link[a][p].port;
            a = b;
        }
        for (int s = H; s < f->nnodes; s++) {
            short port = -1;
            if (down[s] >= 0) {
                port = down[s];
            } else if (below[s]) { /* above d but off its path: the first port down to it */
                for (int p = 0; p < f->nports[s] && port < 0; p++) {
                    int b = f->link[s][p].node;
                    if (b >= 0 && f->level[b] == f->level[s] - 1 && below[b])
                        port = (short)p;
                }
            } else {
                int n = up_ports(f, s, up);
                if (n)
                    port = (short)up[(d / W[f->level[s]]) % n];
            }
            r->out[s - H][d] = port;
        }
    }
    free(below);
    free(down);
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab14) 2a: D-mod-K. Destination d climbs from its leaf by the up port
    // floor(d / W_l) mod u_l at level l; every route to d meets that path and follows it
    // down. Fill r->out for every switch and host (section 2).
    (void)f;
    (void)r;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab14_route_updown(const lab14_fabric *f, int root, lab14_routes *r)
{
    /* BEGIN SOLUTION */
    int H = f->nhosts, N = f->nnodes;
    if (root < H || root >= N)
        return CL_ERR_INVALID;
    int *rank = malloc((size_t)N * sizeof *rank), *queue = malloc((size_t)N * sizeof *queue);
    int *dd = malloc((size_t)N * sizeof *dd), *da = malloc((size_t)N * sizeof *da);
    cl_result rc = CL_OK;
    if (!rank || !queue || !dd || !da) {
        rc = CL_ERR_NOMEM;
        goto done;
    }
    /* ranks: hops from the root over switch-to-switch cables */
    for (int a = 0; a < N; a++)
        rank[a] = -1;
    int head = 0, tail = 0;
    rank[root] = 0;
    queue[tail++] = root;
    while (head < tail) {
        int a = queue[head++];
        for (int p = 0; p < f->nports[a]; p++) {
            int b = f->link[a][p].node;
            if (b >= H && rank[b] < 0) {
                rank[b] = rank[a] + 1;
                queue[tail++] = b;
            }
        }
    }
    for (int a = H; a < N; a++)
        if (rank[a] < 0) {
            rc = CL_ERR_INVALID; /* a switch the root cannot reach */
            goto done;
        }
#define UP_END(x, y) (rank[x] < rank[y] || (rank[x] == rank[y] && (x) < (y)))
    for (int d = 0; d < H; d++) {
        int t = f->link[d][0].node;
        /* dd: hops to t going down only (from the up end of every cable); da: any legal path */
        for (int a = 0; a < N; a++)
            dd[a] = da[a] = -1;
        head = tail = 0;
        dd[t] = 0;
        queue[tail++] = t;
        while (head < tail) {
            int y = queue[head++];
            for (int p = 0; p < f->nports[y]; p++) {
                int x = f->link[y][p].node;
                if (x >= H && dd[x] < 0 && UP_END(x, y)) {
                    dd[x] = dd[y] + 1;
                    queue[tail++] = x;
                }
            }
        }
        /* da: shortest legal paths; unit weights, so a breadth-first pass in order of
         * distance, seeded with every dd, relaxing up moves backwards */
        int maxd = 0;
        for (int a = H; a < N; a++)
            if (dd[a] > maxd)
                maxd = dd[a];
        for (int a = H; a < N; a++)
            da[a] = dd[a];
        for (int dist = 0; dist <= N; dist++) {
            int any = 0;
            for (int y = H; y < N; y++) {
                if (da[y] != dist)
                    continue;
                any = 1;
                for (int p = 0; p < f->nports[y]; p++) {
                    int x = f->link[y][p].node; /* x moves up to y */
                    if (x >= H && UP_END(y, x) && (da[x] < 0 || da[x] > dist + 1))
                        da[x] = dist + 1;
                }
            }
            if (!any && dist > maxd)
                break;
        }
        for (int s = H; s < N; s++) {
            short port = -1;
            if (s == t) {
                port = (short)f->link[d][0].port;
            } else if (dd[s] > 0) {
                for (int p = 0; p < f->nports[s] && port < 0; p++) {
                    int y = f->link[s][p].node;
                    if (y >= H && UP_END(s, y) && dd[y] == dd[s] - 1)
                        port = (short)p;
                }
            } else if (da[s] > 0) {
                for (int p = 0; p < f->nports[s] && port < 0; p++) {
                    int y = f->link[s][p].node;
                    if (y >= H && UP_END(y, s) && da[y] == da[s] - 1)
                        port = (short)p;
                }
            }
            r->out[s - H][d] = port;
        }
    }
#undef UP_END
done:
    free(rank);
    free(queue);
    free(dd);
    free(da);
    return rc;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab14) 2b: up*-down* from root: rank the switches by hops from the root, call
    // the end of a cable nearer the root (then the smaller node) its up end, and route
    // every switch to every host by the rule of section 2 (down first, then up).
    (void)f;
    (void)root;
    (void)r;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* ========================================================================================= */
/* TODO 3: deadlock freedom                                                                   */
/* ========================================================================================= */

/* BEGIN SOLUTION */
/* The channel that node a sends host d's packets on, or -1. */
static int next_channel(const lab14_fabric *f, const lab14_routes *r, int a, int d)
{
    int p = a < f->nhosts ? 0 : r->out[a - f->nhosts][d];
    if (p < 0 || p >= f->nports[a] || f->link[a][p].node < 0)
        return -1;
    return LAB14_CHANNEL(a, p);
}

/* Adjacency lists of channel dependencies, deduplicated per source channel. */
typedef struct cdg {
    int *head, *next, *to; /* head[channel] -> edge; edges in next[], to[] */
    int n, cap;
} cdg;

static int cdg_add(cdg *g, int a, int b)
{
    for (int e = g->head[a]; e >= 0; e = g->next[e])
        if (g->to[e] == b)
            return 0;
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 4096;
        int *nx = realloc(g->next, (size_t)cap * sizeof *nx);
        if (!nx)
            return -1;
        g->next = nx;
        int *to = realloc(g->to, (size_t)cap * sizeof *to);
        if (!to)
            return -1;
        g->to = to;
        g->cap = cap;
    }
    g->to[g->n] = b;
    g->next[g->n] = g->head[a];
    g->head[a] = g->n++;
    return 0;
}
/* END SOLUTION */

cl_result lab14_deadlock_free(const lab14_fabric *f, const lab14_routes *r, int *acyclic,
                              int *cycle, int *len)
{
    /* BEGIN SOLUTION */
    int H = f->nhosts, N = f->nnodes, C = N * LAB14_MAX_PORTS;
    cdg g = {0};
    g.head = malloc((size_t)C * sizeof *g.head);
    unsigned char *seen = malloc((size_t)N), *color = calloc((size_t)C, 1);
    int *stack = malloc((size_t)C * sizeof *stack), *it = malloc((size_t)C * sizeof *it);
    int *walk = malloc((size_t)N * sizeof *walk);
    cl_result rc = CL_OK;
    if (!g.head || !seen || !color || !stack || !it || !walk) {
        rc = CL_ERR_NOMEM;
        goto done;
    }
    for (int c = 0; c < C; c++)
        g.head[c] = -1;
    /* the dependencies of every route to d, walking each node's onward route once:
     * seen[a] is 1 once a's route to d is known to arrive, 2 while being walked */
    for (int d = 0; d < H; d++) {
        memset(seen, 0, (size_t)N);
        seen[d] = 1;
        for (int s = 0; s < H; s++) {
            int a = s, prev = -1, n = 0;
            while (seen[a] != 1) {
                int ch = next_channel(f, r, a, d);
                if (ch < 0 || seen[a] == 2) {
                    rc = CL_ERR_INVALID; /* a route that loops or ends nowhere */
                    goto done;
                }
                if (prev >= 0 && cdg_add(&g, prev, ch)) {
                    rc = CL_ERR_NOMEM;
                    goto done;
                }
                seen[a] = 2;
                walk[n++] = a;
                prev = ch;
                a = f->link[a][ch % LAB14_MAX_PORTS].node;
                if (a < H && a != d) {
                    rc = CL_ERR_INVALID; /* delivered to another host */
                    goto done;
                }
            }
            if (prev >= 0 && a != d) { /* into a node whose route is known */
                if (cdg_add(&g, prev, next_channel(f, r, a, d))) {
                    rc = CL_ERR_NOMEM;
                    goto done;
                }
            }
            while (n > 0)
                seen[walk[--n]] = 1;
        }
    }
    /* a cycle by depth-first search: an edge to a channel on the stack closes one */
    *acyclic = 1;
    *len = 0;
    for (int s = 0; s < C && *acyclic; s++) {
        if (color[s] || g.head[s] < 0)
            continue;
        int top = 0;
        stack[0] = s;
        it[0] = g.head[s];
        color[s] = 1;
        while (top >= 0 && *acyclic) {
            int e = it[top];
            if (e < 0) {
                color[stack[top--]] = 2;
                continue;
            }
            it[top] = g.next[e];
            int b = g.to[e];
            if (color[b] == 1) {
                int k = top;
                while (stack[k] != b)
                    k--;
                *acyclic = 0;
                for (int j = k; j <= top && *len < LAB14_MAX_CYCLE; j++)
                    cycle[(*len)++] = stack[j];
            } else if (!color[b]) {
                color[b] = 1;
                stack[++top] = b;
                it[top] = g.head[b];
            }
        }
    }
done:
    free(g.head);
    free(g.next);
    free(g.to);
    free(seen);
    free(color);
    free(stack);
    free(it);
    free(walk);
    return rc;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab14) 3: follow every route (every ordered pair of hosts), record each
    // dependency "channel b is used right after channel a", and search the graph for a
    // cycle; report one if there is (section 3).
    (void)f;
    (void)r;
    (void)cycle;
    *acyclic = -1;
    *len = 0;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* ========================================================================================= */
/* TODO 4: link loads                                                                         */
/* ========================================================================================= */

int lab14_pattern_flows(int pattern, int shift, const int *hosts, int n, double bytes,
                        lab14_flow *out, int max)
{
    /* BEGIN SOLUTION */
    int k = 0;
    if (pattern == LAB14_ALLTOALL) {
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                if (i != j && k < max)
                    out[k++] = (lab14_flow){hosts[i], hosts[j], bytes};
        return k;
    }
    if (n < 1)
        return 0;
    int s = pattern == LAB14_RING ? 1 : ((shift % n) + n) % n;
    for (int i = 0; s && i < n && k < max; i++)
        out[k++] = (lab14_flow){hosts[i], hosts[(i + s) % n], bytes};
    return k;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab14) 4a: the flows of a ring, a shift or an AlltoAll over hosts[], in the
    // order section 4 gives.
    (void)pattern;
    (void)shift;
    (void)hosts;
    (void)n;
    (void)bytes;
    (void)out;
    (void)max;
    return 0;
    END SKELETON */
}

cl_result lab14_link_loads(const lab14_fabric *f, const lab14_routes *r, const lab14_flow *fl,
                           int n, double *load)
{
    /* BEGIN SOLUTION */
    memset(load, 0, LAB14_CHANNELS * sizeof *load);
    for (int i = 0; i < n; i++) {
        int a = fl[i].src, d = fl[i].dst;
        if (a < 0 || a >= f->nhosts || d < 0 || d >= f->nhosts || a == d)
            return CL_ERR_INVALID;
        for (int hops = 0; a != d; hops++) {
            int ch = next_channel(f, r, a, d);
            if (ch < 0 || hops > f->nnodes)
                return CL_ERR_INVALID;
            load[ch] += fl[i].bytes;
            a = f->link[a][ch % LAB14_MAX_PORTS].node;
            if (a < f->nhosts && a != d)
                return CL_ERR_INVALID;
        }
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab14) 4b: walk every flow's route and add its bytes to each channel it
    // uses; a route that does not arrive is CL_ERR_INVALID.
    (void)f;
    (void)r;
    (void)fl;
    (void)n;
    (void)load;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* ========================================================================================= */
/* TODO 5: the plan                                                                           */
/* ========================================================================================= */

/* BEGIN SOLUTION */
static int is_levelled(const lab14_fabric *f)
{
    int top = 0;
    for (int a = f->nhosts; a < f->nnodes; a++) {
        if (f->level[a] < 1 || f->level[a] > 3)
            return 0;
        top = f->level[a] > top ? f->level[a] : top;
    }
    return top;
}

/* Move the job's flow s -> d off channels other flows use (used[] counts them):
 * on a two-level fabric, any leaf uplink and any spine cable down to d's leaf
 * make a legal route. Changes only the tables' entries for d. */
static void reroute(const lab14_fabric *f, lab14_routes *r, int s, int d, int *used)
{
    int H = f->nhosts, ls = f->link[s][0].node, ld = f->link[d][0].node;
    if (ls == ld)
        return;
    int best_up = -1, best_down = -1, best = 1 << 30;
    for (int p = 0; p < f->nports[ls]; p++) {
        int sp = f->link[ls][p].node;
        if (sp < 0 || f->level[sp] != 2)
            continue;
        for (int q = 0; q < f->nports[sp]; q++) {
            if (f->link[sp][q].node != ld)
                continue;
            int cost = used[LAB14_CHANNEL(ls, p)] + used[LAB14_CHANNEL(sp, q)];
            if (cost < best) {
                best = cost;
                best_up = p;
                best_down = q;
            }
        }
    }
    if (best_up < 0)
        return;
    int sp = f->link[ls][best_up].node;
    r->out[ls - H][d] = (short)best_up;
    r->out[sp - H][d] = (short)best_down;
    used[LAB14_CHANNEL(ls, best_up)]++;
    used[LAB14_CHANNEL(sp, best_down)]++;
}
/* END SOLUTION */

cl_result lab14_plan(const lab14_fabric *f, const lab14_job *job, int *order, lab14_routes *r)
{
    /* BEGIN SOLUTION */
    int H = f->nhosts, R = job->rails, J = job->servers, top = is_levelled(f);
    cl_result rc = top ? lab14_route_dmodk(f, r) : lab14_route_updown(f, f->nnodes - 1, r);
    if (rc != CL_OK)
        return rc;
    /* units: the servers whose rail-0 HCA shares a leaf; fill the fullest units first */
    int *unit = malloc((size_t)job->nservers * sizeof *unit);
    int *free_in = calloc((size_t)f->nnodes, sizeof *free_in);
    int *used = calloc(LAB14_CHANNELS, sizeof *used);
    if (!unit || !free_in || !used) {
        rc = CL_ERR_NOMEM;
        goto done;
    }
    for (int s = 0; s < job->nservers; s++) {
        unit[s] = f->link[job->hca[s * R]][0].node;
        if (!job->busy[s])
            free_in[unit[s]]++;
    }
    int n = 0;
    while (n < J) {
        int best = -1;
        for (int u = H; u < f->nnodes; u++)
            if (free_in[u] > 0 && (best < 0 || free_in[u] > free_in[best]))
                best = u;
        if (best < 0) {
            rc = CL_ERR_INVALID; /* not enough free servers */
            goto done;
        }
        for (int s = 0; s < job->nservers && n < J; s++)
            if (unit[s] == best && !job->busy[s])
                order[n++] = s;
        free_in[best] = 0;
    }
    /* the other jobs' channels, then each of the job's flows on the least used route */
    for (int i = 0; i < job->nbg; i++) {
        int a = job->bg[i].src, d = job->bg[i].dst;
        for (int hops = 0; a != d && hops <= f->nnodes; hops++) {
            int ch = next_channel(f, r, a, d);
            if (ch < 0)
                break;
            used[ch]++;
            a = f->link[a][ch % LAB14_MAX_PORTS].node;
        }
    }
    if (top == 2)
        for (int k = 0; k < J; k++)
            for (int rail = 0; rail < R; rail++)
                reroute(f, r, job->hca[order[k] * R + rail],
                        job->hca[order[(k + 1) % J] * R + rail], used);
done:
    free(unit);
    free(free_in);
    free(used);
    return rc;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab14) 5: choose job->servers free servers and their ring order, and the
    // tables, so that the job's ring flows share no channel with each other or with the
    // other jobs' flows (section 5). Start from your routes of TODO 2.
    (void)f;
    (void)job;
    (void)order;
    (void)r;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
