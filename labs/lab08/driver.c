/* driver.c: lab 08's harness: the student's tuning model and selector against the simulator.
 *
 *   lab08 sweep --system NAME [--min BYTES] [--max BYTES] [--table OUT] --json OUT
 *       for every size min, 2 min, ..., max (AllReduce bytes per GPU): the student's
 *       predicted time of every (algorithm, protocol), the student's choice, and the
 *       simulator's time of every pair (NCCL_ALGO/NCCL_PROTO forced, common/sim);
 *       --table writes the choices as "bytes NCCL_ALGO NCCL_PROTO" lines
 *   lab08 bench [--backend gpu|cpu] [--bytes N] [--repeats R] --json OUT
 *       AllReduce bus bandwidth of the backend's own collective (NCCL on gpu; set
 *       NCCL_ALGO / NCCL_PROTO in the environment to force a pair); run under mpirun
 *
 * Exit status: 0 ok, 2 bad input or usage, 1 anything else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab08.h"
#include "sim/sim.h"

static const char *algo_names[LAB08_NALGOS] = {"Ring", "Tree", "NVLS"};
static const char *proto_names[CL_PROTO_COUNT] = {"LL", "LL128", "Simple"};
static const cl_sim_algo sim_algo[LAB08_NALGOS] = {CL_ALGO_RING, CL_ALGO_TREE, CL_ALGO_NVLS};

const char *lab08_algo_name(int algo)
{
    return algo >= 0 && algo < LAB08_NALGOS ? algo_names[algo] : "?";
}

const char *lab08_proto_name(int proto)
{
    return proto >= 0 && proto < CL_PROTO_COUNT ? proto_names[proto] : "?";
}

typedef struct options {
    const char *mode, *json_path, *table_path, *system;
    double min_bytes, max_bytes;
    size_t bytes;
    int repeats;
    cl_launch_opts launch;
} options;

#define MAX_SIZES 64

static cl_result run_sweep(const options *o)
{
    static cl_sim_system sys;
    static cl_sim_machine m;
    CL_CHECK(cl_sim_system_load(o->system, &sys));
    CL_CHECK(cl_sim_machine_load(o->system, NULL, &m));
    double sizes[MAX_SIZES];
    int n = 0;
    for (double b = o->min_bytes; b <= o->max_bytes * (1 + 1e-12) && n < MAX_SIZES; b *= 2)
        sizes[n++] = b;
    FILE *table = NULL;
    if (o->table_path && !(table = fopen(o->table_path, "w"))) {
        cl_set_error("cannot write %s", o->table_path);
        return CL_ERR_IO;
    }
    if (table)
        fprintf(table, "# %s: AllReduce, %d GPUs; bytes per GPU, NCCL_ALGO, NCCL_PROTO\n",
                sys.name, sys.gpus_per_node);
    cl_json j;
    CL_CHECK(cl_json_open(&j, o->json_path));
    cl_json_object_start(&j, NULL);
    cl_json_string(&j, "system", sys.name);
    cl_json_int(&j, "gpus", sys.gpus_per_node);
    cl_json_bool(&j, "nvls", sys.nvls != 0);
    cl_json_number_array(&j, "bytes", sizes, (size_t)n);
    cl_json_array_start(&j, "points");
    for (int i = 0; i < n; i++) {
        cl_json_object_start(&j, NULL);
        cl_json_number(&j, "bytes", sizes[i]);
        cl_json_array_start(&j, "pairs");
        for (int a = 0; a < LAB08_NALGOS; a++)
            for (int p = 0; p < CL_PROTO_COUNT; p++) {
                double us = 0;
                cl_clear_error();
                cl_result rc = lab08_predict_us(&sys, a, p, sizes[i], &us);
                cl_sim_result r;
                cl_result src = cl_sim_predict_algo_proto(&m, CL_COLL_ALLREDUCE, sim_algo[a], p,
                                                          sizes[i], &r);
                if (src != CL_OK && src != CL_ERR_UNSUPPORTED) {
                    cl_json_close(&j);
                    return src;
                }
                cl_json_object_start(&j, NULL);
                cl_json_string(&j, "algo", algo_names[a]);
                cl_json_string(&j, "proto", proto_names[p]);
                cl_json_string(&j, "status", cl_result_str(rc));
                cl_json_number(&j, "us", rc == CL_OK ? us : 0.0 / 0.0);
                cl_json_bool(&j, "sim_ok", src == CL_OK);
                cl_json_number(&j, "sim_us", src == CL_OK ? r.time_us : 0.0 / 0.0);
                cl_json_object_end(&j);
            }
        cl_json_array_end(&j);
        int algo = -1, proto = -1;
        cl_clear_error();
        cl_result rc = lab08_choose(&sys, sizes[i], &algo, &proto);
        cl_json_string(&j, "choice_status", cl_result_str(rc));
        cl_json_string(&j, "choice_algo", rc == CL_OK ? lab08_algo_name(algo) : NULL);
        cl_json_string(&j, "choice_proto", rc == CL_OK ? lab08_proto_name(proto) : NULL);
        cl_json_object_end(&j);
        if (table && rc == CL_OK)
            fprintf(table, "%.0f %s %s\n", sizes[i], lab08_algo_name(algo),
                    lab08_proto_name(proto));
    }
    cl_json_array_end(&j);
    cl_json_object_end(&j);
    cl_result rc = cl_json_close(&j);
    if (table && fclose(table) != 0 && rc == CL_OK)
        rc = CL_ERR_IO;
    cl_sim_machine_free(&m);
    return rc;
}

static cl_result bench_body(cl_comm *comm, void *arg)
{
    const options *o = arg;
    int n = cl_comm_size(comm);
    double samples[64];
    int iters = o->bytes < (1 << 20) ? 100 : 10;
    CL_CHECK(cl_baseline_busbw(comm, o->bytes, iters, o->repeats, samples));
    if (cl_comm_rank(comm) == 0) {
        cl_json j;
        CL_CHECK(cl_json_open(&j, o->json_path));
        cl_json_object_start(&j, NULL);
        cl_json_string(&j, "backend", cl_comm_backend(comm));
        cl_json_int(&j, "ranks", n);
        cl_json_string(&j, "nccl_algo", getenv("NCCL_ALGO"));
        cl_json_string(&j, "nccl_proto", getenv("NCCL_PROTO"));
        cl_json_number_array(&j, "busbw", samples, (size_t)o->repeats);
        cl_json_number(&j, "busbw_median", cl_median(samples, (size_t)o->repeats));
        cl_json_object_end(&j);
        CL_CHECK(cl_json_close(&j));
    }
    return CL_OK;
}

static int usage(void)
{
    fprintf(stderr, "usage: lab08 sweep --system NAME [--min BYTES] [--max BYTES] [--table OUT]"
                    " --json OUT\n"
                    "       lab08 bench [--backend gpu|cpu] [--bytes N] [--repeats R] --json OUT\n");
    return 2;
}

int main(int argc, char **argv)
{
    options o = {.system = "dgx-h100", .min_bytes = 8, .max_bytes = 8589934592.0,
                 .bytes = (size_t)1 << 20, .repeats = 5};
    o.launch = (cl_launch_opts){.backend = "gpu", .argc = &argc, .argv = &argv};
    if (argc < 2)
        return usage();
    o.mode = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc)
            return usage();
        const char *v = argv[++i];
        if (!strcmp(a, "--json"))
            o.json_path = v;
        else if (!strcmp(a, "--table"))
            o.table_path = v;
        else if (!strcmp(a, "--system"))
            o.system = v;
        else if (!strcmp(a, "--min"))
            o.min_bytes = atof(v);
        else if (!strcmp(a, "--max"))
            o.max_bytes = atof(v);
        else if (!strcmp(a, "--backend"))
            o.launch.backend = v;
        else if (!strcmp(a, "--bytes"))
            o.bytes = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--repeats"))
            o.repeats = atoi(v);
        else
            return usage();
    }
    if (!(o.min_bytes >= 1) || o.max_bytes < o.min_bytes || o.repeats < 1 || o.repeats > 64 ||
        o.bytes < sizeof(float))
        return usage();
    cl_result rc;
    if (!strcmp(o.mode, "sweep"))
        rc = run_sweep(&o);
    else if (!strcmp(o.mode, "bench"))
        rc = cl_launch(&o.launch, bench_body, &o);
    else
        return usage();
    if (rc != CL_OK)
        fprintf(stderr, "lab08 %s: %s%s%s\n", o.mode, cl_result_str(rc),
                cl_last_error()[0] ? ": " : "", cl_last_error());
    return cl_exit_status(rc);
}
