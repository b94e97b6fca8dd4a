/* driver.c: lab 12's plug-in: PCIe paths of recorded servers, NCCL's GDR/P2P decisions, the
 * NIC of every GPU, and staged copies over links the harness emulates or drives.
 *
 *   lab12 paths  file=datasets/hwloc/X.xml          path classes, GPU-NIC and GPU-GPU
 *   lab12 levels path=N gdr=V p2p=V dis=V [amd=1 ngpus=2]   one decision (V: "-" unset,
 *                                                   x:HEX for values with blanks)
 *   lab12 decide file=X.xml gdr=V p2p=V dis=V       every pair of a server
 *   lab12 assign file=X.xml seed=N nic_gbps=G smp_gbps=S   your NIC per GPU, and its
 *                                                   bandwidth with all GPUs sending at once
 *   lab12 model  bytes=B chunk=C nbuf=N bw_in=.. lat_in=.. bw_out=.. lat_out=..
 *   lab12 pipe     [--backend cpu|sim|gpu]          staged copies of awkward sizes, checked
 *   lab12 pipeperf [--bytes 64M --staging 8M --in 2:20 --out 1.6:20 --rounds 5]
 *                                                   yours vs one staging buffer, paired
 *
 * The links: on "cpu" the harness emulates them in real time (a copy over a link ends at
 * start + latency + n / bandwidth, and a wait sleeps until then), on "sim" in virtual
 * time, and on "gpu" they are real: a CPU copy from pageable memory into pinned memory,
 * then cudaMemcpyAsync to the GPU. Data never passes through the student's program: on
 * "cpu" and "sim" the harness tracks where every staged and delivered byte came from, on
 * "gpu" it reads the GPU's copy back.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness.h"
#include "lab12.h"
#include "link.h"

#define MAXD LAB12_MAX_DEVICES

typedef struct paths_args {
    int32_t ngpus, nnics;
    lab12_pcipos gpu[MAXD], nic[MAXD];
    int8_t gpu_nic[MAXD * MAXD], gpu_gpu[MAXD * MAXD]; /* out */
} paths_args;

typedef struct setting {
    char gdr[64], p2p[64], dis[64]; /* "" with has_* 0: unset */
    int32_t has_gdr, has_p2p, has_dis, amd, ngpus;
} setting;

typedef struct levels_args {
    setting s;
    int32_t path;
    int32_t gdr_level, p2p_level, gdr, p2p; /* out */
} levels_args;

typedef struct decide_args {
    setting s;
    int32_t ngpus, nnics;
    int8_t gpu_nic[MAXD * MAXD], gpu_gpu[MAXD * MAXD]; /* in: path classes */
    int8_t gdr[MAXD * MAXD], p2p[MAXD * MAXD];         /* out */
} decide_args;

typedef struct assign_args {
    int32_t ngpus, nnics;
    lab12_pcipos gpu[MAXD], nic[MAXD];
    int32_t nic_of_gpu[MAXD]; /* out */
} assign_args;

typedef struct model_args {
    uint64_t bytes, chunk;
    int32_t nbuf;
    lab12_link in, out;
    double time_s; /* out */
} model_args;

typedef struct copy_args {
    lab12_job job;
    uint64_t chunk; /* out: the plan */
    int32_t nbuf;   /* out */
} copy_args;

#ifdef CL_STUDENT_SIDE

static const char *value(const char *v, int has) { return has ? v : NULL; }

static cl_result paths(cl_comm *c, void *args)
{
    (void)c;
    paths_args *a = args;
    for (int g = 0; g < a->ngpus; g++) {
        for (int n = 0; n < a->nnics; n++)
            a->gpu_nic[g * MAXD + n] = (int8_t)lab12_classify(&a->gpu[g], &a->nic[n]);
        for (int h = 0; h < a->ngpus; h++)
            a->gpu_gpu[g * MAXD + h] = (int8_t)lab12_classify(&a->gpu[g], &a->gpu[h]);
    }
    return CL_OK;
}

static cl_result levels(cl_comm *c, void *args)
{
    (void)c;
    levels_args *a = args;
    const setting *s = &a->s;
    a->gdr_level = lab12_parse_level(value(s->gdr, s->has_gdr));
    a->p2p_level = lab12_parse_level(value(s->p2p, s->has_p2p));
    a->gdr = lab12_gdr_enabled((lab12_path)a->path, value(s->gdr, s->has_gdr));
    a->p2p = lab12_p2p_enabled((lab12_path)a->path, value(s->dis, s->has_dis),
                               value(s->p2p, s->has_p2p), s->amd, s->ngpus);
    return CL_OK;
}

static cl_result decide(cl_comm *c, void *args)
{
    (void)c;
    decide_args *a = args;
    const setting *s = &a->s;
    for (int g = 0; g < a->ngpus; g++) {
        for (int n = 0; n < a->nnics; n++)
            a->gdr[g * MAXD + n] = (int8_t)lab12_gdr_enabled((lab12_path)a->gpu_nic[g * MAXD + n],
                                                             value(s->gdr, s->has_gdr));
        for (int h = 0; h < a->ngpus; h++)
            a->p2p[g * MAXD + h] = (int8_t)lab12_p2p_enabled(
                (lab12_path)a->gpu_gpu[g * MAXD + h], value(s->dis, s->has_dis),
                value(s->p2p, s->has_p2p), s->amd, s->ngpus);
    }
    return CL_OK;
}

