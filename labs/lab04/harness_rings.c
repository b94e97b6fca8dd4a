/* harness_rings.c: lab 04's modes on a machine: bottleneck, search and xml. The case's
 * machine is the shared model of common/sim (sim_topo.h: links and routes with NCCL's
 * bandwidths; sim_channels.h: NCCL's search, its per-channel cap, channels simulated at
 * once). search checks the student's rings, simulates them, and puts beside them NCCL's
 * own search on the same machine and the index ring; xml writes the student's graph file
 * of the given rings and says what NCCL would have written (channels, speed, path type).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab04_harness.h"
#include "sim/sim_channels.h"

static cl_topo topo;
static cl_sim_topo_net net;
static int sm;

/* The case's machine: the recorded topology with NCCL's bandwidths, as the
 * harness models it (net) and as the student's program receives it (m). */
static cl_result load_machine(cl_case *c, lab04_machine *m)
{
    const char *path;
    double nv, pci, sys, cc;
    CL_CHECK(cl_case_str(c, "topo", &path));
    CL_CHECK(cl_case_num(c, "nvlink", &nv));
    CL_CHECK(cl_case_num(c, "pci", &pci));
    CL_CHECK(cl_case_num(c, "sys", &sys));
    CL_CHECK(cl_case_num(c, "sm", &cc));
    CL_CHECK(cl_topo_load(path, &topo));
    cl_sim_topo_net_free(&net);
    cl_sim_topo_params p = {.nvlink_gbps = nv, .pci_gbps = pci, .sys_gbps = sys};
    CL_CHECK(cl_sim_topo_net_build(&topo, &p, &net));
    if (net.ngpus > LAB04_MAX_GPUS || net.g.nl > LAB04_MAX_LINKS) {
        cl_set_error("%s: %d GPUs and %d links; this lab takes at most %d and %d", path, net.ngpus,
                     net.g.nl, LAB04_MAX_GPUS, LAB04_MAX_LINKS);
        return CL_ERR_INVALID;
    }
    sm = (int)cc;
    memset(m, 0, sizeof *m);
    m->ngpus = net.ngpus;
    m->sm = sm;
    m->channel_cap_gbps = cl_sim_channel_cap(sm, 0);
    m->nlinks = net.g.nl;
    for (int l = 0; l < net.g.nl; l++)
        m->link_gbps[l] = cl_sim_topo_link_gbps(&net, l);
    for (int a = 0; a < net.ngpus; a++)
        for (int b = 0; b < net.ngpus; b++) {
            m->npath[a][b] = net.npath[a][b];
            memcpy(m->path[a][b], net.path[a][b], (size_t)net.npath[a][b] * sizeof(int));
            memcpy(m->path_type[a][b], net.path_code[a][b], 4);
        }
    return CL_OK;
}

/* The harness's set of channels from rings[0..n) over all GPUs. */
static void as_channels(const int rings[][LAB04_MAX_GPUS], int n, cl_sim_channels *c)
{
    memset(c, 0, sizeof *c);
    c->k = net.ngpus;
    c->n = n;
    c->cap = cl_sim_channel_cap(sm, 0);
    for (int r = 0; r < n; r++)
        memcpy(c->ring[r], rings[r], (size_t)net.ngpus * sizeof(int));
}

static double simulate(const cl_sim_channels *c)
{
    double bw = 0;
    return cl_sim_channels_busbw(&net, &c, 1, &bw) == CL_OK ? bw : NAN;
}

