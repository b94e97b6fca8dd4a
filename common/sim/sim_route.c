/* sim_route.c: routing: shortest paths inside a node, min-hop / D-mod-K / ECMP across the fabric.
 *
 * Inside a node: a shortest path with NVLink cheapest (weight 1), then PCIe
 * (10), then the SMP link (100), which orders paths as NCCL's path classes do
 * (NVL < PIX/PXB < PHB < SYS). A path may pass through a GPU only on NVLink
 * (NVB) or from NVLink to PCIe (PXN: a peer GPU relays to its NIC), never
 * from PCIe to PCIe, and never through a NIC.
 *
 * Across the fabric: up/down along shortest paths to the destination's leaf.
 * Where several links lead one hop closer, the policy picks one:
 *   dmodk   up-port floor(d / prod(w_lower)) mod w at each up hop, d the
 *           destination's position in fabric order (Zahavi 2010);
 *   ecmp    a hash of (source, destination, qp, hop) with the system's seed;
 *   minhop  the candidate carrying the fewest routes so far (ties: first).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sim_machine.h"

#define NOPATH 0xffff

static int is_switch(const cl_sim_graph *g, int v) { return g->vkind[v] == CL_SIM_V_SWITCH; }

cl_result cl_sim_route_prepare(cl_sim_machine *m)
{
    const cl_sim_graph *g = &m->g;
    if (m->nsw == 0 || m->nleaves <= 1)
        return CL_OK;
    size_t n = (size_t)m->nsw * (size_t)m->nleaves;
    m->dist = malloc(n * sizeof *m->dist);
    m->leaf_of_v = malloc((size_t)m->nsw * sizeof *m->leaf_of_v);
    int *queue = malloc((size_t)m->nsw * sizeof *queue);
    m->route_load = calloc((size_t)g->nl + 1, sizeof *m->route_load);
    if (!m->dist || !m->leaf_of_v || !queue || !m->route_load) {
        free(queue);
        return CL_ERR_NOMEM;
    }
    memset(m->dist, 0xff, n * sizeof *m->dist);
    for (int s = 0; s < m->nsw; s++)
        m->leaf_of_v[s] = -1;
    for (int l = 0; l < m->nleaves; l++)
        m->leaf_of_v[m->leaf_v[l] - m->sw_first] = l;
    for (int leaf = 0; leaf < m->nleaves; leaf++) {
        int head = 0, tail = 0;
        int s0 = m->leaf_v[leaf] - m->sw_first;
        m->dist[(size_t)s0 * m->nleaves + leaf] = 0;
        queue[tail++] = s0;
        while (head < tail) {
            int s = queue[head++];
            int v = s + m->sw_first;
            unsigned short d = m->dist[(size_t)s * m->nleaves + leaf];
            for (int k = g->adj_off[v]; k < g->adj_off[v + 1]; k++) {
                int w = g->l[g->adj[k]].dst;
                if (!is_switch(g, w))
                    continue;
                size_t idx = (size_t)(w - m->sw_first) * m->nleaves + leaf;
                if (m->dist[idx] == NOPATH) {
                    m->dist[idx] = (unsigned short)(d + 1);
                    queue[tail++] = w - m->sw_first;
                }
            }
        }
    }
    free(queue);
    return CL_OK;
}

static unsigned hash4(unsigned seed, unsigned a, unsigned b, unsigned c, unsigned d)
{
    unsigned h = seed * 0x9E3779B1u ^ 0x85EBCA77u;
    unsigned v[4] = {a, b, c, d};
    for (int i = 0; i < 4; i++) {
        h ^= v[i] + 0x9E3779B9u + (h << 6) + (h >> 2);
        h *= 0xC2B2AE35u;
        h ^= h >> 15;
    }
    return h;
}

/* D-mod-K going down, among parallel cables from v to one lower switch w: the
 * cable that destination d's own up route leaves w by, reversed. Every switch
 * then sends each destination down one cable of its own, as the up routes of
 * the destinations spread them (Zahavi 2010: routes toward d form a tree);
 * the destination index alone, divided by the widths below, would pick one
 * cable for every destination under w. */