static cl_result assign(cl_comm *c, void *args)
{
    (void)c;
    assign_args *a = args;
    int out[MAXD];
    CL_CHECK(lab12_assign_nics(a->gpu, a->ngpus, a->nic, a->nnics, out));
    for (int g = 0; g < a->ngpus; g++)
        a->nic_of_gpu[g] = out[g];
    return CL_OK;
}

static cl_result model(cl_comm *c, void *args)
{
    (void)c;
    model_args *a = args;
    a->time_s = lab12_pipeline_time(a->bytes, a->chunk, a->nbuf, a->in, a->out);
    return CL_OK;
}

static cl_result copy(cl_comm *c, void *args)
{
    copy_args *a = args;
    size_t chunk = 0;
    int nbuf = 0;
    CL_CHECK(lab12_plan(&a->job, &chunk, &nbuf));
    a->chunk = chunk, a->nbuf = nbuf;
    return lab12_staged_copy(c, &a->job, chunk, nbuf);
}

CL_STUDENT_ENTRIES({"paths", paths}, {"levels", levels}, {"decide", decide}, {"assign", assign},
                   {"model", model}, {"copy", copy});

#else

#include <hwloc.h>
#include <time.h>

#ifdef CL_HAVE_CUDA
#include <cuda_runtime.h>

#include "gpu/gpu_check.h"
#endif

#include "p2p_sim.h"
#include "sim/sim_maxmin.h"

/* =========================================================================================
 * Servers: positions of GPUs and NICs in an hwloc topology, and the harness's own
 * classification (NCCL's rules, src/graph/paths.cc), for the NIC-assignment model.
 * ========================================================================================= */

typedef struct server {
    hwloc_topology_t topo;
    int ngpus, nnics, amd;
    hwloc_obj_t gobj[MAXD], nobj[MAXD];
    lab12_pcipos gpu[MAXD], nic[MAXD];
} server;

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
static cl_result load_server(const char *path, server *s)
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

static void free_server(server *s)
{
    if (s->topo)
        hwloc_topology_destroy(s->topo);
    s->topo = NULL;
}

/* NCCL's class of the path between two devices (the reference of the assignment model). */
static int ref_classify(const lab12_pcipos *a, const lab12_pcipos *b)
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

static cl_result server_of(cl_case *c, server *s)
{
    const char *file;
    CL_CHECK(cl_case_str(c, "file", &file));
    return load_server(file, s);
}

/* =========================================================================================
 * Cases: paths, levels, decide, model
 * ========================================================================================= */

static void col_matrix(cl_row *row, const char *key, const int8_t *m, int rows, int cols)
{
    long long v[MAXD * MAXD];
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            v[i * cols + j] = m[i * MAXD + j];
    cl_col_ints(row, key, v, (size_t)rows * (size_t)cols);
}

static cl_result paths_case(cl_case *c)
{
    server s;
    CL_CHECK(server_of(c, &s));
    paths_args *a = calloc(1, sizeof *a);
    if (!a) {
        free_server(&s);
        return CL_ERR_NOMEM;
    }
    a->ngpus = s.ngpus, a->nnics = s.nnics;
    memcpy(a->gpu, s.gpu, sizeof s.gpu);
    memcpy(a->nic, s.nic, sizeof s.nic);
    free_server(&s);
    cl_result rc = cl_case_call(c, "paths", a, sizeof *a);
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "gpus", a->ngpus);
    cl_col_int(row, "nics", a->nnics);
    col_matrix(row, "gpu_nic", a->gpu_nic, a->ngpus, a->nnics);
    col_matrix(row, "gpu_gpu", a->gpu_gpu, a->ngpus, a->ngpus);
    free(a);
    return rc;
}

/* A setting's value: "-" unset, "x:HEX" hex-encoded bytes (values with blanks), else as is. */
static cl_result setting_value(cl_case *c, const char *key, char *out, int32_t *has)
{
    const char *v;
    *has = 0;
    out[0] = '\0';
    if (cl_case_str(c, key, &v) != CL_OK || strcmp(v, "-") == 0)
        return CL_OK;
    *has = 1;
    if (strncmp(v, "x:", 2) != 0) {
        snprintf(out, 64, "%s", v);
        return CL_OK;
    }
    size_t n = strlen(v + 2) / 2;
    for (size_t i = 0; i < n && i < 63; i++) {
        unsigned byte;
        if (sscanf(v + 2 + 2 * i, "%2x", &byte) != 1) {
            cl_set_error("%s: bad hex '%s'", key, v);
            return CL_ERR_INVALID;
        }
        out[i] = (char)byte;
        out[i + 1] = '\0';
    }
    return CL_OK;
}

static cl_result read_setting(cl_case *c, setting *s, int amd, int ngpus)
{
    memset(s, 0, sizeof *s);
    CL_CHECK(setting_value(c, "gdr", s->gdr, &s->has_gdr));
    CL_CHECK(setting_value(c, "p2p", s->p2p, &s->has_p2p));
    CL_CHECK(setting_value(c, "dis", s->dis, &s->has_dis));
    const char *v; /* optional: the server's own values otherwise */
    s->amd = cl_case_str(c, "amd", &v) == CL_OK ? atoi(v) : amd;
    s->ngpus = cl_case_str(c, "ngpus", &v) == CL_OK ? atoi(v) : ngpus;
    cl_clear_error();
    return CL_OK;
}

