/* harness_server.c: lab 12's servers: GPUs and RDMA NICs in an hwloc topology, NCCL's path
 * classes, and the bandwidth all GPUs get at once through their NICs. */
#include <stdlib.h>
#include <string.h>

#include "lab12_harness.h"
#include "sim/sim_maxmin.h"

static void locate(hwloc_obj_t dev, lab12_pcipos *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->busid, sizeof p->busid, "%04x:%02x:%02x.%x", dev->attr->pcidev.domain,
             dev->attr->pcidev.bus, dev->attr->pcidev.dev, dev->attr->pcidev.func);
    int ids[LAB12_MAX_DEPTH], n = 0;
    p->hostbridge = -1;
    hwloc_obj_t o = dev->parent;
    for (; o && o->type == HWLOC_OBJ_BRIDGE; o = o->parent) {
        if (o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST) {
            p->hostbridge = (int)o->gp_index;
            o = o->parent;
            break;
        }
        if (n < LAB12_MAX_DEPTH)
            ids[n++] = (int)o->gp_index;
    }
    for (int i = 0; i < n; i++) /* top first */
        p->bridge[i] = ids[n - 1 - i];
    p->nbridges = n;
    while (o && !o->cpuset)
        o = o->parent;
    p->numa = o && o->memory_arity == 1 ? (int)o->memory_first_child->os_index : -1;
}

static int by_busid(const void *a, const void *b)
{
    return strcmp(((const lab12_pcipos *)a)->busid, ((const lab12_pcipos *)b)->busid);
}

/* GPUs and RDMA NICs (PCI functions with an OpenFabrics OS device), each sorted by bus id. */
cl_result server_load(const char *path, server *s)
{
    memset(s, 0, sizeof *s);
    if (hwloc_topology_init(&s->topo) != 0)
        return CL_ERR_NOMEM;
    hwloc_topology_set_io_types_filter(s->topo, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (hwloc_topology_set_xml(s->topo, path) != 0 || hwloc_topology_load(s->topo) != 0) {
        cl_set_error("%s: hwloc cannot load it", path);
        hwloc_topology_destroy(s->topo);
        s->topo = NULL;
        return CL_ERR_PARSE;
    }
    for (hwloc_obj_t o = NULL; (o = hwloc_get_next_pcidev(s->topo, o));) {
        unsigned cls = o->attr->pcidev.class_id;
        if (o->attr->pcidev.vendor_id == 0x10de && (cls == 0x0302 || cls == 0x0300) &&
            s->ngpus < MAXD)
            s->gobj[s->ngpus++] = o;
        for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
            if (c->type == HWLOC_OBJ_OS_DEVICE &&
                c->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && s->nnics < MAXD) {
                s->nobj[s->nnics++] = o;
                break;
            }
    }
    /* Sort the objects by bus id (insertion sort: a few dozen), then locate them. */
    hwloc_obj_t *sets[2] = {s->gobj, s->nobj};
    int counts[2] = {s->ngpus, s->nnics};
    lab12_pcipos *pos[2] = {s->gpu, s->nic};
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < counts[k]; i++)
            locate(sets[k][i], &pos[k][i]);
        for (int i = 1; i < counts[k]; i++)
            for (int j = i; j > 0 && by_busid(&pos[k][j - 1], &pos[k][j]) > 0; j--) {
                lab12_pcipos t = pos[k][j];
                pos[k][j] = pos[k][j - 1], pos[k][j - 1] = t;
                hwloc_obj_t o = sets[k][j];
                sets[k][j] = sets[k][j - 1], sets[k][j - 1] = o;
            }
    }
    hwloc_obj_t pkg = hwloc_get_obj_by_type(s->topo, HWLOC_OBJ_PACKAGE, 0);
    const char *vendor = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUVendor") : NULL;
    s->amd = vendor && strcmp(vendor, "AuthenticAMD") == 0;
    return CL_OK;
}

void server_free(server *s)
{
    if (s->topo)
        hwloc_topology_destroy(s->topo);
    s->topo = NULL;
}

int ref_classify(const lab12_pcipos *a, const lab12_pcipos *b)
{
    if (strcmp(a->busid, b->busid) == 0)
        return LAB12_LOC;
    if (a->numa != b->numa)
        return LAB12_SYS;
    if (a->hostbridge != b->hostbridge || a->hostbridge < 0)
        return LAB12_PHB;
    int common = 0;
    while (common < a->nbridges && common < b->nbridges && a->bridge[common] == b->bridge[common])
        common++;
    if (common == 0)
        return LAB12_PHB;
    return a->nbridges - common <= 1 && b->nbridges - common <= 1 ? LAB12_PIX : LAB12_PXB;
}

/* =========================================================================================
 * The NIC of every GPU: all GPUs send at once; rates are max-min fair over the server's
 * PCIe tree (hwloc's link speeds), the SMP link and the NICs' line rates. A GPU-NIC pair
 * that NCCL would run with GPUDirect RDMA (path <= PXB by default) moves data straight
 * down the tree; any other pair stages it in host memory: up to the GPU's CPU, across the
 * SMP link if the NIC hangs off the other CPU, down to the NIC.
 * ========================================================================================= */

#define NOLIMIT 1e15

typedef struct flownet {
    hwloc_obj_t v[512]; /* vertices: hwloc objects (PCI devices, bridges, CPUs) */
    int nv;
    double bw[2048]; /* links: 2 per edge (up, down), then SMP and line-rate links */
    int nl;
    int up[512]; /* vertex -> link to its parent (down link = up + 1); -1 at a CPU */
} flownet;

