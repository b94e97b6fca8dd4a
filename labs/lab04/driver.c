/* driver.c: lab 04's plug-in: the ring bottleneck, the channel search, the trees, the graph file.
 *
 *   lab04 bottleneck topo=FILE nvlink=20 pci=12 sys=6 sm=70 ring=0,3,2,1,5,6,7,4
 *   lab04 search     topo=FILE nvlink=20 pci=12 sys=6 sm=70 [max_rings=16] [topo_json=OUT]
 *   lab04 trees      n=8 [order=3,1,0,2,...]
 *   lab04 xml        topo=FILE nvlink=20 pci=12 sys=6 sm=70 rings=0,3,..;0,4,.. [xml=OUT]
 *   lab04 bench      [--backend gpu] [--bytes 256M] [--repeats 5]      (under mpirun)
 *
 * The machine is the shared model of common/sim (sim_topo.h: links and routes
 * with NCCL's bandwidths; sim_channels.h: NCCL's search, its per-channel cap,
 * channels simulated at once). search checks the student's rings, simulates
 * them, and puts beside them NCCL's own search on the same machine and the
 * index ring; xml writes the student's graph file of the given rings and says
 * what NCCL would have written (channels, speed, path type).
 * bench times the backend's AllReduce (NCCL on gpu; the grader runs it with and
 * without NCCL_GRAPH_FILE).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness.h"
#include "lab04.h"

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct bottleneck_args {
    lab04_machine m;
    int ring[LAB04_MAX_GPUS];
    double gbps; /* out */
} bottleneck_args;

typedef struct search_args {
    lab04_machine m;
    int max_rings;
    int rings[LAB04_MAX_CHANNELS][LAB04_MAX_GPUS]; /* out */
    int nrings;                                    /* out */
} search_args;

typedef struct trees_args {
    int n;
    int order[LAB04_MAX_TREE];
    lab04_tree t0, t1; /* out */
} trees_args;

typedef struct xml_args {
    lab04_machine m;
    int rings[LAB04_MAX_CHANNELS][LAB04_MAX_GPUS];
    int nrings;
    char xml[LAB04_XML_BYTES]; /* out */
} xml_args;

#ifdef CL_STUDENT_SIDE

static cl_result bottleneck(cl_comm *c, void *args)
{
    (void)c;
    bottleneck_args *a = args;
    return lab04_ring_bottleneck(&a->m, a->ring, &a->gbps);
}

static cl_result search(cl_comm *c, void *args)
{
    (void)c;
    search_args *a = args;
    return lab04_search_rings(&a->m, a->rings, a->max_rings, &a->nrings);
}

static cl_result trees(cl_comm *c, void *args)
{
    (void)c;
    trees_args *a = args;
    return lab04_double_tree(a->n, a->order, &a->t0, &a->t1);
}

static cl_result graph_xml(cl_comm *c, void *args)
{
    (void)c;
    xml_args *a = args;
    return lab04_write_graph_xml(&a->m, (const int(*)[LAB04_MAX_GPUS])a->rings, a->nrings, a->xml,
                                 sizeof a->xml);
}

CL_STUDENT_ENTRIES({"bottleneck", bottleneck}, {"search", search}, {"trees", trees},
                   {"xml", graph_xml});

#else

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