static cl_result levels_case(cl_case *c)
{
    levels_args a;
    long long path;
    CL_CHECK(read_setting(c, &a.s, 0, 8));
    CL_CHECK(cl_case_int(c, "path", &path));
    a.path = (int32_t)path;
    cl_result rc = cl_case_call(c, "levels", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "gdr_level", a.gdr_level);
    cl_col_int(row, "p2p_level", a.p2p_level);
    cl_col_int(row, "gdr", a.gdr);
    cl_col_int(row, "p2p", a.p2p);
    return rc;
}

static cl_result decide_case(cl_case *c)
{
    server s;
    CL_CHECK(server_of(c, &s));
    decide_args *a = calloc(1, sizeof *a);
    cl_result rc = a ? read_setting(c, &a->s, s.amd, s.ngpus) : CL_ERR_NOMEM;
    if (rc == CL_OK) {
        a->ngpus = s.ngpus, a->nnics = s.nnics;
        /* The true classes: this decides, it does not classify (that is paths' job). */
        for (int g = 0; g < s.ngpus; g++) {
            for (int n = 0; n < s.nnics; n++)
                a->gpu_nic[g * MAXD + n] = (int8_t)ref_classify(&s.gpu[g], &s.nic[n]);
            for (int h = 0; h < s.ngpus; h++)
                a->gpu_gpu[g * MAXD + h] = (int8_t)ref_classify(&s.gpu[g], &s.gpu[h]);
        }
        rc = cl_case_call(c, "decide", a, sizeof *a);
        cl_row *row = cl_case_row(c);
        col_matrix(row, "gdr", a->gdr, s.ngpus, s.nnics);
        col_matrix(row, "p2p", a->p2p, s.ngpus, s.ngpus);
    }
    free(a);
    free_server(&s);
    return rc;
}

static cl_result read_link(cl_case *c, const char *bw, const char *lat, lab12_link *l)
{
    CL_CHECK(cl_case_num(c, bw, &l->bandwidth_Bps));
    return cl_case_num(c, lat, &l->latency_s);
}

static cl_result model_case(cl_case *c)
{
    model_args a = {0};
    double bytes, chunk, nbuf;
    CL_CHECK(cl_case_num(c, "bytes", &bytes));
    CL_CHECK(cl_case_num(c, "chunk", &chunk));
    CL_CHECK(cl_case_num(c, "nbuf", &nbuf));
    CL_CHECK(read_link(c, "bw_in", "lat_in", &a.in));
    CL_CHECK(read_link(c, "bw_out", "lat_out", &a.out));
    a.bytes = (uint64_t)bytes, a.chunk = (uint64_t)chunk, a.nbuf = (int32_t)nbuf;
    cl_result rc = cl_case_call(c, "model", &a, sizeof a);
    cl_col_num(cl_case_row(c), "time_s", a.time_s, "%.9g");
    return rc;
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

/* Aggregate GB/s of every GPU g sending to NIC nic_of[g] at once. */
static cl_result aggregate(const server *s, const int *nic_of, double nic_gbps, double smp_gbps,
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

/* NCCL's way: the closest NICs, and among them the one fewest GPUs use so far. */
static void ref_assign(const server *s, int *nic_of)
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

static uint64_t mix(uint64_t a, uint64_t b) { return cl_data_hash(a * 0x9E3779B97F4A7C15ULL ^ b); }

static cl_result assign_case(cl_case *c)
{
    server s;
    long long seed;
    double nic_gbps, smp_gbps;
    CL_CHECK(cl_case_int(c, "seed", &seed));
    CL_CHECK(cl_case_num(c, "nic_gbps", &nic_gbps));
    CL_CHECK(cl_case_num(c, "smp_gbps", &smp_gbps));
    CL_CHECK(server_of(c, &s));
    if (s.ngpus < 1 || s.nnics < 1) {
        free_server(&s);
        cl_set_error("the server has %d GPUs and %d RDMA NICs", s.ngpus, s.nnics);
        return CL_ERR_INVALID;
    }
    /* The student sees the devices in an order of the seed's choosing. */
    int gperm[MAXD], nperm[MAXD];
    int count[2] = {s.ngpus, s.nnics}, *perm[2] = {gperm, nperm};
    uint64_t h = (uint64_t)seed;
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < count[k]; i++)
            perm[k][i] = i;
        for (int i = count[k] - 1; i > 0; i--) {
            h = mix(h, (uint64_t)i);
            int j = (int)(h % (uint64_t)(i + 1)), t = perm[k][i];
            perm[k][i] = perm[k][j], perm[k][j] = t;
        }
    }
    assign_args *a = calloc(1, sizeof *a);
    if (!a) {
        free_server(&s);
        return CL_ERR_NOMEM;
    }
    a->ngpus = s.ngpus, a->nnics = s.nnics;
    for (int g = 0; g < s.ngpus; g++)
        a->gpu[g] = s.gpu[gperm[g]];
    for (int n = 0; n < s.nnics; n++)
        a->nic[n] = s.nic[nperm[n]];
    for (int g = 0; g < s.ngpus; g++)
        a->nic_of_gpu[g] = -1;
    cl_result rc = cl_case_call(c, "assign", a, sizeof *a);
    int mine[MAXD], ref[MAXD];
    long long shown[MAXD];
    for (int g = 0; g < s.ngpus; g++) { /* back in bus-id order */
        int n = a->nic_of_gpu[g];
        mine[gperm[g]] = n >= 0 && n < s.nnics ? nperm[n] : -1;
    }
    double got = 0, best = 0;
    int valid = 1;
    for (int g = 0; g < s.ngpus; g++)
        valid &= mine[g] >= 0, shown[g] = mine[g];
    ref_assign(&s, ref);
    cl_result mr = aggregate(&s, ref, nic_gbps, smp_gbps, &best);
    if (mr == CL_OK && valid && rc == CL_OK)
        mr = aggregate(&s, mine, nic_gbps, smp_gbps, &got);
    cl_row *row = cl_case_row(c);
    cl_col_ints(row, "nic_of_gpu", shown, (size_t)s.ngpus);
    cl_col_num(row, "gbps", got, "%.2f");
    cl_col_num(row, "reference_gbps", best, "%.2f");
    free(a);
    free_server(&s);
    if (rc == CL_OK && !valid) {
        cl_set_error("a GPU was given no NIC, or a NIC that does not exist");
        rc = CL_ERR_INVALID;
    }
    return rc != CL_OK ? rc : mr;
}

