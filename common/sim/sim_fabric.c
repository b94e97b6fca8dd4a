/* sim_fabric.c: fabric generators: rail-optimised units, leaf-spine, three-tier fat tree.
 *
 * Every fabric link carries the NIC's effective bandwidth (NCCL's per-NIC
 * figure, not the line rate) in each direction; a link entering a switch
 * carries fabric_hop_us of latency. Hosts are attached to leaves in fabric
 * order, which is the order D-mod-K routing uses. `oversubscription` (o:1)
 * removes uplinks of the first tier on every fabric: a rail leaf keeps su/o
 * spine cables, a leaf-spine leaf splits its ports o:1, a fat-tree edge keeps
 * k/(2o) of its k/2 aggregation links.
 */
#include <stdlib.h>

#include "sim_machine.h"

#define US 1e-6

typedef struct fab {
    cl_sim_machine *m;
    double bw, hop;
} fab;

static int new_switch(fab *f, int level)
{
    int v = cl_sim_graph_add_vertex(&f->m->g, CL_SIM_V_SWITCH, level);
    if (v >= 0)
        f->m->nsw++;
    return v;
}

static int new_leaf(fab *f)
{
    int v = new_switch(f, 1);
    if (v < 0)
        return -1;
    f->m->leaf_v[f->m->nleaves] = v;
    return f->m->nleaves++;
}

/* Cable between two switches: latency on each direction (both enter a switch). */
static int cable(fab *f, int a, int b)
{
    return cl_sim_graph_add_duplex(&f->m->g, a, b, f->bw, f->hop, CL_SIM_L_NET) < 0 ? -1 : 0;
}

/* Attach host h to leaf `leaf` as down-port `port` of `ports`. */
static int attach(fab *f, int h, int leaf, int port, int ports)
{
    cl_sim_machine *m = f->m;
    int node = h / m->nics, r = h % m->nics;
    int nic = node * m->tv + m->nic_v[r];
    int lv = m->leaf_v[leaf];
    m->nic_up[h] = cl_sim_graph_add_link(&m->g, nic, lv, f->bw, f->hop, CL_SIM_L_NET);
    m->nic_down[h] = cl_sim_graph_add_link(&m->g, lv, nic, f->bw, 0, CL_SIM_L_NET);
    m->host_leaf[h] = leaf;
    m->host_index[h] = leaf * ports + port;
    return m->nic_up[h] < 0 || m->nic_down[h] < 0 ? -1 : 0;
}

static cl_result rail(fab *f)
{
    cl_sim_machine *m = f->m;
    int su = m->sys.su_nodes > 0 ? m->sys.su_nodes : 32;
    int nsu = (m->nodes + su - 1) / su;
    for (int i = 0; i < nsu * m->nics; i++)
        if (new_leaf(f) < 0)
            return CL_ERR_NOMEM;
    for (int h = 0; h < m->nhosts; h++) {
        int node = h / m->nics, r = h % m->nics;
        if (attach(f, h, (node / su) * m->nics + r, node % su, su))
            return CL_ERR_NOMEM;
    }
    if (m->nleaves == 1)
        return CL_OK;
    /* Spines: su / oversubscription uplinks per leaf (1:1 without), spread
     * round-robin over the spines. */
    int up = (int)(su / m->sys.oversubscription + 0.5);
    if (up < 1)
        up = 1;
    int nspine = (m->nleaves * up + m->sys.fabric_radix - 1) / m->sys.fabric_radix;
    if (nspine > up)
        nspine = up; /* beyond two tiers: a non-blocking core collapsed into `up` spines */
    if (nspine < 1)
        nspine = 1;
    int spine[1024];
    if (nspine > 1024)
        nspine = 1024;
    for (int s = 0; s < nspine; s++)
        if ((spine[s] = new_switch(f, 2)) < 0)
            return CL_ERR_NOMEM;
    for (int l = 0; l < m->nleaves; l++)
        for (int j = 0; j < up; j++)
            if (cable(f, m->leaf_v[l], spine[j % nspine]))
                return CL_ERR_NOMEM;
    return CL_OK;
}

