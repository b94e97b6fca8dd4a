/* sim_topo.c: servers from a cl_topo (NVLink, NVSwitch, PCIe tree, SMP, NICs), and their routes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_engine.h"
#include "sim_topo.h"

#define GBPS 1e9

static const char *const path_names[CL_SIM_PATH_COUNT] = {"LOC", "NVL", "NVB", "PIX",
                                                          "PXB", "PHB", "SYS", "NET"};

const char *cl_sim_path_name(int type)
{
    return type >= 0 && type < CL_SIM_PATH_COUNT ? path_names[type] : "?";
}

int cl_sim_path_parse(const char *name)
{
    for (int i = 0; name && i < CL_SIM_PATH_COUNT; i++)
        if (strcmp(name, path_names[i]) == 0)
            return i;
    return -1;
}

/* Union-find over at most CL_SIM_TOPO_MAX_GPUS items. */
static int uf_find(int *p, int x)
{
    while (p[x] != x)
        x = p[x] = p[p[x]];
    return x;
}

static void uf_join(int *p, int a, int b)
{
    a = uf_find(p, a);
    b = uf_find(p, b);
    if (a != b)
        p[a < b ? b : a] = a < b ? a : b;
}

/* 1 when class k is at most `level` (0 PIX, 1 PXB, 2 PHB/NODE). */
static int within(cl_link_kind k, int level)
{
    switch (k) {
    case CL_LINK_PIX: return 1;
    case CL_LINK_PXB: return level >= 1;
    case CL_LINK_PHB:
    case CL_LINK_NODE: return level >= 2;
    default: return 0;
    }
}

/* The distance class of a GPU-NIC pair: 0 PIX, 1 PXB, 2 PHB/NODE, 3 anything else. */
static int pcie_level(cl_link_kind k)
{
    for (int level = 0; level < 3; level++)
        if (within(k, level))
            return level;
    return 3;
}

/* Groups of GPUs (group[i] = representative) at a PCIe level: joined when the
 * pair's own class is within the level, or both reach one NIC within it. */
static void pcie_groups(const cl_topo *t, const int *gpu, int G, int level, int *group)
{
    for (int i = 0; i < G; i++)
        group[i] = i;
    for (int a = 0; a < G; a++)
        for (int b = a + 1; b < G; b++) {
            int join = within(t->link[gpu[a]][gpu[b]].kind, level);
            for (int d = 0; d < t->ndevices && !join; d++)
                if (t->dev[d].kind == CL_DEV_NIC)
                    join = within(t->link[gpu[a]][d].kind, level) &&
                           within(t->link[gpu[b]][d].kind, level);
            if (join)
                uf_join(group, a, b);
        }
    for (int i = 0; i < G; i++)
        group[i] = uf_find(group, i);
}

static int find_link(const cl_sim_graph *g, int u, int v)
{
    for (int k = g->adj_off[u]; k < g->adj_off[u + 1]; k++)
        if (g->l[g->adj[k]].dst == v)
            return g->adj[k];
    return -1;
}

/* Set the path of (a, b) to the links along the vertex walk vs[0..nv). */
static cl_result set_path(cl_sim_topo_net *n, int a, int b, const int *vs, int nv, int type)
{
    n->npath[a][b] = 0;
    for (int i = 0; i + 1 < nv; i++) {
        if (vs[i] == vs[i + 1])
            continue;
        int l = find_link(&n->g, vs[i], vs[i + 1]);
        if (l < 0 || n->npath[a][b] >= CL_SIM_TOPO_MAX_HOPS) {
            cl_set_error("no route from GPU%d to GPU%d", a, b);
            return CL_ERR_INVALID;
        }
        n->path[a][b][n->npath[a][b]++] = l;
    }
    n->path_type[a][b] = (signed char)type;
    snprintf(n->path_code[a][b], sizeof n->path_code[a][b], "%s", cl_sim_path_name(type));
    return CL_OK;
}

