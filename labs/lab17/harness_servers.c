/* harness_servers.c: recorded servers as NCCL sees them, and the cases that ask the
 * student's NCCL rules about them (server, route, chunk). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab17_harness.h"
#include "sim/sim_system.h"

/* NCCL's bandwidths (NVIDIA/nccl v2.28.9-1 src/graph/topo.h and topo.cc): PCIe x16 of the
 * GPU's generation, and the inter-socket link of the server's CPUs (AMD_BW 16; Intel by
 * model: SKL_QPI_BW 10 from model 0x55, SRP_QPI_BW 22 from 0x8F). Path bandwidth is the
 * smallest link on the path: PCIe inside a socket, the SMP link across. */
typedef struct known {
    const char *file, *why;
    float pcie, smp;
    int nvswitch; /* the file lists no NVLinks; NCCL adds NVSwitch's from NVML at run time */
} known;

static const known KNOWN[] = {
    {"hgx-a100.topo.txt", "A100 (PCIe Gen4), 2x AMD EPYC 7543", 24, 16, 0},
    {"hgx-h200.topo.txt", "H200 (PCIe Gen5), 2x Intel Sapphire Rapids", 48, 22, 0},
    {"hgx-a100-4nic.nccl.xml", "A100 (PCIe Gen4), Intel model 106 (SKL_QPI_BW)", 24, 10, 0},
    {"ibm-vpc-h100-vsi.nccl.xml", "H100 (PCIe Gen5), Intel model 143 (SRP_QPI_BW)", 48, 22, 0},
    /* every path to an EFA ends in its x8 Gen4 link: 12 GB/s; one CPU, no SYS path */
    {"aws-p5.48xlarge.nccl.xml", "H100 SXM, 32 EFA on x8 Gen4 links", 12, 12, 1},
};

static int path_type(cl_link_kind k)
{
    switch (k) {
    case CL_LINK_SELF: return LAB17_LOC;
    case CL_LINK_NVLINK: return LAB17_NVL;
    case CL_LINK_PIX: return LAB17_PIX;
    case CL_LINK_PXB: return LAB17_PXB;
    case CL_LINK_PHB:
    case CL_LINK_NODE: return LAB17_PHB; /* NCCL's CPU node is the NUMA domain */
    case CL_LINK_SYS: return LAB17_SYS;
    default: return -1;
    }
}

cl_result server_load(const char *file, lab17_server *s)
{
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    const known *k = NULL;
    for (size_t i = 0; i < sizeof KNOWN / sizeof KNOWN[0]; i++)
        if (strcmp(base, KNOWN[i].file) == 0)
            k = &KNOWN[i];
    if (!k) {
        cl_set_error("%s: not one of the lab's servers (datasets/topologies: hgx-a100.topo.txt, "
                     "hgx-h200.topo.txt, hgx-a100-4nic.nccl.xml, ibm-vpc-h100-vsi.nccl.xml, "
                     "aws-p5.48xlarge.nccl.xml)",
                     file);
        return CL_ERR_INVALID;
    }
    static cl_topo t; /* large */
    CL_CHECK(cl_topo_load(file, &t));
    int gpu[CL_TOPO_MAX_DEVICES], nic[CL_TOPO_MAX_DEVICES], G = 0, N = 0;
    for (int i = 0; i < t.ndevices; i++) {
        if (t.dev[i].kind == CL_DEV_GPU && G < LAB17_MAX_GPUS)
            gpu[G++] = i;
        else if (t.dev[i].kind == CL_DEV_NIC && N < LAB17_MAX_NICS)
            nic[N++] = i;
    }
    memset(s, 0, sizeof *s);
    s->ngpus = G, s->nnics = N;
    for (int g = 0; g < G; g++) {
        s->dev[g] = g; /* CUDA_DEVICE_ORDER=PCI_BUS_ID: the file's order */
        for (int h = 0; h < G; h++)
            s->gpu_gpu[g][h] =
                (int8_t)(k->nvswitch && g != h ? LAB17_NVL
                                               : path_type(t.link[gpu[g]][gpu[h]].kind));
        for (int n = 0; n < N; n++) {
            int ty = path_type(t.link[gpu[g]][nic[n]].kind);
            if (ty < 0) {
                cl_set_error("%s: GPU%d-%s: link '%s' is not one NCCL knows", file, g,
                             t.dev[nic[n]].name, t.link[gpu[g]][nic[n]].code);
                return CL_ERR_INVALID;
            }
            s->gpu_nic[g][n] = (int8_t)ty;
            s->gpu_nic_bw[g][n] = ty == LAB17_SYS ? (k->smp < k->pcie ? k->smp : k->pcie) : k->pcie;
            s->gdr[g][n] = ty <= LAB17_PXB; /* NCCL_NET_GDR_LEVEL's default, PXB */
        }
    }
    return CL_OK;
}