static cl_result leafspine(fab *f)
{
    cl_sim_machine *m = f->m;
    double o = m->sys.oversubscription > 0 ? m->sys.oversubscription : 1;
    int k = m->sys.fabric_radix;
    int down = (int)(k * o / (o + 1) + 0.5);
    if (down < 1)
        down = 1;
    if (down >= k)
        down = k - 1;
    int up = k - down;
    int nleaf = (m->nhosts + down - 1) / down;
    for (int i = 0; i < nleaf; i++)
        if (new_leaf(f) < 0)
            return CL_ERR_NOMEM;
    for (int h = 0; h < m->nhosts; h++)
        if (attach(f, h, h / down, h % down, down))
            return CL_ERR_NOMEM;
    if (nleaf == 1)
        return CL_OK;
    int spine0 = m->g.nv;
    for (int s = 0; s < up; s++)
        if (new_switch(f, 2) < 0)
            return CL_ERR_NOMEM;
    for (int l = 0; l < nleaf; l++)
        for (int s = 0; s < up; s++)
            if (cable(f, m->leaf_v[l], spine0 + s))
                return CL_ERR_NOMEM;
    return CL_OK;
}

static cl_result fattree(fab *f)
{
    cl_sim_machine *m = f->m;
    int k = m->sys.fabric_radix & ~1;
    int half = k / 2;
    if ((long)m->nhosts > (long)k * k * k / 4) {
        cl_set_error("a %d-ary fat tree holds %ld hosts, not %d: raise fabric_radix", k,
                     (long)k * k * k / 4, m->nhosts);
        return CL_ERR_INVALID;
    }
    int nedge = (m->nhosts + half - 1) / half;
    int npod = (nedge + half - 1) / half;
    for (int e = 0; e < nedge; e++)
        if (new_leaf(f) < 0)
            return CL_ERR_NOMEM;
    for (int h = 0; h < m->nhosts; h++)
        if (attach(f, h, h / half, h % half, half))
            return CL_ERR_NOMEM;
    if (nedge == 1)
        return CL_OK;
    int agg0 = m->g.nv;
    for (int a = 0; a < npod * half; a++)
        if (new_switch(f, 2) < 0)
            return CL_ERR_NOMEM;
    /* An oversubscribed edge keeps half / oversubscription of its uplinks. */
    int up = (int)(half / m->sys.oversubscription + 0.5);
    if (up < 1)
        up = 1;
    for (int e = 0; e < nedge; e++)
        for (int a = 0; a < up; a++) /* tapered edges spread over the aggs by rotation */
            if (cable(f, m->leaf_v[e], agg0 + (e / half) * half + (a + (up < half ? e : 0)) % half))
                return CL_ERR_NOMEM;
    if (npod == 1)
        return CL_OK;
    int core0 = m->g.nv;
    for (int c = 0; c < half * half; c++)
        if (new_switch(f, 3) < 0)
            return CL_ERR_NOMEM;
    for (int p = 0; p < npod; p++)
        for (int a = 0; a < half; a++)
            for (int c = 0; c < half; c++)
                if (cable(f, agg0 + p * half + a, core0 + a * half + c))
                    return CL_ERR_NOMEM;
    return CL_OK;
}

cl_result cl_sim_fabric_build(cl_sim_machine *m)
{
    fab f = {.m = m, .bw = m->sys.nic_eff_gbps * 1e9, .hop = m->sys.fabric_hop_us * US};
    m->sw_first = m->g.nv;
    m->nsw = 0;
    m->nleaves = 0;
    m->nic_up = malloc(((size_t)m->nhosts + 1) * sizeof *m->nic_up);
    m->nic_down = malloc(((size_t)m->nhosts + 1) * sizeof *m->nic_down);
    m->host_leaf = malloc(((size_t)m->nhosts + 1) * sizeof *m->host_leaf);
    m->host_index = malloc(((size_t)m->nhosts + 1) * sizeof *m->host_index);
    m->leaf_v = malloc(((size_t)m->nhosts + 1) * sizeof *m->leaf_v);
    if (!m->nic_up || !m->nic_down || !m->host_leaf || !m->host_index || !m->leaf_v)
        return CL_ERR_NOMEM;
    if (m->nhosts == 0)
        return CL_OK;
    switch (m->sys.fabric) {
    case CL_SIM_FABRIC_RAIL: return rail(&f);
    case CL_SIM_FABRIC_LEAFSPINE: return leafspine(&f);
    case CL_SIM_FABRIC_FATTREE: return fattree(&f);
    }
    return CL_ERR_INVALID;
}
