/* driver.c: lab 07's harness: runs the student's planner on recorded topologies, writes JSON.
 *
 *   lab07 plan --topo FILE --node NV,PCIE,SYS --layout TP,PP,DP [--layout ...]
 *              [--workload ACT,MODEL,LAYERS,MB] --json FILE
 *       for each layout: the student's plan (mapping, colours, keys), the
 *       student's pair bandwidths, and the plan's cost under the given model
 *       with the student's bandwidths; the link codes as the library parsed them.
 *   lab07 gpu  --layout TP,PP,DP [--topo FILE] [--node ...] [--bytes N] [--identity] --json FILE
 *       under mpirun, one rank per GPU (gpu.c): the student's plan (or rank r on
 *       GPU r) on this machine's GPUs, TP communicators from ncclCommSplit,
 *       AllGather verified and timed.
 *
 * The grader recomputes every cost itself: this program only reports.
 * Exit status: 0 ok, 2 bad input or usage, 1 anything else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab07.h"
#include "lab07_gpu.h"

#define MAX_LAYOUTS 16

typedef struct options {
    const char *mode, *topo, *json;
    lab07_node node;
    int nlayouts;
    lab07_layout layouts[MAX_LAYOUTS];
    lab07_workload work;
    double bytes;
    int identity;
} options;

static void write_ints(cl_json *j, const char *key, const int *v, int n)
{
    long long tmp[LAB07_MAX_GPUS];
    for (int i = 0; i < n; i++)
        tmp[i] = v[i];
    cl_json_int_array(j, key, tmp, (size_t)n);
}

static cl_result write_plan(cl_json *j, const lab07_plan *p, int n)
{
    cl_json_object_start(j, "plan");
    write_ints(j, "gpu_of_rank", p->gpu_of_rank, n);
    write_ints(j, "tp_color", p->tp_color, n);
    write_ints(j, "tp_key", p->tp_key, n);
    write_ints(j, "dp_color", p->dp_color, n);
    write_ints(j, "dp_key", p->dp_key, n);
    write_ints(j, "pp_color", p->pp_color, n);
    write_ints(j, "pp_key", p->pp_key, n);
    cl_json_object_end(j);
    return CL_OK;
}

/* The GPUs must be devices 0..n-1 (true of every recorded file; checked). */
static cl_result gpu_count(const cl_topo *t, int *n)
{
    *n = cl_topo_gpu_count(t);
    for (int i = 0; i < *n; i++)
        if (t->dev[i].kind != CL_DEV_GPU) {
            cl_set_error("device %d (%s) is not a GPU: GPUs must come first", i, t->dev[i].name);
            return CL_ERR_INVALID;
        }
    if (*n < 1 || *n > LAB07_MAX_GPUS) {
        cl_set_error("%d GPUs: this lab plans 1..%d", *n, LAB07_MAX_GPUS);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

static cl_result run_plan(const options *o)
{
    static cl_topo t;
    CL_CHECK(cl_topo_load(o->topo, &t));
    int n;
    CL_CHECK(gpu_count(&t, &n));
    double bw[LAB07_MAX_GPUS][LAB07_MAX_GPUS] = {{0}};
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++)
            bw[a][b] = a == b ? 0 : lab07_pair_gbps(&t, a, b, &o->node);

    cl_json j;
    CL_CHECK(cl_json_open(&j, o->json));
    cl_json_object_start(&j, NULL);
    cl_json_string(&j, "topology", o->topo);
    cl_json_int(&j, "ngpus", n);
    cl_json_array_start(&j, "links");
    for (int a = 0; a < n; a++) {
        cl_json_array_start(&j, NULL);
        for (int b = 0; b < n; b++)
            cl_json_string(&j, NULL, t.link[a][b].code);
        cl_json_array_end(&j);
    }
    cl_json_array_end(&j);
    cl_json_array_start(&j, "pair_gbps");
    for (int a = 0; a < n; a++)
        cl_json_number_array(&j, NULL, bw[a], (size_t)n);
    cl_json_array_end(&j);
    cl_json_array_start(&j, "layouts");
    for (int i = 0; i < o->nlayouts; i++) {
        const lab07_layout *l = &o->layouts[i];
        lab07_plan p;
        memset(&p, 0xff, sizeof p); /* unset fields read as -1 */
        cl_clear_error();
        double start = cl_wtime();
        cl_result rc = lab07_choose_plan(&t, n, &o->node, l, &o->work, &p);
        double elapsed = cl_wtime() - start;
        cl_json_object_start(&j, NULL);
        cl_json_int(&j, "tp", l->tp);
        cl_json_int(&j, "pp", l->pp);
        cl_json_int(&j, "dp", l->dp);
        cl_json_string(&j, "status", cl_result_str(rc));
        cl_json_string(&j, "error", cl_last_error());
        cl_json_number(&j, "search_s", elapsed);
        if (rc == CL_OK) {
            CL_CHECK(write_plan(&j, &p, n));
            lab07_cost c;
            p.ngpus = n;
            if (lab07_step_time(bw, l, &o->work, &p, &c) == CL_OK) {
                cl_json_number(&j, "your_model_total_s", c.total_s);
                cl_json_number(&j, "your_model_tp_s", c.tp_s);
                cl_json_number(&j, "your_model_dp_s", c.dp_s);
                cl_json_number(&j, "your_model_pp_s", c.pp_s);
            }
        }
        cl_json_object_end(&j);
    }
    cl_json_array_end(&j);
    cl_json_object_end(&j);
    return cl_json_close(&j);
}

static int parse_numbers(const char *s, double *v, int max)
{
    int n = 0;
    char *end;
    while (n < max) {
        v[n++] = strtod(s, &end);
        if (end == s)
            return -1;
        if (*end == '\0')
            return n;
        if (*end != ',')
            return -1;
        s = end + 1;
    }
    return -1;
}

static int usage(void)
{
    fprintf(stderr,
            "usage: lab07 plan --topo FILE --node NV,PCIE,SYS --layout TP,PP,DP [--layout ...]\n"
            "                  [--workload ACT_BYTES,MODEL_BYTES,LAYERS,MICRO_BATCHES] --json FILE\n"
            "       lab07 gpu --layout TP,PP,DP [--topo FILE] [--node NV,PCIE,SYS] [--bytes N]\n"
            "                  [--identity] --json FILE   (under mpirun, one rank per GPU)\n");
    return 2;
}

int main(int argc, char **argv)
{
    /* Defaults: a 7B-class model (h 4096, s 2048, bf16, 32 layers), 8 micro-batches. */
    options o = {.node = {20, 12, 6},
                 .work = {.act_bytes = 2048.0 * 4096 * 2, .model_bytes = 6.7e9 * 2, .layers = 32,
                          .micro_batches = 8},
                 .bytes = 64 << 20};
    if (argc < 2)
        return usage();
    o.mode = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double num[4];
        if (strcmp(a, "--identity") == 0) {
            o.identity = 1;
            continue;
        }
        if (!v)
            return usage();
        i++;
        if (strcmp(a, "--json") == 0)
            o.json = v;
        else if (strcmp(a, "--topo") == 0)
            o.topo = v;
        else if (strcmp(a, "--bytes") == 0)
            o.bytes = strtod(v, NULL);
        else if (strcmp(a, "--node") == 0 && parse_numbers(v, num, 3) == 3)
            o.node = (lab07_node){num[0], num[1], num[2]};
        else if (strcmp(a, "--layout") == 0 && parse_numbers(v, num, 3) == 3 &&
                 o.nlayouts < MAX_LAYOUTS)
            o.layouts[o.nlayouts++] = (lab07_layout){(int)num[0], (int)num[1], (int)num[2]};
        else if (strcmp(a, "--workload") == 0 && parse_numbers(v, num, 4) == 4)
            o.work = (lab07_workload){num[0], num[1], (int)num[2], (int)num[3]};
        else
            return usage();
    }
    if (!o.json || o.nlayouts == 0)
        return usage();
    cl_result rc;
    if (strcmp(o.mode, "plan") == 0 && o.topo)
        rc = run_plan(&o);
    else if (strcmp(o.mode, "gpu") == 0)
        rc = lab07_gpu_run(o.topo, &o.node, &o.layouts[0], &o.work, o.bytes, o.identity, o.json,
                           &argc, &argv);
    else
        return usage();
    if (rc != CL_OK)
        fprintf(stderr, "lab07 %s: %s%s%s\n", o.mode, cl_result_str(rc),
                cl_last_error()[0] ? ": " : "", cl_last_error());
    return cl_exit_status(rc);
}