/* A device's way up the PCIe tree: its vertex, its switches, its CPU (v[n-1]). */
typedef struct chain {
    int v[4];
    int n;
} chain;

/* The vertex walk from chain x up to where it meets chain y and down y;
 * through the SMP link when their CPUs differ. Appends to vs; returns the new
 * count. */
static int walk(const chain *x, const chain *y, int *vs, int nv)
{
    for (int i = 0; i < x->n; i++)
        for (int j = 0; j < y->n; j++)
            if (x->v[i] == y->v[j]) {
                for (int k = 0; k <= i; k++)
                    vs[nv++] = x->v[k];
                for (int k = j - 1; k >= 0; k--)
                    vs[nv++] = y->v[k];
                return nv;
            }
    for (int k = 0; k < x->n; k++)
        vs[nv++] = x->v[k];
    for (int k = y->n - 1; k >= 0; k--)
        vs[nv++] = y->v[k];
    return nv;
}

/* Through host memory: all the way up to the CPU (and over SYS) and down. */
static int walk_host(const chain *x, const chain *y, int *vs, int nv)
{
    for (int k = 0; k < x->n; k++)
        vs[nv++] = x->v[k];
    for (int k = y->n - 1; k >= 0; k--)
        vs[nv++] = y->v[k];
    return nv;
}

/* What one node looks like, from the topology (the same for every node). */
typedef struct layout {
    int G, gpu[CL_SIM_TOPO_MAX_GPUS];
    int sw[CL_SIM_TOPO_MAX_GPUS], pxb[CL_SIM_TOPO_MAX_GPUS], cpu[CL_SIM_TOPO_MAX_GPUS];
    int nnic, nic_dev[CL_TOPO_MAX_DEVICES], nic_gpu[CL_TOPO_MAX_DEVICES],
        nic_level[CL_TOPO_MAX_DEVICES];
    int nic_of[CL_SIM_TOPO_MAX_GPUS];
    int port; /* NVLinks of one GPU to the NVSwitch */
} layout;