/* The node of a simulated system (sim_node.c's layout): GPU i on PCIe switch i / per, NIC r
 * on the switch of GPU r * G / R, switch k on CPU k * cpus / switches. */
cl_result server_of_system(const char *system, lab17_server *s)
{
    cl_sim_system y;
    CL_CHECK(cl_sim_system_load(system, &y));
    int G = y.gpus_per_node, R = y.nics_per_node, per = y.gpus_per_pcie_switch;
    if (y.node != CL_SIM_NODE_NVSWITCH || G > LAB17_MAX_GPUS || R > LAB17_MAX_NICS || per < 1 ||
        y.nics_per_pcie_switch < 1 || y.cpus < 1) {
        cl_set_error("%s: the lab's simulated nodes are NVSwitch nodes with NICs on the GPUs' "
                     "PCIe switches",
                     system);
        return CL_ERR_INVALID;
    }
    int nsw = (G + per - 1) / per, gsw[LAB17_MAX_GPUS], nsw_of[LAB17_MAX_NICS];
    memset(s, 0, sizeof *s);
    s->ngpus = G, s->nnics = R;
    for (int g = 0; g < G; g++)
        gsw[g] = g / per;
    for (int r = 0; r < R; r++)
        nsw_of[r] = gsw[r * G / R];
    for (int g = 0; g < G; g++) {
        s->dev[g] = g;
        for (int h = 0; h < G; h++)
            s->gpu_gpu[g][h] = g == h ? LAB17_LOC : LAB17_NVL;
        for (int r = 0; r < R; r++) {
            int same_cpu = gsw[g] * y.cpus / nsw == nsw_of[r] * y.cpus / nsw;
            int ty = gsw[g] == nsw_of[r] ? LAB17_PIX : same_cpu ? LAB17_PHB : LAB17_SYS;
            s->gpu_nic[g][r] = (int8_t)ty;
            s->gpu_nic_bw[g][r] =
                (float)(ty == LAB17_SYS && y.sys_gbps < y.pcie_gbps ? y.sys_gbps : y.pcie_gbps);
            s->gdr[g][r] = ty <= LAB17_PXB;
        }
    }
    return CL_OK;
}

/* A case's server: file=F (a recorded topology) or system=S (a simulated node). */
static cl_result server_of_case(cl_case *c, lab17_server *s)
{
    const char *v;
    if (cl_case_str(c, "system", &v) == CL_OK)
        return server_of_system(v, s);
    cl_clear_error();
    CL_CHECK(cl_case_str(c, "file", &v));
    return server_load(v, s);
}

/* --- the environment of a case ------------------------------------------------------------ */

static int has(cl_case *c, const char *key, const char **v)
{
    if (cl_case_str(c, key, v) != CL_OK || strcmp(*v, "-") == 0) {
        cl_clear_error();
        return 0;
    }
    return 1;
}

static cl_result int_value(cl_case *c, const char *key, int64_t *out)
{
    const char *v;
    *out = LAB17_UNSET;
    if (!has(c, key, &v))
        return CL_OK;
    char *end;
    long long x = strtoll(v, &end, 0); /* as NCCL's ncclLoadParam reads it */
    if (*end || x < 0) {
        cl_set_error("%s=%s: a whole number >= 0, or - (unset)", key, v);
        return CL_ERR_INVALID;
    }
    *out = x;
    return CL_OK;
}