/* =========================================================================================
 * The links of the staged copy
 * ========================================================================================= */

enum { LINK_IN, LINK_OUT };
enum { EMU_REAL_TIME, EMU_VIRTUAL, EMU_GPU };

typedef struct xcopy {
    int link, buf, rec; /* rec: the delivery it makes (out copies) */
    size_t off, n;
    double start, end;
    int waited;
#ifdef CL_HAVE_CUDA
    cudaEvent_t ev;
#endif
} xcopy;

typedef struct delivery { /* bytes [dst, dst + n) of the destination come from src.. */
    size_t dst, src, n;
    int ok; /* 0: read from a buffer not yet filled, or overwritten while read */
} delivery;

#define MAX_READS 16 /* copies out of one filling of a buffer that are watched */

typedef struct slot {
    int filled, by; /* by: the in copy that fills it */
    size_t src, n;
    int reads[MAX_READS], nreads; /* the copies out of it since it was filled */
} slot;

static struct {
    int active, mode;
    lab12_job job;
    int nbuf;
    size_t chunk;
    slot s[LAB12_MAX_BUFS];
    double free_at[2];
    xcopy *x;
    int nx, capx;
    delivery *d;
    int nd, capd;
    size_t through[2]; /* bytes through each link */
    int hazards;
    char why[200];
#ifdef CL_HAVE_CUDA
    unsigned char *src, *staging, *dst; /* pageable, pinned, device */
    cudaStream_t stream;
#endif
} E;

static int emu_mode(const cl_comm *c)
{
    const char *b = cl_comm_backend(c);
    return strcmp(b, "sim") == 0 ? EMU_VIRTUAL : strcmp(b, "gpu") == 0 ? EMU_GPU : EMU_REAL_TIME;
}

static cl_result fail(const char *fmt, const char *what)
{
    cl_set_error(fmt, what);
    return CL_ERR_INVALID;
}

static void hazard(const char *what)
{
    if (!E.hazards++)
        snprintf(E.why, sizeof E.why, "%s", what);
}