static hwloc_obj_t cpu_of(hwloc_obj_t o)
{
    while (o && !o->cpuset)
        o = o->parent;
    return o;
}

static int vertex(flownet *f, hwloc_obj_t o)
{
    for (int i = 0; i < f->nv; i++)
        if (f->v[i] == o)
            return i;
    if (f->nv == 512)
        return -1;
    f->v[f->nv] = o;
    f->up[f->nv] = -1;
    return f->nv++;
}

/* The link speed of o's own upstream PCIe link (GB/s), or no limit when not recorded. */
static double link_gbps(hwloc_obj_t o)
{
    float s = 0;
    if (o->type == HWLOC_OBJ_PCI_DEVICE)
        s = o->attr->pcidev.linkspeed;
    else if (o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI)
        s = o->attr->bridge.upstream.pci.linkspeed;
    return s > 0 ? (double)s * 1e9 : NOLIMIT;
}

/* Add o and its ancestors up to its CPU; returns o's vertex. */
static int add_chain(flownet *f, hwloc_obj_t o)
{
    int first = vertex(f, o);
    for (int v = first; v >= 0 && f->v[v]->cpuset == NULL;) {
        hwloc_obj_t parent = f->v[v]->parent;
        if (f->up[v] < 0) {
            f->up[v] = f->nl;
            f->bw[f->nl++] = link_gbps(f->v[v]);
            f->bw[f->nl++] = link_gbps(f->v[v]);
        }
        if (!parent)
            break;
        v = vertex(f, parent);
    }
    return first;
}

/* Links from vertex a up to ancestor top (exclusive), as up links. */
static int climb(const flownet *f, int a, hwloc_obj_t top, int *path, int len)
{
    for (int v = a; v >= 0 && f->v[v] != top && f->up[v] >= 0;) {
        path[len++] = f->up[v];
        hwloc_obj_t p = f->v[v]->parent;
        int next = -1;
        for (int i = 0; i < f->nv; i++)
            if (f->v[i] == p)
                next = i;
        v = next;
    }
    return len;
}

/* The same, downward from top to b (down links, in order). */
static int descend(const flownet *f, int b, hwloc_obj_t top, int *path, int len)
{
    int tmp[64], n = climb(f, b, top, tmp, 0);
    for (int i = n - 1; i >= 0; i--)
        path[len++] = tmp[i] + 1;
    return len;
}

static hwloc_obj_t common_ancestor(hwloc_obj_t a, hwloc_obj_t b)
{
    for (hwloc_obj_t x = a; x; x = x->parent)
        for (hwloc_obj_t y = b; y; y = y->parent)
            if (x == y)
                return x;
    return NULL;
}

cl_result aggregate(const server *s, const int *nic_of, double nic_gbps, double smp_gbps,
                    double *total)
{
    flownet *f = calloc(1, sizeof *f);
    int *path = malloc(sizeof(int) * MAXD * 64), off[MAXD + 1];
    double rate[MAXD];
    if (!f || !path) {
        free(f), free(path);
        return CL_ERR_NOMEM;
    }
    int gv[MAXD], nvx[MAXD], wire[MAXD];
    for (int g = 0; g < s->ngpus; g++)
        gv[g] = add_chain(f, s->gobj[g]);
    for (int n = 0; n < s->nnics; n++) {
        nvx[n] = add_chain(f, s->nobj[n]);
        wire[n] = f->nl;
        f->bw[f->nl++] = nic_gbps * 1e9 / 8; /* the NIC's line rate, Gb/s */
    }
    int smp = f->nl; /* one SMP link per direction */
    f->bw[f->nl++] = smp_gbps * 1e9;
    f->bw[f->nl++] = smp_gbps * 1e9;
    int len = 0;
    for (int g = 0; g < s->ngpus; g++) {
        off[g] = len;
        int n = nic_of[g];
        hwloc_obj_t go = s->gobj[g], no = s->nobj[n];
        hwloc_obj_t cg = cpu_of(go), cn = cpu_of(no);
        int gdr = ref_classify(&s->gpu[g], &s->nic[n]) <= LAB12_PXB;
        if (gdr) { /* straight through the lowest common ancestor */
            hwloc_obj_t top = common_ancestor(go, no);
            if (cpu_of(top) == top && cg != cn)
                top = NULL;
            if (top) {
                len = climb(f, gv[g], top, path, len);
                len = descend(f, nvx[n], top, path, len);
            } else {
                gdr = 0;
            }
        }
        if (!gdr) { /* through host memory: up to the GPU's CPU, down from the NIC's */
            len = climb(f, gv[g], cg, path, len);
            if (cg != cn)
                path[len++] = smp + (cg->logical_index > cn->logical_index);
            len = descend(f, nvx[n], cn, path, len);
        }
        path[len++] = wire[n];
    }
    off[s->ngpus] = len;
    cl_result rc = cl_sim_maxmin(f->nl, f->bw, s->ngpus, off, path, NULL, rate);
    *total = 0;
    for (int g = 0; rc == CL_OK && g < s->ngpus; g++)
        *total += rate[g] / 1e9;
    free(f), free(path);
    return rc;
}

void ref_assign(const server *s, int *nic_of)
{
    int users[MAXD] = {0};
    for (int g = 0; g < s->ngpus; g++) {
        int best = 0;
        for (int n = 1; n < s->nnics; n++) {
            int p = ref_classify(&s->gpu[g], &s->nic[n]),
                q = ref_classify(&s->gpu[g], &s->nic[best]);
            if (p < q || (p == q && users[n] < users[best]))
                best = n;
        }
        nic_of[g] = best;
        users[best]++;
    }
}