cl_result env_of_case(cl_case *c, lab17_env *e)
{
    int64_t v[4];
    const char *keys[4] = {"pxn_disable", "pxn_level", "cross_nic", "pxn_c2c"};
    for (int i = 0; i < 4; i++)
        CL_CHECK(int_value(c, keys[i], &v[i]));
    e->pxn_disable = (int32_t)v[0], e->p2p_pxn_level = (int32_t)v[1];
    e->cross_nic = (int32_t)v[2], e->pxn_c2c = (int32_t)v[3];
    CL_CHECK(int_value(c, "net", &e->p2p_net_chunksize));
    CL_CHECK(int_value(c, "nvl", &e->p2p_nvl_chunksize));
    CL_CHECK(int_value(c, "pci", &e->p2p_pci_chunksize));
    CL_CHECK(int_value(c, "buff", &e->buffsize));
    const char *p;
    e->netdevs_max = LAB17_UNSET;
    if (has(c, "policy", &p)) { /* NCCL_NETDEVS_POLICY: AUTO, ALL, MAX:n */
        if (strcmp(p, "auto") == 0)
            e->netdevs_max = 0;
        else if (strcmp(p, "all") == 0)
            e->netdevs_max = LAB17_POLICY_ALL;
        else if (strncmp(p, "max:", 4) == 0 && atoi(p + 4) > 0)
            e->netdevs_max = atoi(p + 4);
        else {
            cl_set_error("policy=%s: auto, all or max:N", p);
            return CL_ERR_INVALID;
        }
    }
    return CL_OK;
}

/* --- cases --------------------------------------------------------------------------------- */

/* The rows x cols block of matrix m (rows stride entries apart), row after row. */
static void col_matrix32(cl_row *row, const char *key, const int32_t *m, int rows, int cols,
                         int stride)
{
    long long v[LAB17_MAX_GPUS * LAB17_MAX_NICS];
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            v[i * cols + j] = m[i * stride + j];
    cl_col_ints(row, key, v, (size_t)rows * (size_t)cols);
}

static void col_matrix8(cl_row *row, const char *key, const int8_t *m, int rows, int cols,
                        int stride)
{
    int32_t wide[LAB17_MAX_GPUS * LAB17_MAX_NICS]; /* rows <= LAB17_MAX_GPUS, stride <= _NICS */
    for (int k = 0; k < rows * stride; k++)
        wide[k] = m[k];
    col_matrix32(row, key, wide, rows, cols, stride);
}

/* The server as the student sees it, for the grader's own rules. */
static void col_server(cl_row *row, const lab17_server *s)
{
    double bw[LAB17_MAX_GPUS * LAB17_MAX_NICS];
    cl_col_int(row, "gpus", s->ngpus);
    cl_col_int(row, "nics", s->nnics);
    col_matrix8(row, "gpu_gpu", &s->gpu_gpu[0][0], s->ngpus, s->ngpus, LAB17_MAX_GPUS);
    col_matrix8(row, "gpu_nic", &s->gpu_nic[0][0], s->ngpus, s->nnics, LAB17_MAX_NICS);
    col_matrix8(row, "gdr", &s->gdr[0][0], s->ngpus, s->nnics, LAB17_MAX_NICS);
    for (int g = 0; g < s->ngpus; g++)
        for (int n = 0; n < s->nnics; n++)
            bw[g * s->nnics + n] = s->gpu_nic_bw[g][n];
    cl_col_nums(row, "gpu_nic_bw", bw, (size_t)s->ngpus * (size_t)s->nnics, "%.0f");
}

/* A case of an entry whose arguments a (bytes long) hold a server s and an environment e: both
 * read from the case, the student's entry called, its row the server and then what columns
 * writes of a. */