/* "3,1,0,2" into v (at most max); the count, or -1 for anything else. */
static int parse_list(const char *s, int *v, int max)
{
    int n = 0;
    while (*s) {
        char *end;
        long x = strtol(s, &end, 10);
        if (end == s || n == max)
            return -1;
        v[n++] = (int)x;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return n;
}

/* v[0..n) as "3,1,0,2", rows of `per` separated by ';': readable, and what xml= takes. */
static void col_list(cl_row *r, const char *key, const int *v, int n, int per)
{
    char text[LAB04_MAX_CHANNELS * LAB04_MAX_GPUS * 4 + 1] = "";
    size_t len = 0;
    for (int i = 0; i < n && len + 8 < sizeof text; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%s%d",
                                i == 0    ? ""
                                : i % per ? ","
                                          : ";",
                                v[i]);
    cl_col_str(r, key, text);
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

static cl_result bottleneck_case(cl_case *c)
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

static cl_result search_case(cl_case *c)
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

static cl_result xml_case(cl_case *c)
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

static void tree_cols(cl_row *row, const char *name, const lab04_tree *t, int n)
{
    char key[32];
    int d0[LAB04_MAX_TREE], d1[LAB04_MAX_TREE];
    for (int i = 0; i < n; i++)
        d0[i] = t->down[i][0], d1[i] = t->down[i][1];
    snprintf(key, sizeof key, "%s_up", name);
    col_list(row, key, t->up, n, n);
    snprintf(key, sizeof key, "%s_down0", name);
    col_list(row, key, d0, n, n);
    snprintf(key, sizeof key, "%s_down1", name);
    col_list(row, key, d1, n, n);
}

static cl_result trees_case(cl_case *c)
{
    static trees_args a;
    long long n;
    CL_CHECK(cl_case_int(c, "n", &n));
    if (n < 1 || n > LAB04_MAX_TREE) {
        cl_set_error("n=%lld: 1 to %d ranks", n, LAB04_MAX_TREE);
        return CL_ERR_INVALID;
    }
    memset(&a, 0xff, sizeof a);
    a.n = (int)n;
    for (int i = 0; i < a.n; i++)
        a.order[i] = i;
    const char *order;
    if (cl_case_str(c, "order", &order) == CL_OK &&
        parse_list(order, a.order, LAB04_MAX_TREE) != a.n) {
        cl_set_error("order=%s: expected %d ranks", order, a.n);
        return CL_ERR_INVALID;
    }
    cl_clear_error();
    cl_result rc = cl_case_call(c, "trees", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "n", a.n);
    if (rc == CL_OK) {
        tree_cols(row, "tree0", &a.t0, a.n);
        tree_cols(row, "tree1", &a.t1, a.n);
    }
    return rc;
}

/* --- bench: the backend's AllReduce, with or without NCCL_GRAPH_FILE ----------------------- */

static cl_result bench(cl_run *run, cl_comm *comm)
{
    size_t count = cl_run_opts(run)->bytes / sizeof(float);
    double busbw[CL_LIBRARY_BUSBW_MAX_REPEATS], wrong;
    int reps;
    CL_CHECK(
        cl_library_coll_busbw(run, comm, comm, CL_COLL_ALLREDUCE, count, busbw, &reps, &wrong));
    const char *graph = getenv("NCCL_GRAPH_FILE");
    cl_report_str(run, "graph_file", graph ? graph : "");
    cl_row *row = cl_row_begin(run, comm);
    cl_col_int(row, "bytes", (long long)(count * sizeof(float)));
    cl_col_nums(row, "busbw", busbw, (size_t)reps, "%.2f");
    cl_col_int(row, "wrong", (long long)wrong);
    cl_row_end(row);
    return CL_OK;
}

const cl_lab cl_lab_def = {
    .name = "lab04",
    .title = "NCCL 原理: ring 与 tree",
    .modes =
        (const cl_mode[]){
            {.name = "bottleneck",
             .help = "your bandwidth of one ring (topo= nvlink= pci= sys= sm= ring=)",
             .cases = bottleneck_case},
            {.name = "search",
             .help = "your channels, simulated beside NCCL's search (topo= ... [xml=])",
             .cases = search_case},
            {.name = "trees", .help = "your double binary tree (n= [order=])", .cases = trees_case},
            {.name = "xml",
             .help = "your graph file of rings= (topo= ... [xml=OUT])",
             .cases = xml_case},
            {.name = "bench",
             .help = "the backend's AllReduce busbw at --bytes (gpu: NCCL)",
             .ranks = bench,
             .backends = "cpu,gpu"},
            {0}},
};

#endif
