/* driver.c: lab 04's harness: builds a machine from a recorded topology, runs the student's
 * ring search, trees and XML writer, simulates the channels, writes JSON.
 *
 *   lab04 machine    TOPO-OPTS --json OUT   the link model (links, routes) of the topology
 *   lab04 bottleneck TOPO-OPTS --ring 0,1,.. [--ring ..] --json OUT
 *   lab04 search     TOPO-OPTS [--max-rings N] [--ref "0,1,..;3,2,.."] [--xml OUT] --json OUT
 *       the student's rings (checked, then simulated), the grader's reference rings
 *       (simulated the same way), the trees on the first ring's order, the graph XML
 *   lab04 trees N [--order 3,1,..] --json OUT      lab04_double_tree on N ranks
 *   lab04 bench [--backend gpu|cpu] [--bytes N] [--repeats R] --json OUT
 *       AllReduce bus bandwidth of the backend's own collective (NCCL on gpu: run it
 *       with and without NCCL_GRAPH_FILE to compare the channels); run under mpirun
 *
 * TOPO-OPTS: --topo FILE [--nvlink-gbps X] [--pci-gbps Y] [--sys-gbps Z] (NCCL's
 * bandwidths of the machine; defaults 20, 24, 16).
 * Exit status: 0 ok, 2 bad input or usage, 1 anything else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab04.h"

typedef struct options {
    const char *mode, *json_path, *xml_path, *topo_path, *ref, *order;
    cl_sim_topo_params params;
    int max_rings, n, repeats;
    size_t bytes;
    int nring_args;
    const char *ring_args[64];
    cl_launch_opts launch;
} options;

static cl_topo topo;
static cl_sim_topo_net net;

static cl_result load_machine(const options *o)
{
    if (!o->topo_path) {
        cl_set_error("--topo FILE is required");
        return CL_ERR_INVALID;
    }
    CL_CHECK(cl_topo_load(o->topo_path, &topo));
    return cl_sim_topo_net_build(&topo, &o->params, &net);
}

/* Parse "3,1,0,2" into ring[0..n); returns the count or -1. */
static int parse_list(const char *s, int *out, int max)
{
    int n = 0;
    while (*s && n < max) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s)
            return -1;
        out[n++] = (int)v;
        s = end;
        if (*s == ',')
            s++;
        else if (*s && *s != ';')
            return -1;
        if (*s == ';')
            break;
    }
    return n;
}

static void json_ring_list(cl_json *j, const char *key, const int rings[][LAB04_MAX_GPUS],
                           int nrings, int G)
{
    cl_json_array_start(j, key);
    for (int r = 0; r < nrings; r++) {
        long long v[LAB04_MAX_GPUS];
        for (int i = 0; i < G; i++)
            v[i] = rings[r][i];
        cl_json_int_array(j, NULL, v, (size_t)G);
    }
    cl_json_array_end(j);
}

static void json_tree(cl_json *j, const char *key, const lab04_tree *t, int n)
{
    long long up[LAB04_MAX_GPUS], d0[LAB04_MAX_GPUS], d1[LAB04_MAX_GPUS];
    for (int i = 0; i < n; i++) {
        up[i] = t->up[i];
        d0[i] = t->down[i][0];
        d1[i] = t->down[i][1];
    }
    cl_json_object_start(j, key);
    cl_json_int_array(j, "up", up, (size_t)n);
    cl_json_int_array(j, "down0", d0, (size_t)n);
    cl_json_int_array(j, "down1", d1, (size_t)n);
    cl_json_object_end(j);
}