static int dmodk_down(const cl_sim_machine *m, int v, const int *cand, int nc, long d,
                      const long *lvl_div)
{
    const cl_sim_graph *g = &m->g;
    int w = g->l[cand[0]].dst;
    for (int i = 1; i < nc; i++)
        if (g->l[cand[i]].dst != w)
            return (int)(d % nc); /* candidates lead to different switches */
    int up[1024], nup = 0, lw = g->vlevel[w];
    for (int k = g->adj_off[w]; k < g->adj_off[w + 1] && nup < 1024; k++) {
        int l = g->adj[k], x = g->l[l].dst;
        if (is_switch(g, x) && g->vlevel[x] > lw)
            up[nup++] = l;
    }
    long div = lw >= 0 && lw < 8 ? lvl_div[lw] : 1;
    if (nup == 0)
        return (int)(d % nc);
    int j = (int)((d / div) % nup);
    if (g->l[up[j]].dst != v)
        return j % nc; /* d's own route climbs elsewhere: spread by the same index */
    int par = 0;       /* j's rank among w's cables to v = the down cable's rank among v's to w */
    for (int i = 0; i < j; i++)
        par += g->l[up[i]].dst == v;
    return par % nc;
}

int cl_sim_route_fabric(cl_sim_machine *m, int a, int b, int qp, int *path, int max)
{
    const cl_sim_graph *g = &m->g;
    int len = 0;
    if (max < 2)
        return -1;
    path[len++] = m->nic_up[a];
    int target = m->host_leaf[b];
    int v = m->leaf_v[m->host_leaf[a]];
    long divisor = 1;
    long lvl_div[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    int hop = 0;
    while (v != m->leaf_v[target]) {
        if (!m->dist) {
            cl_set_error("no route from host %d to host %d: separate leaves, no spine", a, b);
            return -1;
        }
        unsigned short here = m->dist[(size_t)(v - m->sw_first) * m->nleaves + target];
        if (here == NOPATH) {
            cl_set_error("no route from host %d to host %d (separate rails without a spine)", a, b);
            return -1;
        }
        int cand[1024], nc = 0;
        for (int k = g->adj_off[v]; k < g->adj_off[v + 1] && nc < 1024; k++) {
            int l = g->adj[k], w = g->l[l].dst;
            if (is_switch(g, w) &&
                m->dist[(size_t)(w - m->sw_first) * m->nleaves + target] == here - 1)
                cand[nc++] = l;
        }
        if (nc == 0 || len + 2 > max)
            return -1;
        int pick = 0;
        if (nc > 1) {
            int going_up = g->vlevel[g->l[cand[0]].dst] > g->vlevel[v];
            switch (m->sys.routing) {
            case CL_SIM_ROUTE_DMODK:
                if (going_up) {
                    int lv = g->vlevel[v];
                    if (lv >= 0 && lv < 8)
                        lvl_div[lv] = divisor;
                    pick = (int)((m->host_index[b] / divisor) % nc);
                    divisor *= nc;
                } else {
                    pick = dmodk_down(m, v, cand, nc, m->host_index[b], lvl_div);
                }
                break;
            case CL_SIM_ROUTE_ECMP:
                pick = (int)(hash4(m->sys.ecmp_seed, (unsigned)a, (unsigned)b, (unsigned)qp,
                                   (unsigned)hop) %
                             (unsigned)nc);
                break;
            case CL_SIM_ROUTE_MINHOP:
                for (int i = 1; i < nc; i++)
                    if (m->route_load[cand[i]] < m->route_load[cand[pick]])
                        pick = i;
                m->route_load[cand[pick]]++;
                break;
            }
        }
        path[len++] = cand[pick];
        v = g->l[cand[pick]].dst;
        hop++;
    }
    path[len++] = m->nic_down[b];
    return len;
}

/* Shortest path inside node 0 between template vertices; returns length or -1. */
static int node_path(const cl_sim_machine *m, int src, int dst, int *path, int max, int *weight)
{
    const cl_sim_graph *g = &m->g;
    int tv = m->tv;
    /* state = vertex * 2 + (arrived over NVLink) */
    int ns = 2 * tv;
    int dist[2 * 512], prev[2 * 512], prevl[2 * 512];
    unsigned char done[2 * 512];
    if (tv > 512)
        return -1;
    for (int s = 0; s < ns; s++) {
        dist[s] = INT_MAX;
        done[s] = 0;
        prev[s] = -1;
    }
    dist[src * 2] = 0;
    for (;;) {
        int best = -1;
        for (int s = 0; s < ns; s++)
            if (!done[s] && dist[s] != INT_MAX && (best < 0 || dist[s] < dist[best]))
                best = s;
        if (best < 0)
            break;
        done[best] = 1;
        int v = best / 2, nvin = best % 2;
        if (v == dst)
            break;
        if (v != src && g->vkind[v] == CL_SIM_V_NIC)
            continue;
        for (int k = g->adj_off[v]; k < g->adj_off[v + 1]; k++) {
            int l = g->adj[k];
            const cl_sim_link *L = &g->l[l];
            if (L->dst >= tv)
                continue; /* leaves the node */
            int nv = L->kind == CL_SIM_L_NVLINK;
            if (v != src && g->vkind[v] == CL_SIM_V_GPU && !nvin && !nv)
                continue; /* PCIe -> GPU -> PCIe is not a path */
            int w = L->kind == CL_SIM_L_NVLINK ? 1 : L->kind == CL_SIM_L_PCI ? 10 : 100;
            int s2 = L->dst * 2 + nv;
            if (!done[s2] && dist[best] + w < dist[s2]) {
                dist[s2] = dist[best] + w;
                prev[s2] = best;
                prevl[s2] = l;
            }
        }
    }
    int end = dist[dst * 2] <= dist[dst * 2 + 1] ? dst * 2 : dst * 2 + 1;
    if (dist[end] == INT_MAX)
        return -1;
    *weight = dist[end];
    int len = 0;
    for (int s = end; s != src * 2; s = prev[s])
        len++;
    if (len > max)
        return -1;
    int i = len;
    for (int s = end; s != src * 2; s = prev[s])
        path[--i] = prevl[s];
    return len;
}

cl_result cl_sim_route_template(cl_sim_machine *m)
{
    int nd = m->gpus + m->nics;
    m->troute_off = calloc((size_t)nd * nd + 1, sizeof *m->troute_off);
    m->tclass = calloc((size_t)nd * nd + 1, 1);
    int cap = nd * nd * 8 + 1, used = 0;
    m->troute = malloc((size_t)cap * sizeof *m->troute);
    int *wgt = calloc((size_t)nd * nd + 1, sizeof *wgt);
    if (!m->troute_off || !m->tclass || !m->troute || !wgt) {
        free(wgt);
        return CL_ERR_NOMEM;
    }
    for (int a = 0; a < nd; a++)
        for (int b = 0; b < nd; b++) {
            int idx = a * nd + b;
            m->troute_off[idx] = used;
            if (a == b || (a >= m->gpus && b >= m->gpus))
                continue;
            int va = a < m->gpus ? m->gpu_v[a] : m->nic_v[a - m->gpus];
            int vb = b < m->gpus ? m->gpu_v[b] : m->nic_v[b - m->gpus];
            int tmp[CL_SIM_MAX_PATH];
            int len = node_path(m, va, vb, tmp, CL_SIM_MAX_PATH, &wgt[idx]);
            if (len < 0) {
                free(wgt);
                cl_set_error("no path inside the node from device %d to device %d", a, b);
                return CL_ERR_INVALID;
            }
            if (used + len > cap) {
                cap = 2 * (used + len);
                int *q = realloc(m->troute, (size_t)cap * sizeof *q);
                if (!q) {
                    free(wgt);
                    return CL_ERR_NOMEM;
                }
                m->troute = q;
            }
            int allnv = 1;
            for (int i = 0; i < len; i++) {
                m->troute[used++] = tmp[i];
                allnv &= m->g.l[tmp[i]].kind == CL_SIM_L_NVLINK;
            }
            m->tclass[idx] = allnv ? CL_SIM_P_NVL : CL_SIM_P_PCI;
        }
    m->troute_off[nd * nd] = used;
    /* Each GPU's own NIC: the nearest, spreading ties over the least used. */
    int users[CL_SIM_MAX_LOCAL] = {0};
    for (int i = 0; i < m->gpus; i++) {
        int best = -1;
        for (int r = 0; r < m->nics; r++) {
            int w = wgt[i * nd + m->gpus + r];
            if (best < 0 || w < wgt[i * nd + m->gpus + best] ||
                (w == wgt[i * nd + m->gpus + best] && users[r] < users[best]))
                best = r;
        }
        m->gpu_nic[i] = best < 0 ? 0 : best;
        if (best >= 0)
            users[best]++;
    }
    free(wgt);
    return CL_OK;
}

/* Append template route a -> b of node `node` to path. */
static int append_local(const cl_sim_machine *m, int node, int a, int b, int *path, int len,
                        int max, int *allnv)
{
    int nd = m->gpus + m->nics;
    int idx = a * nd + b;
    int off = m->troute_off[idx], n = m->troute_off[idx + 1] - off;
    if (len + n > max)
        return -1;
    for (int i = 0; i < n; i++)
        path[len + i] = m->troute[off + i] + node * m->tl;
    if (m->tclass[idx] != CL_SIM_P_NVL)
        *allnv = 0;
    return len + n;
}

int cl_sim_route_nics(cl_sim_machine *m, int src, int dst, int nic_src, int nic_dst, int qp,
                      int *path, int max, cl_sim_pclass *cls)
{
    int na = src / m->gpus, ga = src % m->gpus;
    int nb = dst / m->gpus, gb = dst % m->gpus;
    int allnv = 1;
    *cls = CL_SIM_P_NVL;
    if (src == dst)
        return 0;
    if (na == nb) {
        int len = append_local(m, na, ga, gb, path, 0, max, &allnv);
        *cls = allnv ? CL_SIM_P_NVL : CL_SIM_P_PCI;
        return len;
    }
    if (m->nics == 0) {
        cl_set_error("ranks %d and %d are on different nodes, which have no NIC", src, dst);
        return -1;
    }
    nic_src %= m->nics;
    nic_dst %= m->nics;
    int len = append_local(m, na, ga, m->gpus + nic_src, path, 0, max, &allnv);
    if (len < 0)
        return -1;
    int n = cl_sim_route_fabric(m, na * m->nics + nic_src, nb * m->nics + nic_dst, qp, path + len,
                                max - len);
    if (n < 0)
        return -1;
    len = append_local(m, nb, m->gpus + nic_dst, gb, path, len + n, max, &allnv);
    *cls = CL_SIM_P_NET;
    return len;
}

int cl_sim_route(cl_sim_machine *m, int src, int dst, int nic, int qp, int *path, int max,
                 cl_sim_pclass *cls)
{
    int a = m->gpu_nic[src % m->gpus], b = m->gpu_nic[dst % m->gpus];
    if (nic >= 0)
        a = b = nic;
    else if (m->sys.pxn)
        a = b; /* PXN: a peer of the sender on the receiver's rail sends */
    return cl_sim_route_nics(m, src, dst, a, b, qp, path, max, cls);
}

double cl_sim_path_latency(const cl_sim_machine *m, const int *path, int len)
{
    double t = 0;
    for (int i = 0; i < len; i++)
        t += m->g.l[path[i]].lat;
    return t;
}