static cl_result read_layout(const cl_topo *t, cl_sim_topo_net *n, layout *L)
{
    L->G = 0;
    for (int d = 0; d < t->ndevices; d++)
        if (t->dev[d].kind == CL_DEV_GPU) {
            if (L->G == CL_SIM_TOPO_MAX_GPUS) {
                cl_set_error("more than %d GPUs", CL_SIM_TOPO_MAX_GPUS);
                return CL_ERR_INVALID;
            }
            L->gpu[L->G++] = d;
        }
    int G = L->G;
    L->port = 0;
    for (int a = 0; a < G; a++) {
        int sum = 0;
        for (int b = 0; b < G; b++) {
            const cl_link *l = &t->link[L->gpu[a]][L->gpu[b]];
            if (a != b && l->kind == CL_LINK_UNKNOWN) {
                cl_set_error("GPU%d-GPU%d: link class '%s' is not modelled", a, b, l->code);
                return CL_ERR_INVALID;
            }
            if (l->kind == CL_LINK_NVLINK) {
                sum += l->nvlinks;
                L->port = l->nvlinks > L->port ? l->nvlinks : L->port;
            }
        }
        if (sum > CL_SIM_TOPO_MAX_NVLINKS)
            n->nvswitch = 1;
    }
    pcie_groups(t, L->gpu, G, 0, L->sw);
    pcie_groups(t, L->gpu, G, 1, L->pxb);
    pcie_groups(t, L->gpu, G, 2, L->cpu);
    /* Without PCIe information (NV and SYS only), GPUs share a CPU unless some
     * pair of them is printed SYS: join groups greedily in GPU order. */
    for (int a = 1; a < G; a++)
        for (int b = 0; b < a; b++) {
            if (L->cpu[a] == L->cpu[b])
                continue;
            int conflict = 0;
            for (int x = 0; x < G && !conflict; x++)
                for (int y = 0; y < G && !conflict; y++)
                    conflict = L->cpu[x] == L->cpu[a] && L->cpu[y] == L->cpu[b] &&
                               t->link[L->gpu[x]][L->gpu[y]].kind == CL_LINK_SYS;
            if (!conflict) {
                int from = L->cpu[a], to = L->cpu[b];
                for (int x = 0; x < G; x++)
                    if (L->cpu[x] == from)
                        L->cpu[x] = to;
            }
        }
    /* NICs: each below the nearest GPU's switch, upper switch or CPU. */
    L->nnic = 0;
    for (int d = 0; d < t->ndevices; d++) {
        if (t->dev[d].kind != CL_DEV_NIC)
            continue;
        int best = 3, at = -1;
        for (int a = 0; a < G; a++) {
            int lv = pcie_level(t->link[L->gpu[a]][d].kind);
            if (lv < best)
                best = lv, at = a;
        }
        if (at < 0)
            continue; /* no GPU closer than SYS: not for GPU traffic */
        L->nic_dev[L->nnic] = d;
        L->nic_gpu[L->nnic] = at;
        L->nic_level[L->nnic++] = best;
    }
    /* Each GPU's NIC: the nearest; GPUs with the same nearest set take them in turn. */
    int best_of[CL_SIM_TOPO_MAX_GPUS];
    for (int a = 0; a < G; a++) {
        best_of[a] = 4;
        for (int k = 0; k < L->nnic; k++) {
            int lv = pcie_level(t->link[L->gpu[a]][L->nic_dev[k]].kind);
            best_of[a] = lv < best_of[a] ? lv : best_of[a];
        }
        int ties[CL_TOPO_MAX_DEVICES], nt = 0;
        for (int k = 0; k < L->nnic; k++)
            if (pcie_level(t->link[L->gpu[a]][L->nic_dev[k]].kind) == best_of[a])
                ties[nt++] = k;
        int turn = 0;
        for (int b = 0; b < a; b++) {
            int same = best_of[b] == best_of[a];
            for (int k = 0; k < L->nnic && same; k++)
                same = (pcie_level(t->link[L->gpu[a]][L->nic_dev[k]].kind) == best_of[a]) ==
                       (pcie_level(t->link[L->gpu[b]][L->nic_dev[k]].kind) == best_of[b]);
            turn += same;
        }
        L->nic_of[a] = nt ? ties[turn % nt] : -1;
    }
    return CL_OK;
}

