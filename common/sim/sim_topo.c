/* sim_topo.c: a server graph from a cl_topo (NVLink, NVSwitch, PCIe tree, SMP), and ring channels. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_engine.h"
#include "sim_topo.h"

#define GBPS 1e9

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
    case CL_LINK_PIX:
        return 1;
    case CL_LINK_PXB:
        return level >= 1;
    case CL_LINK_PHB:
    case CL_LINK_NODE:
        return level >= 2;
    default:
        return 0;
    }
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

/* Append the links along the vertex walk vs[0..nv) to the path of (a, b). */
static cl_result set_path(cl_sim_topo_net *n, int a, int b, const int *vs, int nv, const char *code)
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
    snprintf(n->path_code[a][b], sizeof n->path_code[a][b], "%s", code);
    return CL_OK;
}

cl_result cl_sim_topo_net_build(const cl_topo *t, const cl_sim_topo_params *p,
                                cl_sim_topo_net *n)
{
    memset(n, 0, sizeof *n);
    int gpu[CL_SIM_TOPO_MAX_GPUS], G = 0;
    for (int d = 0; d < t->ndevices; d++)
        if (t->dev[d].kind == CL_DEV_GPU) {
            if (G == CL_SIM_TOPO_MAX_GPUS) {
                cl_set_error("more than %d GPUs", CL_SIM_TOPO_MAX_GPUS);
                return CL_ERR_INVALID;
            }
            gpu[G++] = d;
        }
    if (G < 1 || !(p->nvlink_gbps > 0) || !(p->pci_gbps > 0) || !(p->sys_gbps > 0)) {
        cl_set_error("need at least one GPU and positive bandwidths (found %d GPUs)", G);
        return CL_ERR_INVALID;
    }
    n->ngpus = G;
    int port = 0;
    for (int a = 0; a < G; a++) {
        int sum = 0;
        for (int b = 0; b < G; b++) {
            const cl_link *l = &t->link[gpu[a]][gpu[b]];
            if (a != b && l->kind == CL_LINK_UNKNOWN) {
                cl_set_error("GPU%d-GPU%d: link class '%s' is not modelled", a, b, l->code);
                return CL_ERR_INVALID;
            }
            if (l->kind == CL_LINK_NVLINK) {
                sum += l->nvlinks;
                port = l->nvlinks > port ? l->nvlinks : port;
            }
        }
        if (sum > CL_SIM_TOPO_MAX_NVLINKS)
            n->nvswitch = 1;
    }
    int sw[CL_SIM_TOPO_MAX_GPUS], pxb[CL_SIM_TOPO_MAX_GPUS], cpu[CL_SIM_TOPO_MAX_GPUS];
    pcie_groups(t, gpu, G, 0, sw);
    pcie_groups(t, gpu, G, 1, pxb);
    pcie_groups(t, gpu, G, 2, cpu);
    /* Without PCIe information (NV and SYS only), GPUs share a CPU unless some
     * pair of them is printed SYS: join groups greedily in GPU order. */
    for (int a = 1; a < G; a++)
        for (int b = 0; b < a; b++) {
            if (cpu[a] == cpu[b])
                continue;
            int conflict = 0;
            for (int x = 0; x < G && !conflict; x++)
                for (int y = 0; y < G && !conflict; y++)
                    conflict = cpu[x] == cpu[a] && cpu[y] == cpu[b] &&
                               t->link[gpu[x]][gpu[y]].kind == CL_LINK_SYS;
            if (!conflict) {
                int from = cpu[a], to = cpu[b];
                for (int x = 0; x < G; x++)
                    if (cpu[x] == from)
                        cpu[x] = to;
            }
        }

    cl_sim_graph *g = &n->g;
    int sw_v[CL_SIM_TOPO_MAX_GPUS], pxb_v[CL_SIM_TOPO_MAX_GPUS], cpu_v[CL_SIM_TOPO_MAX_GPUS];
    int nvs = -1;
    for (int i = 0; i < G; i++)
        if ((n->gpu_v[i] = cl_sim_graph_add_vertex(g, CL_SIM_V_GPU, 0)) < 0)
            return CL_ERR_NOMEM;
    if (n->nvswitch && (nvs = cl_sim_graph_add_vertex(g, CL_SIM_V_NVSWITCH, 0)) < 0)
        return CL_ERR_NOMEM;
    for (int i = 0; i < G; i++) {
        if (cpu[i] == i && (cpu_v[i] = cl_sim_graph_add_vertex(g, CL_SIM_V_CPU, 0)) < 0)
            return CL_ERR_NOMEM;
        if (pxb[i] == i && (pxb_v[i] = cl_sim_graph_add_vertex(g, CL_SIM_V_PCISW, 0)) < 0)
            return CL_ERR_NOMEM;
        if (sw[i] == i && (sw_v[i] = cl_sim_graph_add_vertex(g, CL_SIM_V_PCISW, 0)) < 0)
            return CL_ERR_NOMEM;
    }
    double pci = p->pci_gbps * GBPS;
    for (int i = 0; i < G; i++) {
        if (cpu[i] == i)
            for (int j = 0; j < i; j++)
                if (cpu[j] == j && cl_sim_graph_add_duplex(g, cpu_v[j], cpu_v[i],
                                                           p->sys_gbps * GBPS, 0,
                                                           CL_SIM_L_SYS) < 0)
                    return CL_ERR_NOMEM;
        if (pxb[i] == i && cl_sim_graph_add_duplex(g, pxb_v[i], cpu_v[cpu[i]], pci, 0,
                                                   CL_SIM_L_PCI) < 0)
            return CL_ERR_NOMEM;
        if (sw[i] == i && cl_sim_graph_add_duplex(g, sw_v[i], pxb_v[pxb[i]], pci, 0,
                                                  CL_SIM_L_PCI) < 0)
            return CL_ERR_NOMEM;
        if (cl_sim_graph_add_duplex(g, n->gpu_v[i], sw_v[sw[i]], pci, 0, CL_SIM_L_PCI) < 0)
            return CL_ERR_NOMEM;
    }
    if (n->nvswitch) {
        for (int i = 0; i < G; i++)
            if (cl_sim_graph_add_duplex(g, n->gpu_v[i], nvs, port * p->nvlink_gbps * GBPS, 0,
                                        CL_SIM_L_NVLINK) < 0)
                return CL_ERR_NOMEM;
    } else {
        for (int a = 0; a < G; a++)
            for (int b = a + 1; b < G; b++) {
                const cl_link *l = &t->link[gpu[a]][gpu[b]];
                if (l->kind == CL_LINK_NVLINK &&
                    cl_sim_graph_add_duplex(g, n->gpu_v[a], n->gpu_v[b],
                                            l->nvlinks * p->nvlink_gbps * GBPS, 0,
                                            CL_SIM_L_NVLINK) < 0)
                    return CL_ERR_NOMEM;
            }
    }
    cl_result rc = cl_sim_graph_finalize(g);
    if (rc != CL_OK)
        return rc;
    for (int a = 0; a < G; a++)
        for (int b = 0; b < G; b++) {
            if (a == b) {
                snprintf(n->path_code[a][b], sizeof n->path_code[a][b], "LOC");
                continue;
            }
            if (t->link[gpu[a]][gpu[b]].kind == CL_LINK_NVLINK) {
                int vs[3] = {n->gpu_v[a], n->nvswitch ? nvs : n->gpu_v[b], n->gpu_v[b]};
                CL_CHECK(set_path(n, a, b, vs, 3, "NVL"));
                continue;
            }
            int va = n->gpu_v[a], vb = n->gpu_v[b];
            int sa = sw_v[sw[a]], sb = sw_v[sw[b]], xa = pxb_v[pxb[a]], xb = pxb_v[pxb[b]];
            int ca = cpu_v[cpu[a]], cb = cpu_v[cpu[b]];
            if (sw[a] == sw[b]) {
                int vs[3] = {va, sa, vb};
                rc = set_path(n, a, b, vs, 3, "PIX");
            } else if (pxb[a] == pxb[b]) {
                int vs[5] = {va, sa, xa, sb, vb};
                rc = set_path(n, a, b, vs, 5, "PXB");
            } else {
                int vs[8] = {va, sa, xa, ca, cb, xb, sb, vb};
                rc = set_path(n, a, b, vs, 8, cpu[a] == cpu[b] ? "PHB" : "SYS");
            }
            if (rc != CL_OK)
                return rc;
        }
    return CL_OK;
}

void cl_sim_topo_net_free(cl_sim_topo_net *n)
{
    cl_sim_graph_free(&n->g);
}

double cl_sim_topo_link_gbps(const cl_sim_topo_net *n, int l)
{
    return l >= 0 && l < n->g.nl ? n->g.l[l].bw / GBPS : 0;
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
            if (cl_sim_engine_add(&e, n->path[a][b], n->npath[a][b], chunk, 0, 0,
                                  (long)r * G + i) < 0)
                rc = CL_ERR_NOMEM;
        }
    if (rc == CL_OK)
        rc = cl_sim_engine_run(&e);
    if (rc == CL_OK && e.now > 0)
        *busbw_gbps = chunk * nrings / e.now / GBPS;
    cl_sim_engine_free(&e);
    return rc;
}