static cl_result run_machine(const options *o)
{
    CL_CHECK(load_machine(o));
    int G = net.ngpus;
    cl_json j;
    CL_CHECK(cl_json_open(&j, o->json_path));
    cl_json_object_start(&j, NULL);
    cl_json_int(&j, "ngpus", G);
    cl_json_bool(&j, "nvswitch", net.nvswitch != 0);
    cl_json_array_start(&j, "link_gbps");
    for (int l = 0; l < net.g.nl; l++)
        cl_json_number(&j, NULL, cl_sim_topo_link_gbps(&net, l));
    cl_json_array_end(&j);
    cl_json_array_start(&j, "paths");
    for (int a = 0; a < G; a++) {
        cl_json_array_start(&j, NULL);
        for (int b = 0; b < G; b++) {
            long long ids[CL_SIM_TOPO_MAX_HOPS];
            for (int k = 0; k < net.npath[a][b]; k++)
                ids[k] = net.path[a][b][k];
            cl_json_int_array(&j, NULL, ids, (size_t)net.npath[a][b]);
        }
        cl_json_array_end(&j);
    }
    cl_json_array_end(&j);
    cl_json_array_start(&j, "codes");
    for (int a = 0; a < G; a++) {
        cl_json_array_start(&j, NULL);
        for (int b = 0; b < G; b++)
            cl_json_string(&j, NULL, net.path_code[a][b]);
        cl_json_array_end(&j);
    }
    cl_json_array_end(&j);
    cl_json_object_end(&j);
    cl_result rc = cl_json_close(&j);
    cl_sim_topo_net_free(&net);
    return rc;
}

static cl_result run_bottleneck(const options *o)
{
    CL_CHECK(load_machine(o));
    cl_json j;
    CL_CHECK(cl_json_open(&j, o->json_path));
    cl_json_array_start(&j, NULL);
    for (int i = 0; i < o->nring_args; i++) {
        int ring[LAB04_MAX_GPUS];
        int n = parse_list(o->ring_args[i], ring, LAB04_MAX_GPUS);
        double gbps = 0;
        cl_clear_error();
        /* a list of the wrong length is handed over as it is: rejecting it is the job */
        for (int k = n < 0 ? 0 : n; k < LAB04_MAX_GPUS; k++)
            ring[k] = -1;
        cl_result rc = lab04_ring_bottleneck(&net, ring, &gbps);
        cl_json_object_start(&j, NULL);
        cl_json_string(&j, "ring", o->ring_args[i]);
        cl_json_string(&j, "status", cl_result_str(rc));
        cl_json_number(&j, "gbps", rc == CL_OK ? gbps : 0.0 / 0.0);
        cl_json_object_end(&j);
    }
    cl_json_array_end(&j);
    cl_result rc = cl_json_close(&j);
    cl_sim_topo_net_free(&net);
    return rc;
}

/* Rings of --ref "a,b,..;c,d,..": the grader's reference channels. */
static int parse_rings(const char *s, int rings[][LAB04_MAX_GPUS], int G)
{
    int n = 0;
    while (s && *s && n < LAB04_MAX_CHANNELS) {
        if (parse_list(s, rings[n], LAB04_MAX_GPUS) != G)
            return -1;
        n++;
        s = strchr(s, ';');
        if (s)
            s++;
    }
    return n;
}