/* The vertices and links of node `node`; chains of its GPUs and NICs. */
static cl_result build_node(const cl_topo *t, const cl_sim_topo_params *p, const layout *L,
                            int node, int netsw, cl_sim_topo_net *n, chain *gchain, chain *nchain,
                            int *nvs_out)
{
    cl_sim_graph *g = &n->g;
    int G = L->G, base = node * G;
    int sw_v[CL_SIM_TOPO_MAX_GPUS], pxb_v[CL_SIM_TOPO_MAX_GPUS], cpu_v[CL_SIM_TOPO_MAX_GPUS];
    int nvs = -1;
    for (int i = 0; i < G; i++)
        if ((n->gpu_v[base + i] = cl_sim_graph_add_vertex(g, CL_SIM_V_GPU, 0)) < 0)
            return CL_ERR_NOMEM;
    if (n->nvswitch && (nvs = cl_sim_graph_add_vertex(g, CL_SIM_V_NVSWITCH, 0)) < 0)
        return CL_ERR_NOMEM;
    *nvs_out = nvs;
    for (int i = 0; i < G; i++) {
        if (L->cpu[i] == i && (cpu_v[i] = cl_sim_graph_add_vertex(g, CL_SIM_V_CPU, 0)) < 0)
            return CL_ERR_NOMEM;
        if (L->pxb[i] == i && (pxb_v[i] = cl_sim_graph_add_vertex(g, CL_SIM_V_PCISW, 0)) < 0)
            return CL_ERR_NOMEM;
        if (L->sw[i] == i && (sw_v[i] = cl_sim_graph_add_vertex(g, CL_SIM_V_PCISW, 0)) < 0)
            return CL_ERR_NOMEM;
    }
    double pci = p->pci_gbps * GBPS;
    for (int i = 0; i < G; i++) {
        if (L->cpu[i] == i)
            for (int j = 0; j < i; j++)
                if (L->cpu[j] == j &&
                    cl_sim_graph_add_duplex(g, cpu_v[j], cpu_v[i], p->sys_gbps * GBPS, 0,
                                            CL_SIM_L_SYS) < 0)
                    return CL_ERR_NOMEM;
        if (L->pxb[i] == i &&
            cl_sim_graph_add_duplex(g, pxb_v[i], cpu_v[L->cpu[i]], pci, 0, CL_SIM_L_PCI) < 0)
            return CL_ERR_NOMEM;
        if (L->sw[i] == i &&
            cl_sim_graph_add_duplex(g, sw_v[i], pxb_v[L->pxb[i]], pci, 0, CL_SIM_L_PCI) < 0)
            return CL_ERR_NOMEM;
        if (cl_sim_graph_add_duplex(g, n->gpu_v[base + i], sw_v[L->sw[i]], pci, 0, CL_SIM_L_PCI) <
            0)
            return CL_ERR_NOMEM;
        gchain[i] =
            (chain){{n->gpu_v[base + i], sw_v[L->sw[i]], pxb_v[L->pxb[i]], cpu_v[L->cpu[i]]}, 4};
    }
    for (int k = 0; k < L->nnic; k++) {
        int a = L->nic_gpu[k], v = cl_sim_graph_add_vertex(g, CL_SIM_V_NIC, 0);
        if (v < 0)
            return CL_ERR_NOMEM;
        const chain *c = &gchain[a];
        int at = L->nic_level[k] + 1; /* 1 the switch, 2 the upper switch, 3 the CPU */
        nchain[k].n = 0;
        nchain[k].v[nchain[k].n++] = v;
        for (int j = at; j < 4; j++)
            nchain[k].v[nchain[k].n++] = c->v[j];
        if (cl_sim_graph_add_duplex(g, v, c->v[at], pci, 0, CL_SIM_L_PCI) < 0)
            return CL_ERR_NOMEM;
        if (netsw >= 0 &&
            cl_sim_graph_add_duplex(g, v, netsw, p->net_gbps * GBPS, 0, CL_SIM_L_NET) < 0)
            return CL_ERR_NOMEM;
    }
    if (n->nvswitch) {
        for (int i = 0; i < G; i++)
            if (cl_sim_graph_add_duplex(g, n->gpu_v[base + i], nvs, L->port * p->nvlink_gbps * GBPS,
                                        0, CL_SIM_L_NVLINK) < 0)
                return CL_ERR_NOMEM;
    } else {
        for (int a = 0; a < G; a++)
            for (int b = a + 1; b < G; b++) {
                const cl_link *l = &t->link[L->gpu[a]][L->gpu[b]];
                if (l->kind == CL_LINK_NVLINK &&
                    cl_sim_graph_add_duplex(g, n->gpu_v[base + a], n->gpu_v[base + b],
                                            l->nvlinks * p->nvlink_gbps * GBPS, 0,
                                            CL_SIM_L_NVLINK) < 0)
                    return CL_ERR_NOMEM;
            }
    }
    return CL_OK;
}

/* NVLinks between GPUs a and b of one node (0 without, or on an NVSwitch). */
static int nvlinks(const cl_topo *t, const layout *L, int a, int b)
{
    const cl_link *l = &t->link[L->gpu[a]][L->gpu[b]];
    return l->kind == CL_LINK_NVLINK ? l->nvlinks : 0;
}

/* The route and type of GPUs a, b of one node (local indices), at global
 * indices ga, gb. */
