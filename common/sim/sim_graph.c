/* sim_graph.c: growable vertex and link arrays of the simulated machine, with CSR adjacency. */
#include <stdlib.h>
#include <string.h>

#include "sim_graph.h"

int cl_sim_grow(void **p, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return 0;
    int ncap = *cap ? *cap * 2 : 64;
    while (ncap < need)
        ncap *= 2;
    void *q = realloc(*p, (size_t)ncap * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = ncap;
    return 0;
}

int cl_sim_graph_add_vertex(cl_sim_graph *g, cl_sim_vkind kind, int level)
{
    int cap = g->cap_v;
    if (cl_sim_grow((void **)&g->vkind, &cap, g->nv + 1, sizeof *g->vkind))
        return -1;
    cap = g->cap_v;
    if (cl_sim_grow((void **)&g->vlevel, &cap, g->nv + 1, sizeof *g->vlevel))
        return -1;
    g->cap_v = cap;
    g->vkind[g->nv] = (unsigned char)kind;
    g->vlevel[g->nv] = level;
    return g->nv++;
}

int cl_sim_graph_add_link(cl_sim_graph *g, int src, int dst, double bw, double lat,
                          cl_sim_lkind kind)
{
    if (cl_sim_grow((void **)&g->l, &g->cap_l, g->nl + 1, sizeof *g->l))
        return -1;
    g->l[g->nl] = (cl_sim_link){.src = src, .dst = dst, .bw = bw, .lat = lat, .kind = kind};
    return g->nl++;
}

int cl_sim_graph_add_duplex(cl_sim_graph *g, int a, int b, double bw, double lat, cl_sim_lkind kind)
{
    int id = cl_sim_graph_add_link(g, a, b, bw, lat, kind);
    if (id < 0 || cl_sim_graph_add_link(g, b, a, bw, lat, kind) < 0)
        return -1;
    return id;
}

cl_result cl_sim_graph_finalize(cl_sim_graph *g)
{
    free(g->adj_off);
    free(g->adj);
    g->adj_off = calloc((size_t)g->nv + 1, sizeof *g->adj_off);
    g->adj = malloc(((size_t)g->nl + 1) * sizeof *g->adj);
    if (!g->adj_off || !g->adj)
        return CL_ERR_NOMEM;
    for (int i = 0; i < g->nl; i++)
        g->adj_off[g->l[i].src + 1]++;
    for (int v = 0; v < g->nv; v++)
        g->adj_off[v + 1] += g->adj_off[v];
    int *fill = malloc(((size_t)g->nv + 1) * sizeof *fill);
    if (!fill)
        return CL_ERR_NOMEM;
    memcpy(fill, g->adj_off, ((size_t)g->nv + 1) * sizeof *fill);
    for (int i = 0; i < g->nl; i++)
        g->adj[fill[g->l[i].src]++] = i;
    free(fill);
    return CL_OK;
}

void cl_sim_graph_free(cl_sim_graph *g)
{
    free(g->vkind);
    free(g->vlevel);
    free(g->l);
    free(g->adj_off);
    free(g->adj);
    memset(g, 0, sizeof *g);
}