static cl_result run_search(const options *o)
{
    CL_CHECK(load_machine(o));
    int G = net.ngpus;
    static int rings[LAB04_MAX_CHANNELS][LAB04_MAX_GPUS], ref[LAB04_MAX_CHANNELS][LAB04_MAX_GPUS];
    memset(rings, 0xff, sizeof rings);
    int nrings = 0;
    cl_clear_error();
    cl_result rc = lab04_search_rings(&net, rings, o->max_rings, &nrings);
    char err[256];
    snprintf(err, sizeof err, "%s", cl_last_error());
    int shown = rc == CL_OK && nrings >= 1 && nrings <= o->max_rings ? nrings : 0;
    int valid = shown > 0;
    for (int r = 0; r < shown; r++)
        valid = valid && cl_sim_topo_ring_ok(&net, rings[r]);
    double busbw = 0, ref_busbw = 0;
    cl_result sim_rc = CL_ERR_INVALID;
    if (valid) {
        /* rows of LAB04_MAX_GPUS: pack them for the simulator */
        static int packed[LAB04_MAX_CHANNELS * LAB04_MAX_GPUS];
        for (int r = 0; r < shown; r++)
            memcpy(packed + (size_t)r * G, rings[r], (size_t)G * sizeof(int));
        sim_rc = cl_sim_topo_rings_busbw(&net, packed, shown, &busbw);
    }
    int nref = o->ref ? parse_rings(o->ref, ref, G) : 0;
    if (nref < 0) {
        cl_set_error("--ref: malformed reference rings");
        return CL_ERR_INVALID;
    }
    if (nref > 0) {
        static int packed[LAB04_MAX_CHANNELS * LAB04_MAX_GPUS];
        for (int r = 0; r < nref; r++)
            memcpy(packed + (size_t)r * G, ref[r], (size_t)G * sizeof(int));
        CL_CHECK(cl_sim_topo_rings_busbw(&net, packed, nref, &ref_busbw));
    }
    static lab04_tree t0, t1;
    cl_result tree_rc = CL_ERR_INVALID;
    if (valid) {
        memset(&t0, 0xff, sizeof t0);
        memset(&t1, 0xff, sizeof t1);
        tree_rc = lab04_double_tree(G, rings[0], &t0, &t1);
    }
    cl_result xml_rc = CL_ERR_INVALID;
    if (valid && o->xml_path) {
        FILE *f = fopen(o->xml_path, "w");
        if (!f) {
            cl_set_error("cannot write %s", o->xml_path);
            return CL_ERR_IO;
        }
        xml_rc = lab04_write_graph_xml(f, &net, (const int(*)[LAB04_MAX_GPUS])rings, shown);
        if (fclose(f) != 0 && xml_rc == CL_OK)
            xml_rc = CL_ERR_IO;
    }
    cl_json j;
    CL_CHECK(cl_json_open(&j, o->json_path));
    cl_json_object_start(&j, NULL);
    cl_json_string(&j, "status", cl_result_str(rc));
    cl_json_string(&j, "error", err);
    cl_json_int(&j, "ngpus", G);
    cl_json_int(&j, "nrings", rc == CL_OK ? nrings : 0);
    json_ring_list(&j, "rings", (const int(*)[LAB04_MAX_GPUS])rings, shown, G);
    cl_json_bool(&j, "valid", valid);
    cl_json_number(&j, "busbw", sim_rc == CL_OK ? busbw : 0.0 / 0.0);
    cl_json_number(&j, "ref_busbw", nref > 0 ? ref_busbw : 0.0 / 0.0);
    cl_json_string(&j, "tree_status", cl_result_str(tree_rc));
    if (tree_rc == CL_OK) {
        json_tree(&j, "tree0", &t0, G);
        json_tree(&j, "tree1", &t1, G);
    }
    cl_json_string(&j, "xml_status", cl_result_str(xml_rc));
    cl_json_object_end(&j);
    CL_CHECK(cl_json_close(&j));
    cl_sim_topo_net_free(&net);
    return CL_OK; /* the student's status is in the JSON */
}

static cl_result run_trees(const options *o)
{
    int n = o->n, order[LAB04_MAX_GPUS];
    if (n < 1 || n > LAB04_MAX_GPUS) {
        cl_set_error("N must be 1..%d", LAB04_MAX_GPUS);
        return CL_ERR_INVALID;
    }
    for (int i = 0; i < n; i++)
        order[i] = i;
    if (o->order && parse_list(o->order, order, LAB04_MAX_GPUS) != n) {
        cl_set_error("--order must list %d ranks", n);
        return CL_ERR_INVALID;
    }
    static lab04_tree t0, t1;
    memset(&t0, 0xff, sizeof t0);
    memset(&t1, 0xff, sizeof t1);
    cl_clear_error();
    cl_result rc = lab04_double_tree(n, order, &t0, &t1);
    cl_json j;
    CL_CHECK(cl_json_open(&j, o->json_path));
    cl_json_object_start(&j, NULL);
    cl_json_string(&j, "status", cl_result_str(rc));
    cl_json_int(&j, "n", n);
    if (rc == CL_OK) {
        json_tree(&j, "tree0", &t0, n);
        json_tree(&j, "tree1", &t1, n);
    }
    cl_json_object_end(&j);
    return cl_json_close(&j);
}

/* --- bench: the backend's AllReduce, to compare NCCL with and without the graph --- */