static cl_result node_path(const cl_topo *t, const layout *L, cl_sim_topo_net *n, int level,
                           const chain *gc, int nvs, int a, int b, int ga, int gb)
{
    int vs[2 * CL_SIM_TOPO_MAX_HOPS], nv = 0, type;
    int va = n->gpu_v[ga], vb = n->gpu_v[gb], via = -1, widest = 0;
    if (nvlinks(t, L, a, b))
        type = CL_SIM_PATH_NVL;
    else {
        for (int c = 0; c < L->G && !n->nvswitch; c++) {
            int w = nvlinks(t, L, a, c) < nvlinks(t, L, c, b) ? nvlinks(t, L, a, c)
                                                              : nvlinks(t, L, c, b);
            if (c != a && c != b && w > widest)
                widest = w, via = c;
        }
        type = via >= 0                 ? CL_SIM_PATH_NVB
               : L->sw[a] == L->sw[b]   ? CL_SIM_PATH_PIX
               : L->pxb[a] == L->pxb[b] ? CL_SIM_PATH_PXB
               : L->cpu[a] == L->cpu[b] ? CL_SIM_PATH_PHB
                                        : CL_SIM_PATH_SYS;
    }
    if (type > level) {
        nv = walk_host(&gc[a], &gc[b], vs, 0);
    } else if (type == CL_SIM_PATH_NVL) {
        vs[nv++] = va;
        if (n->nvswitch)
            vs[nv++] = nvs;
        vs[nv++] = vb;
    } else if (type == CL_SIM_PATH_NVB) {
        int vc = n->gpu_v[ga - a + via];
        vs[nv++] = va, vs[nv++] = vc, vs[nv++] = vb;
    } else {
        nv = walk(&gc[a], &gc[b], vs, 0);
    }
    return set_path(n, ga, gb, vs, nv, type);
}

cl_result cl_sim_topo_net_build(const cl_topo *t, const cl_sim_topo_params *p, cl_sim_topo_net *n)
{
    static layout L;
    memset(n, 0, sizeof *n);
    int nodes = p->nodes > 0 ? p->nodes : 1;
    double net = p->net_gbps > 0 ? p->net_gbps : 12;
    int level = p->p2p_level > 0 ? p->p2p_level : CL_SIM_PATH_PXB;
    cl_sim_topo_params q = *p;
    q.net_gbps = net;
    CL_CHECK(read_layout(t, n, &L));
    int G = L.G;
    if (G < 1 || nodes > CL_SIM_TOPO_MAX_NODES || G * nodes > CL_SIM_TOPO_MAX_GPUS ||
        !(p->nvlink_gbps > 0) || !(p->pci_gbps > 0) || !(p->sys_gbps > 0)) {
        cl_set_error("need 1 to %d GPUs in all, at most %d nodes and positive bandwidths "
                     "(found %d GPUs x %d nodes)",
                     CL_SIM_TOPO_MAX_GPUS, CL_SIM_TOPO_MAX_NODES, G, nodes);
        return CL_ERR_INVALID;
    }
    if (nodes > 1 && L.nnic == 0) {
        cl_set_error("no NIC near a GPU in the topology: nodes cannot be joined");
        return CL_ERR_INVALID;
    }
    n->ngpus = G * nodes;
    n->nodes = nodes;
    n->gpus_per_node = G;
    n->nnics = L.nnic;
    cl_sim_graph *g = &n->g;
    int netsw = -1;
    if (nodes > 1 && (netsw = cl_sim_graph_add_vertex(g, CL_SIM_V_SWITCH, 1)) < 0)
        return CL_ERR_NOMEM;
    static chain gchain[CL_SIM_TOPO_MAX_NODES][CL_SIM_TOPO_MAX_GPUS];
    static chain nchain[CL_SIM_TOPO_MAX_NODES][CL_TOPO_MAX_DEVICES];
    int nvs[CL_SIM_TOPO_MAX_NODES];
    for (int k = 0; k < nodes; k++)
        CL_CHECK(build_node(t, &q, &L, k, netsw, n, gchain[k], nchain[k], &nvs[k]));
    CL_CHECK(cl_sim_graph_finalize(g));
    for (int a = 0; a < n->ngpus; a++)
        n->nic_of[a] = L.nic_of[a % G];
    for (int a = 0; a < n->ngpus; a++)
        for (int b = 0; b < n->ngpus; b++) {
            int na = a / G, nb = b / G, la = a % G, lb = b % G;
            if (a == b) {
                n->npath[a][b] = 0;
                n->path_type[a][b] = CL_SIM_PATH_LOC;
                snprintf(n->path_code[a][b], sizeof n->path_code[a][b], "LOC");
            } else if (na == nb) {
                CL_CHECK(node_path(t, &L, n, level, gchain[na], nvs[na], la, lb, a, b));
            } else {
                int vs[4 * CL_SIM_TOPO_MAX_HOPS], nv;
                nv = walk(&gchain[na][la], &nchain[na][L.nic_of[la]], vs, 0);
                vs[nv++] = netsw;
                chain back = nchain[nb][L.nic_of[lb]];
                nv = walk(&back, &gchain[nb][lb], vs, nv);
                CL_CHECK(set_path(n, a, b, vs, nv, CL_SIM_PATH_NET));
            }
        }
    return CL_OK;
}