cl_result bottleneck_case(cl_case *c)
{
    static bottleneck_args a;
    CL_CHECK(load_machine(c, &a.m));
    const char *text;
    CL_CHECK(cl_case_str(c, "ring", &text));
    /* a list of the wrong length is handed over as it is: rejecting it is the job */
    for (int i = 0; i < LAB04_MAX_GPUS; i++)
        a.ring[i] = -1;
    if (parse_list(text, a.ring, LAB04_MAX_GPUS) < 0) {
        cl_set_error("ring=%s: expected GPU,GPU,...", text);
        return CL_ERR_INVALID;
    }
    a.gbps = NAN;
    cl_result rc = cl_case_call(c, "bottleneck", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    cl_col_str(row, "ring", text);
    cl_col_num(row, "gbps", a.gbps, "%.4f");
    static cl_sim_channels one;
    int ring[1][LAB04_MAX_GPUS];
    memcpy(ring[0], a.ring, sizeof ring[0]);
    as_channels((const int(*)[LAB04_MAX_GPUS])ring, 1, &one);
    cl_col_num(row, "harness_gbps",
               cl_sim_topo_ring_ok(&net, a.ring) ? cl_sim_channels_speed(&net, &one) : NAN, "%.4f");
    return rc;
}

cl_result search_case(cl_case *c)
{
    static search_args a;
    static cl_sim_channels mine, ref, naive;
    CL_CHECK(load_machine(c, &a.m));
    const char *text;
    long max = LAB04_MAX_CHANNELS;
    if (cl_case_str(c, "max_rings", &text) == CL_OK)
        max = strtol(text, NULL, 10);
    cl_clear_error();
    int G = net.ngpus;
    memset(a.rings, 0xff, sizeof a.rings);
    a.max_rings = (int)max;
    a.nrings = 0;
    cl_result rc = cl_case_call(c, "search", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "ngpus", G);
    cl_col_int(row, "nvswitch", net.nvswitch);
    int shown = rc == CL_OK && a.nrings >= 1 && a.nrings <= a.max_rings ? a.nrings : 0;
    const char *why = shown ? "" : "no ring, or more than max_rings";
    for (int r = 0; r < shown && !why[0]; r++)
        if (!cl_sim_topo_ring_ok(&net, a.rings[r]))
            why = "a channel does not visit every GPU exactly once";
    cl_col_int(row, "nrings", rc == CL_OK ? a.nrings : 0);
    int packed[LAB04_MAX_CHANNELS * LAB04_MAX_GPUS];
    for (int r = 0; r < shown; r++)
        memcpy(packed + r * G, a.rings[r], (size_t)G * sizeof(int));
    col_list(row, "rings", packed, shown * G, G);
    cl_col_str(row, "invalid", why);
    /* The student's channels, NCCL's own search and the index ring, simulated alike. */
    int members[LAB04_MAX_GPUS];
    for (int i = 0; i < G; i++)
        members[i] = i;
    CL_CHECK(cl_sim_channels_search(&net, members, G, sm, LAB04_MAX_CHANNELS, &ref));
    int index[1][LAB04_MAX_GPUS];
    memcpy(index[0], members, sizeof index[0]);
    as_channels((const int(*)[LAB04_MAX_GPUS])index, 1, &naive);
    as_channels((const int(*)[LAB04_MAX_GPUS])a.rings, why[0] ? 0 : shown, &mine);
    cl_col_num(row, "busbw", why[0] ? NAN : simulate(&mine), "%.3f");
    cl_col_num(row, "ref_busbw", simulate(&ref), "%.3f");
    cl_col_int(row, "ref_nrings", ref.n);
    for (int r = 0; r < ref.n; r++)
        memcpy(packed + r * G, ref.ring[r], (size_t)G * sizeof(int));
    col_list(row, "ref_rings", packed, ref.n * G, G);
    cl_col_num(row, "ref_speed", ref.speed, "%.3f");
    cl_col_num(row, "naive_busbw", simulate(&naive), "%.3f");
    /* The machine as read (commlab topo --json's form), for relabelled copies. */
    const char *out;
    if (cl_case_str(c, "topo_json", &out) == CL_OK) {
        FILE *f = fopen(out, "w");
        cl_result wr = f ? cl_topo_write_json(&topo, f) : CL_ERR_IO;
        if ((f && fclose(f) != 0) || wr != CL_OK) {
            cl_set_error("cannot write %s", out);
            return CL_ERR_IO;
        }
    }
    cl_clear_error();
    return rc;
}

/* "0,1,2,3;0,2,1,3": rings of n GPUs each; the count, or -1. */
static int parse_rings(const char *s, int rings[][LAB04_MAX_GPUS], int n)
{
    int k = 0;
    char buf[LAB04_MAX_CHANNELS * LAB04_MAX_GPUS * 4];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *part = strtok(buf, ";"); part; part = strtok(NULL, ";")) {
        if (k == LAB04_MAX_CHANNELS || parse_list(part, rings[k], LAB04_MAX_GPUS) != n)
            return -1;
        k++;
    }
    return k;
}

cl_result xml_case(cl_case *c)
{
    static xml_args x;
    static cl_sim_channels mine;
    CL_CHECK(load_machine(c, &x.m));
    const char *text, *path = NULL;
    CL_CHECK(cl_case_str(c, "rings", &text));
    int n = parse_rings(text, x.rings, net.ngpus);
    for (int r = 0; r < n; r++)
        if (!cl_sim_topo_ring_ok(&net, x.rings[r]))
            n = -1;
    if (n < 1) {
        cl_set_error("rings=%s: expected rings over all %d GPUs, separated by ';'", text,
                     net.ngpus);
        return CL_ERR_INVALID;
    }
    if (cl_case_str(c, "xml", &path) != CL_OK)
        path = NULL;
    cl_clear_error();
    x.nrings = n;
    memset(x.xml, 0, sizeof x.xml);
    cl_result rc = cl_case_call(c, "xml", &x, sizeof x);
    x.xml[sizeof x.xml - 1] = '\0';
    /* What the file must say about these rings. */
    as_channels((const int(*)[LAB04_MAX_GPUS])x.rings, n, &mine);
    double speed = cl_sim_channels_speed(&net, &mine);
    cl_sim_channels_dup(sm, &n, &speed);
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "nchannels", n);
    cl_col_num(row, "speed", speed, "%.4f");
    cl_col_str(row, "typeintra", cl_sim_path_name(cl_sim_channels_worst_path(&net, &mine)));
    if (path && rc == CL_OK) {
        FILE *f = fopen(path, "w");
        int bad = !f || fputs(x.xml, f) < 0;
        if ((f && fclose(f) != 0) || bad) {
            cl_set_error("cannot write %s", path);
            return CL_ERR_IO;
        }
    }
    return rc;
}