static int grow(void **p, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return 0;
    int n = *cap ? 2 * *cap : 256;
    void *q = realloc(*p, (size_t)n * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

static void emu_reset(const cl_comm *c, const lab12_job *job)
{
#ifdef CL_HAVE_CUDA
    for (int i = 0; i < E.nx; i++)
        if (E.x[i].ev)
            cudaEventDestroy(E.x[i].ev);
#endif
    E.active = 1, E.mode = emu_mode(c), E.job = *job;
    E.nbuf = 0, E.chunk = 0, E.nx = 0, E.nd = 0, E.hazards = 0, E.why[0] = '\0';
    E.through[0] = E.through[1] = 0;
    memset(E.s, 0, sizeof E.s);
    E.free_at[0] = E.free_at[1] = 0;
}

static cl_result emu_stage(cl_comm *c, int nbuf, size_t chunk)
{
    if (nbuf < 1 || nbuf > LAB12_MAX_BUFS || chunk == 0 ||
        chunk > E.job.staging_bytes / (size_t)nbuf) {
        cl_set_error("lab12_stage(%d, %zu): 1..%d buffers whose total fits %zu bytes of staging",
                     nbuf, chunk, LAB12_MAX_BUFS, E.job.staging_bytes);
        return CL_ERR_INVALID;
    }
    for (int i = 0; i < E.nx; i++)
        if (!E.x[i].waited)
            return fail("lab12_stage: %s", "copies are still in flight (wait for them first)");
    (void)c;
    E.nbuf = nbuf, E.chunk = chunk;
    memset(E.s, 0, sizeof E.s);
    return CL_OK;
}

/* When the copy starts and ends on its link (cpu, sim); the GPU's copies time themselves. */
static void schedule(cl_comm *c, xcopy *x, const lab12_link *l)
{
    double now = cl_comm_time(c);
    x->start = now > E.free_at[x->link] ? now : E.free_at[x->link];
    x->end = x->start + l->latency_s + (double)x->n / l->bandwidth_Bps;
    E.free_at[x->link] = x->end;
}

static cl_result emu_post(cl_comm *c, int link, lab12_op *op)
{
    const char *name = link == LINK_IN ? "lab12_copy_in" : "lab12_copy_out";
    size_t limit = E.job.bytes;
    if (!E.nbuf)
        return fail("%s before lab12_stage", name);
    if (op->buf < 0 || op->buf >= E.nbuf || op->n == 0 || op->n > E.chunk || op->offset > limit ||
        op->n > limit - op->offset) {
        cl_set_error("%s(buf %d, offset %llu, %llu bytes): buffers 0..%d of %zu bytes, within "
                     "the %zu bytes of the copy",
                     name, op->buf, (unsigned long long)op->offset, (unsigned long long)op->n,
                     E.nbuf - 1, E.chunk, limit);
        return CL_ERR_INVALID;
    }
    if (grow((void **)&E.x, &E.capx, E.nx + 1, sizeof *E.x) ||
        grow((void **)&E.d, &E.capd, E.nd + 1, sizeof *E.d))
        return CL_ERR_NOMEM;
    if (E.nx >= 1 << 20)
        return fail("%s: more than a million copies", name);
    xcopy *x = &E.x[E.nx];
    memset(x, 0, sizeof *x);
    x->link = link, x->buf = op->buf, x->off = op->offset, x->n = op->n, x->rec = -1;
    slot *s = &E.s[op->buf];
    if (E.mode != EMU_GPU)
        schedule(c, x, link == LINK_IN ? &E.job.in : &E.job.out);
    if (link == LINK_IN) {
        /* Refilling a buffer that an earlier copy out of it is still reading. */
        for (int i = 0; i < s->nreads; i++) {
            xcopy *o = &E.x[s->reads[i]];
            int reading = o->end > x->start;
#ifdef CL_HAVE_CUDA
            if (E.mode == EMU_GPU)
                reading = cudaEventQuery(o->ev) == cudaErrorNotReady;
#endif
            if (reading) {
                E.d[o->rec].ok = 0;
                hazard("a staging buffer was refilled while a copy out of it was still running");
            }
        }
#ifdef CL_HAVE_CUDA
        if (E.mode == EMU_GPU) {
            x->start = cl_comm_time(c);
            memcpy(E.staging + (size_t)op->buf * E.chunk, E.src + op->offset, op->n);
            x->end = cl_comm_time(c);
        }
#endif
        *s = (slot){.filled = 1, .by = E.nx, .src = op->offset, .n = op->n};
    } else {
        delivery *d = &E.d[E.nd];
        *d = (delivery){.dst = op->offset, .src = s->src, .n = op->n, .ok = 1};
        if (!s->filled || op->n > s->n) {
            d->ok = 0;
            hazard("a copy out of a staging buffer read bytes no copy had put there");
        } else if (E.mode != EMU_GPU && E.x[s->by].end > x->start) {
            d->ok = 0;
            hazard("a copy out of a staging buffer started before the copy into it had ended");
        }
#ifdef CL_HAVE_CUDA
        if (E.mode == EMU_GPU) {
            CL_CUDA_CHECK(cudaEventCreateWithFlags(&x->ev, cudaEventDisableTiming));
            CL_CUDA_CHECK(cudaMemcpyAsync(E.dst + op->offset, E.staging + (size_t)op->buf * E.chunk,
                                          op->n, cudaMemcpyHostToDevice, E.stream));
            CL_CUDA_CHECK(cudaEventRecord(x->ev, E.stream));
            x->start = cl_comm_time(c);
        }
#endif
        x->rec = E.nd++;
        if (s->nreads < MAX_READS)
            s->reads[s->nreads++] = E.nx;
    }
    E.through[link] += op->n;
    op->id = ++E.nx;
    return CL_OK;
}

static cl_result emu_wait(cl_comm *c, lab12_op *op)
{
    if (op->id < 1 || op->id > E.nx || E.x[op->id - 1].waited)
        return fail("lab12_wait: %s", "no such copy in flight (waited for twice?)");
    xcopy *x = &E.x[op->id - 1];
    x->waited = 1;
    double left = x->end - cl_comm_time(c);
    switch (E.mode) {
    case EMU_VIRTUAL:
        if (left > 0)
            cl_sim_compute(c, left);
        break;
    case EMU_REAL_TIME:
        if (left > 0) {
            struct timespec ts = {.tv_sec = (time_t)left,
                                  .tv_nsec = (long)((left - floor(left)) * 1e9)};
            while (nanosleep(&ts, &ts) != 0)
                ;
        }
        break;
    default:
#ifdef CL_HAVE_CUDA
        if (x->link == LINK_OUT) {
            CL_CUDA_CHECK(cudaEventSynchronize(x->ev));
            x->end = cl_comm_time(c);
        }
#endif
        break;
    }
    return CL_OK;
}

static cl_result lab_op(cl_run *run, cl_comm *c, int code, void *args, size_t bytes)
{
    (void)run;
    if (bytes != sizeof(lab12_op) || code < LAB12_OP_STAGE || code > LAB12_OP_WAIT) {
        cl_set_error("lab12: unknown link operation %d", code);
        return CL_ERR_INVALID;
    }
    if (!E.active)
        return fail("%s", "the links exist only during a staged copy");
    lab12_op *op = args;
    switch (code) {
    case LAB12_OP_STAGE: return emu_stage(c, op->buf, op->n);
    case LAB12_OP_IN: return emu_post(c, LINK_IN, op);
    case LAB12_OP_OUT: return emu_post(c, LINK_OUT, op);
    default: return emu_wait(c, op);
    }
}

static int by_dst(const void *a, const void *b)
{
    const delivery *x = a, *y = b;
    return x->dst < y->dst ? -1 : x->dst > y->dst;
}

/* Bytes of the destination that do not hold their source bytes, once every copy is over. */
static cl_result wrong_bytes(size_t *wrong)
{
    size_t right = 0, at = 0;
#ifdef CL_HAVE_CUDA
    if (E.mode == EMU_GPU) {
        CL_CUDA_CHECK(cudaStreamSynchronize(E.stream));
        unsigned char *back = malloc(E.job.bytes ? E.job.bytes : 1);
        if (!back)
            return CL_ERR_NOMEM;
        CL_CUDA_CHECK(cudaMemcpy(back, E.dst, E.job.bytes, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < E.job.bytes; i++)
            right += back[i] == E.src[i];
        free(back);
        *wrong = E.job.bytes - right;
        return CL_OK;
    }
#endif
    /* Where every byte came from: deliveries must tile the destination, each from the
     * same offset of the source, none spoilt. */
    qsort(E.d, (size_t)E.nd, sizeof *E.d, by_dst);
    for (int i = 0; i < E.nd; i++) {
        const delivery *d = &E.d[i];
        if (d->dst >= at && d->ok && d->src == d->dst)
            right += d->n;
        at = d->dst + d->n > at ? d->dst + d->n : at;
    }
    *wrong = E.job.bytes - (right < E.job.bytes ? right : E.job.bytes);
    return CL_OK;
}

/* Seconds both links were busy at once (cpu, sim): each link's copies follow one another
 * in posting order, so the two lists are walked side by side. */
static double overlap_s(void)
{
    double both = 0;
    int i = 0, j = 0;
    for (;;) {
        while (i < E.nx && E.x[i].link != LINK_IN)
            i++;
        while (j < E.nx && E.x[j].link != LINK_OUT)
            j++;
        if (i == E.nx || j == E.nx)
            return both;
        double a = fmax(E.x[i].start, E.x[j].start), b = fmin(E.x[i].end, E.x[j].end);
        both += b > a ? b - a : 0;
        if (E.x[i].end < E.x[j].end)
            i++;
        else
            j++;
    }
}

/* What one staged copy did. */
typedef struct outcome {
    double seconds;
    size_t chunk, wrong;
    int nbuf;
    cl_result status;
    char error[320];
} outcome;

static cl_result finish_copy(outcome *o)
{
    E.active = 0;
    for (int i = 0; i < E.nx; i++)
        if (!E.x[i].waited && o->status == CL_OK) {
            o->status = CL_ERR_INVALID;
            snprintf(o->error, sizeof o->error,
                     "returned with copies still in flight (every "
                     "copy needs its lab12_wait)");
        }
    CL_CHECK(wrong_bytes(&o->wrong));
    if (o->status == CL_OK && E.hazards)
        snprintf(o->error, sizeof o->error, "%d hazard(s): %s", E.hazards, E.why);
    return CL_OK;
}

/* The student's plan and copy of job, timed by the harness. */
static cl_result student_copy(cl_comm *c, const lab12_job *job, outcome *o)
{
    copy_args a = {.job = *job};
    cl_call_result res;
    memset(o, 0, sizeof *o);
    emu_reset(c, job);
    CL_CHECK(cl_student_run(c, "copy", &a, sizeof a, CL_ALLOW_LAB, &res));
    o->seconds = res.seconds, o->chunk = a.chunk, o->nbuf = a.nbuf, o->status = res.status;
    snprintf(o->error, sizeof o->error, "%s", res.error);
    return finish_copy(o);
}

/* The baseline: one staging buffer as large as the staging memory, filled and drained in
 * turn, through the same links. */
static cl_result baseline_copy(cl_comm *c, const lab12_job *job, outcome *o)
{
    memset(o, 0, sizeof *o);
    emu_reset(c, job);
    size_t chunk = job->staging_bytes;
    double t0 = cl_comm_time(c);
    CL_CHECK(emu_stage(c, 1, chunk));
    for (size_t off = 0; off < job->bytes; off += chunk) {
        lab12_op op = {
            .buf = 0, .offset = off, .n = job->bytes - off < chunk ? job->bytes - off : chunk};
        CL_CHECK(emu_post(c, LINK_IN, &op));
        CL_CHECK(emu_wait(c, &op));
        op.id = 0;
        CL_CHECK(emu_post(c, LINK_OUT, &op));
        CL_CHECK(emu_wait(c, &op));
    }
    o->seconds = cl_comm_time(c) - t0, o->chunk = chunk, o->nbuf = 1;
    return finish_copy(o);
}

/* The harness's own recurrence, for the modelled time of a plan. */
static double ref_pipeline(size_t bytes, size_t chunk, int nbuf, lab12_link in, lab12_link out)
{
    double r = 0, w[LAB12_MAX_BUFS] = {0}, last = 0;
    size_t k = 0;
    for (size_t off = 0; chunk && nbuf > 0 && off < bytes; off += chunk, k++) {
        double n = (double)(bytes - off < chunk ? bytes - off : chunk);
        double freed = k >= (size_t)nbuf ? w[k % (size_t)nbuf] : 0;
        r = fmax(r, freed) + in.latency_s + n / in.bandwidth_Bps;
        last = w[k % (size_t)nbuf] = fmax(last, r) + out.latency_s + n / out.bandwidth_Bps;
    }
    return last;
}

/* --- GPU buffers ----------------------------------------------------------------------- */

#ifdef CL_HAVE_CUDA
static cl_result gpu_setup(const lab12_job *job)
{
    if (!E.src) {
        E.src = malloc(job->bytes ? job->bytes : 1);
        if (!E.src)
            return CL_ERR_NOMEM;
        cl_pretouch(E.src, job->bytes);
        /* Pinned for DMA (cudaHostAlloc), allocated once, outside every timed copy. */
        CL_CUDA_CHECK(cudaHostAlloc((void **)&E.staging, job->staging_bytes, cudaHostAllocDefault));
        CL_CUDA_CHECK(cudaMalloc((void **)&E.dst, job->bytes ? job->bytes : 1));
        CL_CUDA_CHECK(cudaStreamCreateWithFlags(&E.stream, cudaStreamNonBlocking));
    }
    return CL_OK;
}

static void gpu_teardown(void)
{
    if (E.staging)
        cudaFreeHost(E.staging);
    if (E.dst)
        cudaFree(E.dst);
    if (E.stream)
        cudaStreamDestroy(E.stream);
    free(E.src);
    E.src = E.staging = E.dst = NULL;
    E.stream = NULL;
}

/* Fresh source bytes, and a destination that holds none of them. */
static cl_result gpu_fresh(uint64_t seed, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        E.src[i] = (unsigned char)cl_data_hash(seed ^ i);
    CL_CUDA_CHECK(cudaMemsetAsync(E.dst, 0, bytes ? bytes : 1, E.stream));
    CL_CUDA_CHECK(cudaStreamSynchronize(E.stream));
    return CL_OK;
}

/* The links' figures, measured on this machine: a CPU copy of the whole source into the
 * pinned staging memory (it does not fit in any cache), and host-to-device copies. */
static cl_result gpu_figures(cl_comm *c, lab12_job *job)
{
    size_t chunk = job->staging_bytes, small = 4096;
    double t0 = cl_comm_time(c);
    for (size_t off = 0; off < job->bytes; off += chunk)
        memcpy(E.staging, E.src + off, job->bytes - off < chunk ? job->bytes - off : chunk);
    double t_in = cl_comm_time(c) - t0;
    t0 = cl_comm_time(c);
    for (size_t off = 0; off < job->bytes; off += chunk)
        CL_CUDA_CHECK(cudaMemcpyAsync(E.dst + off, E.staging,
                                      job->bytes - off < chunk ? job->bytes - off : chunk,
                                      cudaMemcpyHostToDevice, E.stream));
    CL_CUDA_CHECK(cudaStreamSynchronize(E.stream));
    double t_out = cl_comm_time(c) - t0;
    t0 = cl_comm_time(c);
    for (int i = 0; i < 100; i++) {
        CL_CUDA_CHECK(cudaMemcpyAsync(E.dst, E.staging, small, cudaMemcpyHostToDevice, E.stream));
        CL_CUDA_CHECK(cudaStreamSynchronize(E.stream));
    }
    double lat_out = (cl_comm_time(c) - t0) / 100;
    job->in = (lab12_link){.bandwidth_Bps = (double)job->bytes / t_in, .latency_s = 1e-6};
    job->out = (lab12_link){.bandwidth_Bps = (double)job->bytes / t_out, .latency_s = lat_out};
    return CL_OK;
}
#endif

/* =========================================================================================
 * Ranks modes: pipe (correctness) and pipeperf (performance)
 * ========================================================================================= */

static cl_result parse_link(const char *text, lab12_link *l)
{
    double gbps, us;
    if (sscanf(text, "%lf:%lf", &gbps, &us) != 2 || !(gbps > 0) || !(us >= 0)) {
        cl_set_error("a link is GBPS:LATENCY_US (e.g. 2:20), not '%s'", text);
        return CL_ERR_INVALID;
    }
    *l = (lab12_link){.bandwidth_Bps = gbps * 1e9, .latency_s = us * 1e-6};
    return CL_OK;
}

static cl_result one_rank(cl_comm *c, lab12_job *job, cl_run *run)
{
    if (cl_comm_size(c) != 1) {
        cl_set_error("the staged copy runs on one rank (--nranks 1, or mpirun -np 1)");
        return CL_ERR_INVALID;
    }
    size_t staging;
    CL_CHECK(cl_parse_size(cl_opt(run, "staging"), &staging));
    job->staging_bytes = staging;
    if (emu_mode(c) == EMU_GPU) {
#ifdef CL_HAVE_CUDA
        CL_CHECK(gpu_setup(job));
#else
        cl_set_error("built without CUDA");
        return CL_ERR_UNSUPPORTED;
#endif
    } else {
        CL_CHECK(parse_link(cl_opt(run, "in"), &job->in));
        CL_CHECK(parse_link(cl_opt(run, "out"), &job->out));
    }
    return CL_OK;
}

static void col_outcome(cl_row *row, const lab12_job *job, const outcome *o)
{
    cl_col_int(row, "bytes", (long long)job->bytes);
    cl_col_int(row, "chunk", (long long)o->chunk);
    cl_col_int(row, "nbuf", o->nbuf);
    cl_col_str(row, "status", cl_result_str(o->status));
    cl_col_str(row, "error", o->error);
    cl_col_int(row, "wrong_bytes", (long long)o->wrong);
    cl_col_int(row, "bytes_in", (long long)E.through[LINK_IN]);
    cl_col_int(row, "bytes_out", (long long)E.through[LINK_OUT]);
    cl_col_int(row, "hazards", E.hazards);
}

static cl_result pipe_mode(cl_run *run, cl_comm *c)
{
    static const size_t sizes[] = {1, 4095, 65537, ((size_t)5 << 20) + 3, ((size_t)33 << 20) + 17};
    lab12_job job = {.bytes = sizes[4]};
    CL_CHECK(one_rank(c, &job, run));
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        job.bytes = sizes[i];
#ifdef CL_HAVE_CUDA
        if (emu_mode(c) == EMU_GPU)
            CL_CHECK(gpu_fresh(cl_data_hash(0x1200 + i), job.bytes));
#endif
        outcome o;
        CL_CHECK(student_copy(c, &job, &o));
        cl_row *row = cl_row_begin(run, c);
        col_outcome(row, &job, &o);
        cl_col_num(row, "seconds", o.seconds, "%.6f");
        cl_row_end(row);
    }
#ifdef CL_HAVE_CUDA
    gpu_teardown();
#endif
    return CL_OK;
}

static cl_result pipeperf_mode(cl_run *run, cl_comm *c)
{
    const cl_opts *opts = cl_run_opts(run);
    lab12_job job = {.bytes = opts->bytes};
    CL_CHECK(one_rank(c, &job, run));
    long rounds = strtol(cl_opt(run, "rounds"), NULL, 10);
    if (rounds < 1 || rounds > 64) {
        cl_set_error("--rounds wants 1..64");
        return CL_ERR_INVALID;
    }
#ifdef CL_HAVE_CUDA
    if (emu_mode(c) == EMU_GPU) {
        CL_CHECK(gpu_fresh(cl_data_hash(0x1210), job.bytes));
        CL_CHECK(gpu_figures(c, &job));
    }
#endif
    double mine[64], base[64], overlap = 0;
    size_t wrong = 0, chunk = 0, in = 0, out = 0;
    int nbuf = 0, hazards = 0;
    outcome o, b;
    for (long r = -1; r < rounds; r++) { /* round -1 warms both up */
#ifdef CL_HAVE_CUDA
        if (emu_mode(c) == EMU_GPU)
            CL_CHECK(gpu_fresh(cl_data_hash(0x1220 + (uint64_t)(r + 1)), job.bytes));
#endif
        CL_CHECK(baseline_copy(c, &job, &b));
        if (b.status != CL_OK || b.wrong) {
            cl_set_error("the harness's own copy failed (%zu wrong bytes)", b.wrong);
            return CL_ERR_BACKEND;
        }
#ifdef CL_HAVE_CUDA
        if (emu_mode(c) == EMU_GPU)
            CL_CHECK(gpu_fresh(cl_data_hash(0x1240 + (uint64_t)(r + 1)), job.bytes));
#endif
        CL_CHECK(student_copy(c, &job, &o));
        if (o.status != CL_OK) {
            cl_set_error("%s", o.error);
            return o.status;
        }
        if (r < 0)
            continue;
        mine[r] = o.seconds, base[r] = b.seconds;
        wrong += o.wrong, hazards += E.hazards, chunk = o.chunk, nbuf = o.nbuf;
        in += E.through[LINK_IN], out += E.through[LINK_OUT];
        overlap += E.mode == EMU_GPU ? 0 : overlap_s();
    }
    double slow = fmin(job.in.bandwidth_Bps, job.out.bandwidth_Bps);
    cl_report_num(run, "bw_in", job.in.bandwidth_Bps);
    cl_report_num(run, "lat_in", job.in.latency_s);
    cl_report_num(run, "bw_out", job.out.bandwidth_Bps);
    cl_report_num(run, "lat_out", job.out.latency_s);
    cl_report_int(run, "staging", (long long)job.staging_bytes);
    cl_row *row = cl_row_begin(run, c);
    cl_col_int(row, "bytes", (long long)job.bytes);
    cl_col_int(row, "chunk", (long long)chunk);
    cl_col_int(row, "nbuf", nbuf);
    cl_col_nums(row, "student_s", mine, (size_t)rounds, "%.6f");
    cl_col_nums(row, "baseline_s", base, (size_t)rounds, "%.6f");
    cl_col_num(row, "bound_s", (double)job.bytes / slow, "%.6f");
    cl_col_num(row, "model_s", ref_pipeline(job.bytes, chunk, nbuf, job.in, job.out), "%.6f");
    cl_col_num(row, "overlap_s", overlap / (double)rounds, "%.6f");
    cl_col_int(row, "wrong_bytes", (long long)wrong);
    cl_col_int(row, "hazards", hazards);
    cl_col_int(row, "bytes_in", (long long)(in / (size_t)rounds));
    cl_col_int(row, "bytes_out", (long long)(out / (size_t)rounds));
    cl_row_end(row);
#ifdef CL_HAVE_CUDA
    gpu_teardown();
#endif
    return CL_OK;
}

const cl_lab cl_lab_def = {
    .name = "lab12",
    .title = "PCIe 与 GPUDirect: paths, NCCL's decisions, NICs and staged copies",
    .modes =
        (const cl_mode[]){
            {.name = "paths",
             .help = "your path classes of a server (file=X.xml)",
             .cases = paths_case},
            {.name = "levels",
             .help = "your GDR/P2P decision for path=N gdr=V p2p=V dis=V",
             .cases = levels_case},
            {.name = "decide",
             .help = "your decisions for every pair of file=X.xml",
             .cases = decide_case},
            {.name = "assign",
             .help = "your NIC per GPU of file=X.xml, and its bandwidth",
             .cases = assign_case},
            {.name = "model", .help = "your modelled time of a staged copy", .cases = model_case},
            {.name = "pipe",
             .help = "your staged copies of awkward sizes, every byte checked",
             .ranks = pipe_mode},
            {.name = "pipeperf",
             .help = "your staged copy vs one staging buffer, paired rounds",
             .ranks = pipeperf_mode},
            {0}},
    .options =
        (const cl_option[]){
            {.name = "staging", .help = "pinned staging memory", .fallback = "8M"},
            {.name = "in", .help = "link in, GB/s:latency us (cpu, sim)", .fallback = "2:20"},
            {.name = "out", .help = "link out, GB/s:latency us (cpu, sim)", .fallback = "1.6:20"},
            {.name = "rounds", .help = "pipeperf: paired samples", .fallback = "5"},
            {0}},
    .lab_op = lab_op,
};

#endif