static cl_result server_entry_case(cl_case *c, const char *entry, void *a, size_t bytes,
                                   lab17_server *s, lab17_env *e,
                                   void (*columns)(cl_row *row, const void *a))
{
    cl_result rc = server_of_case(c, s);
    if (rc == CL_OK)
        rc = env_of_case(c, e);
    if (rc != CL_OK)
        return rc;
    rc = cl_case_call(c, entry, a, bytes);
    cl_row *row = cl_case_row(c);
    col_server(row, s);
    columns(row, a);
    return rc;
}

static void local_columns(cl_row *row, const void *args)
{
    const local_args *a = args;
    const lab17_server *s = &a->s;
    /* The lists, padded with -1 to a full row each. */
    int32_t pad[LAB17_MAX_GPUS][LAB17_MAX_NICS], padg[LAB17_MAX_NICS][LAB17_MAX_GPUS];
    for (int g = 0; g < s->ngpus; g++)
        for (int n = 0; n < s->nnics; n++)
            pad[g][n] = n < a->nlocal[g] && a->nlocal[g] <= s->nnics ? a->local[g][n] : -1;
    for (int n = 0; n < s->nnics; n++)
        for (int g = 0; g < s->ngpus; g++)
            padg[n][g] = g < a->ngpus_of[n] && a->ngpus_of[n] <= s->ngpus ? a->gpus_of[n][g] : -1;
    col_matrix32(row, "local_nics", &pad[0][0], s->ngpus, s->nnics, LAB17_MAX_NICS);
    col_matrix32(row, "local_gpus", &padg[0][0], s->nnics, s->ngpus, LAB17_MAX_GPUS);
    col_matrix32(row, "gpu_nic_by_channel", &a->nic[0][0], s->ngpus, LAB17_CHANNELS,
                 LAB17_CHANNELS);
    col_matrix32(row, "nic_gpu", a->gpu_of, 1, s->nnics, LAB17_MAX_NICS);
    char text[200] = ""; /* for people: the NIC of each GPU on channel 0 */
    for (int g = 0; g < s->ngpus; g++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s%d", g ? " " : "",
                 a->nic[g][0]);
    cl_col_str(row, "nic_of_gpu_ch0", text);
}

cl_result server_case(cl_case *c)
{
    local_args *a = calloc(1, sizeof *a);
    if (!a)
        return CL_ERR_NOMEM;
    cl_result rc = server_entry_case(c, "local", a, sizeof *a, &a->s, &a->e, local_columns);
    free(a);
    return rc;
}

static void route_columns(cl_row *row, const void *args)
{
    const route_args *a = args;
    int G = a->s.ngpus;
    col_matrix32(row, "route_nic", &a->nic[0][0], G, G, LAB17_MAX_GPUS);
    col_matrix32(row, "route_proxy", &a->proxy[0][0], G, G, LAB17_MAX_GPUS);
    char text[400] = ""; /* for people: GPU0's NIC/relay to each peer device */
    for (int d = 0; d < G; d++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s%d/%d", d ? " " : "",
                 a->nic[0][d], a->proxy[0][d]);
    cl_col_str(row, "gpu0_nic/relay", text);
}

cl_result route_case(cl_case *c)
{
    long long channel = 0;
    const char *v;
    if (has(c, "channel", &v))
        CL_CHECK(cl_case_int(c, "channel", &channel));
    route_args *a = calloc(1, sizeof *a);
    if (!a)
        return CL_ERR_NOMEM;
    a->channel = (int32_t)channel;
    cl_result rc = server_entry_case(c, "route", a, sizeof *a, &a->s, &a->e, route_columns);
    free(a);
    return rc;
}

cl_result chunk_case(cl_case *c)
{
    chunk_args a = {0};
    long long nnodes, nvlink;
    CL_CHECK(cl_case_int(c, "nnodes", &nnodes));
    CL_CHECK(cl_case_int(c, "all_nvlink", &nvlink));
    CL_CHECK(env_of_case(c, &a.e));
    a.nnodes = (int32_t)nnodes, a.all_nvlink = (int32_t)nvlink;
    cl_result rc = cl_case_call(c, "chunk", &a, sizeof a);
    cl_col_int(cl_case_row(c), "chunk", (long long)a.chunk);
    return rc;
}