static cl_result bench_body(cl_comm *comm, void *arg)
{
    options *o = arg;
    int n = cl_comm_size(comm);
    double samples[64];
    CL_CHECK(cl_baseline_busbw(comm, o->bytes, 5, o->repeats, samples));
    if (cl_comm_rank(comm) == 0) {
        cl_json j;
        CL_CHECK(cl_json_open(&j, o->json_path));
        cl_json_object_start(&j, NULL);
        cl_json_string(&j, "backend", cl_comm_backend(comm));
        cl_json_int(&j, "ranks", n);
        const char *graph = getenv("NCCL_GRAPH_FILE");
        cl_json_string(&j, "graph_file", graph);
        cl_json_number_array(&j, "busbw", samples, (size_t)o->repeats);
        cl_json_number(&j, "busbw_median", cl_median(samples, (size_t)o->repeats));
        cl_json_object_end(&j);
        CL_CHECK(cl_json_close(&j));
    }
    return CL_OK;
}

static int usage(void)
{
    fprintf(stderr,
            "usage: lab04 machine|bottleneck|search --topo FILE [--nvlink-gbps X] [--pci-gbps Y]\n"
            "             [--sys-gbps Z] [--ring 0,1,..] [--max-rings N] [--ref R] [--xml OUT]\n"
            "             --json OUT\n"
            "       lab04 trees N [--order 0,1,..] --json OUT\n"
            "       lab04 bench [--backend gpu|cpu] [--bytes N] [--repeats R] --json OUT\n");
    return 2;
}

int main(int argc, char **argv)
{
    options o = {.params = {20, 24, 16}, .max_rings = LAB04_MAX_CHANNELS, .repeats = 5,
                 .bytes = (size_t)256 << 20};
    o.launch = (cl_launch_opts){.backend = "gpu", .argc = &argc, .argv = &argv};
    if (argc < 2)
        return usage();
    o.mode = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v && a[0] == '-')
            return usage();
        if (!strcmp(a, "--json"))
            o.json_path = argv[++i];
        else if (!strcmp(a, "--xml"))
            o.xml_path = argv[++i];
        else if (!strcmp(a, "--topo"))
            o.topo_path = argv[++i];
        else if (!strcmp(a, "--nvlink-gbps"))
            o.params.nvlink_gbps = atof(argv[++i]);
        else if (!strcmp(a, "--pci-gbps"))
            o.params.pci_gbps = atof(argv[++i]);
        else if (!strcmp(a, "--sys-gbps"))
            o.params.sys_gbps = atof(argv[++i]);
        else if (!strcmp(a, "--max-rings"))
            o.max_rings = atoi(argv[++i]);
        else if (!strcmp(a, "--ref"))
            o.ref = argv[++i];
        else if (!strcmp(a, "--order"))
            o.order = argv[++i];
        else if (!strcmp(a, "--ring") && o.nring_args < 64)
            o.ring_args[o.nring_args++] = argv[++i];
        else if (!strcmp(a, "--backend"))
            o.launch.backend = argv[++i];
        else if (!strcmp(a, "--bytes"))
            o.bytes = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(a, "--repeats"))
            o.repeats = atoi(argv[++i]);
        else if (!strcmp(o.mode, "trees") && a[0] != '-' && o.n == 0)
            o.n = atoi(a);
        else
            return usage();
    }
    if (o.max_rings < 1 || o.max_rings > LAB04_MAX_CHANNELS || o.repeats < 1 ||
        o.repeats > 64 || o.bytes < sizeof(float))
        return usage();
    cl_result rc;
    if (!strcmp(o.mode, "machine"))
        rc = run_machine(&o);
    else if (!strcmp(o.mode, "bottleneck"))
        rc = run_bottleneck(&o);
    else if (!strcmp(o.mode, "search"))
        rc = run_search(&o);
    else if (!strcmp(o.mode, "trees"))
        rc = run_trees(&o);
    else if (!strcmp(o.mode, "bench"))
        rc = cl_launch(&o.launch, bench_body, &o);
    else
        return usage();
    if (rc != CL_OK)
        fprintf(stderr, "lab04 %s: %s%s%s\n", o.mode, cl_result_str(rc),
                cl_last_error()[0] ? ": " : "", cl_last_error());
    return cl_exit_status(rc);
}