void cl_sim_topo_net_free(cl_sim_topo_net *n) { cl_sim_graph_free(&n->g); }

double cl_sim_topo_link_gbps(const cl_sim_topo_net *n, int l)
{
    return l >= 0 && l < n->g.nl ? n->g.l[l].bw / GBPS : 0;
}

double cl_sim_topo_path_gbps(const cl_sim_topo_net *n, int a, int b)
{
    double m = 0;
    for (int k = 0; k < n->npath[a][b]; k++) {
        double bw = cl_sim_topo_link_gbps(n, n->path[a][b][k]);
        m = k == 0 || bw < m ? bw : m;
    }
    return m;
}

int cl_sim_topo_ring_ok(const cl_sim_topo_net *n, const int *ring)
{
    int seen[CL_SIM_TOPO_MAX_GPUS] = {0};
    for (int i = 0; i < n->ngpus; i++) {
        if (ring[i] < 0 || ring[i] >= n->ngpus || seen[ring[i]])
            return 0;
        seen[ring[i]] = 1;
    }
    return 1;
}

cl_result cl_sim_topo_rings_busbw(const cl_sim_topo_net *n, const int *rings, int nrings,
                                  double *busbw_gbps)
{
    *busbw_gbps = 0;
    int G = n->ngpus;
    if (nrings < 1) {
        cl_set_error("no ring channel");
        return CL_ERR_INVALID;
    }
    for (int r = 0; r < nrings; r++)
        if (!cl_sim_topo_ring_ok(n, rings + (size_t)r * G)) {
            cl_set_error("channel %d is not a ring over all %d GPUs (each exactly once)", r, G);
            return CL_ERR_INVALID;
        }
    if (G < 2)
        return CL_OK;
    const double chunk = 1e6; /* bytes per flow; the result does not depend on it */
    cl_sim_engine e;
    cl_result rc = cl_sim_engine_init(&e, &n->g, 1.0);
    for (int r = 0; r < nrings && rc == CL_OK; r++)
        for (int i = 0; i < G; i++) {
            int a = rings[(size_t)r * G + i], b = rings[(size_t)r * G + (i + 1) % G];
            if (cl_sim_engine_add(&e, n->path[a][b], n->npath[a][b], chunk, 0, 0, (long)r * G + i) <
                0)
                rc = CL_ERR_NOMEM;
        }
    if (rc == CL_OK)
        rc = cl_sim_engine_run(&e);
    if (rc == CL_OK && e.now > 0)
        *busbw_gbps = chunk * nrings / e.now / GBPS;
    cl_sim_engine_free(&e);
    return rc;
}
