/* sim.c: `commlab sim`: predict one collective on a recorded system and print an nccl-tests row. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sim/sim.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: commlab sim --system NAME [--nodes N] [--gpus-per-node G]\n"
            "                   [--nics-per-node R] [--nic-gbps GBIT]\n"
            "                   [--routing dmodk|ecmp|minhop]\n"
            "                   --coll allreduce|allgather|reducescatter|broadcast|alltoall\n"
            "                   [--algo ring|tree|nvls|hier|auto] --size BYTES[K|M|G] [--json]\n"
            "Predicts one collective on a recorded system (datasets/systems/NAME.conf).\n"
            "Sizes are nccl-tests sizes (K/M/G = 1024-based).\n");
}

/* Parse "1G", "512K", "8388608". Returns 0, or -1 for a malformed size. */
static int parse_size(const char *s, double *out)
{
    char *e;
    errno = 0;
    double v = strtod(s, &e);
    if (e == s || errno || v < 0)
        return -1;
    double mul = 1;
    if (*e == 'K' || *e == 'k')
        mul = 1024.0, e++;
    else if (*e == 'M' || *e == 'm')
        mul = 1024.0 * 1024, e++;
    else if (*e == 'G' || *e == 'g')
        mul = 1024.0 * 1024 * 1024, e++;
    if (*e == 'B' || *e == 'b')
        e++;
    if (*e)
        return -1;
    *out = v * mul;
    return 0;
}

static int parse_int_arg(const char *flag, const char *s, int *out)
{
    char *e;
    errno = 0;
    long v = strtol(s, &e, 10);
    if (e == s || *e || errno || v < 1 || v > 1 << 22) {
        fprintf(stderr, "commlab sim: %s: expected a positive integer, got '%s'\n", flag, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int cl_cli_sim(int argc, char **argv)
{
    const char *system = NULL, *coll_s = NULL, *algo_s = "auto", *size_s = NULL;
    int json = 0;
    cl_sim_overrides ov = {.routing = -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--json")) {
            json = 1;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!v) {
            fprintf(stderr, "commlab sim: %s needs a value\n", a);
            usage(stderr);
            return 2;
        }
        i++;
        if (!strcmp(a, "--system"))
            system = v;
        else if (!strcmp(a, "--coll"))
            coll_s = v;
        else if (!strcmp(a, "--algo"))
            algo_s = v;
        else if (!strcmp(a, "--size"))
            size_s = v;
        else if (!strcmp(a, "--nodes")) {
            if (parse_int_arg(a, v, &ov.nodes))
                return 2;
        } else if (!strcmp(a, "--gpus-per-node")) {
            if (parse_int_arg(a, v, &ov.gpus_per_node))
                return 2;
        } else if (!strcmp(a, "--nics-per-node")) {
            if (parse_int_arg(a, v, &ov.nics_per_node))
                return 2;
        } else if (!strcmp(a, "--nic-gbps")) {
            char *e;
            ov.nic_gbps = strtod(v, &e);
            if (e == v || *e || ov.nic_gbps <= 0) {
                fprintf(stderr, "commlab sim: --nic-gbps: expected a positive number, got '%s'\n",
                        v);
                return 2;
            }
        } else if (!strcmp(a, "--routing")) {
            if (!strcmp(v, "dmodk"))
                ov.routing = CL_SIM_ROUTE_DMODK;
            else if (!strcmp(v, "ecmp"))
                ov.routing = CL_SIM_ROUTE_ECMP;
            else if (!strcmp(v, "minhop"))
                ov.routing = CL_SIM_ROUTE_MINHOP;
            else {
                fprintf(stderr, "commlab sim: --routing: dmodk, ecmp or minhop, not '%s'\n", v);
                return 2;
            }
        } else {
            fprintf(stderr, "commlab sim: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (!system || !coll_s || !size_s) {
        fprintf(stderr, "commlab sim: --system, --coll and --size are required\n");
        usage(stderr);
        return 2;
    }
    cl_coll_kind coll;
    cl_algo algo;
    double bytes;
    if (cl_coll_parse(coll_s, &coll) != CL_OK || cl_algo_parse(algo_s, &algo) != CL_OK) {
        fprintf(stderr, "commlab sim: %s\n", cl_last_error());
        return 2;
    }
    if (parse_size(size_s, &bytes) != 0) {
        fprintf(stderr, "commlab sim: --size: expected BYTES[K|M|G], got '%s'\n", size_s);
        return 2;
    }
    cl_sim_machine m;
    cl_result rc = cl_sim_machine_load(system, &ov, &m);
    if (rc != CL_OK) {
        fprintf(stderr, "commlab sim: %s\n", cl_last_error());
        return cl_exit_status(rc);
    }
    cl_sim_result r;
    rc = cl_sim_predict_machine(&m, coll, algo, bytes, &r);
    if (rc != CL_OK) {
        fprintf(stderr, "commlab sim: %s\n", cl_last_error());
        cl_sim_machine_free(&m);
        return cl_exit_status(rc);
    }
    if (json) {
        printf("{\"system\": \"%s\", \"nodes\": %d, \"gpus_per_node\": %d, \"nics_per_node\": %d, "
               "\"nranks\": %d, \"coll\": \"%s\", \"algo\": \"%s\", \"proto\": \"%s\", "
               "\"size\": %.0f, \"time_us\": %.3f, \"algbw\": %.3f, \"busbw\": %.3f, "
               "\"lat_us\": %.3f, \"nchannels\": %d, \"nflows\": %ld}\n",
               m.sys.name, m.nodes, m.gpus, m.nics, m.nranks, cl_coll_name(coll),
               cl_algo_name(r.algo), cl_proto_name(r.proto), bytes, r.time_us, r.algbw,
               r.busbw, r.lat_us, r.nchannels, r.nflows);
    } else {
        printf("# commlab sim: %s, %d node(s) x %d GPUs, %d NICs x %g Gb/s, %s, algo %s\n",
               m.sys.name, m.nodes, m.gpus, m.nics, m.sys.nic_gbps, cl_coll_name(coll),
               algo_s);
        printf("#%15s  %12s  %8s  %8s  %6s  %6s\n", "size", "time", "algbw", "busbw", "algo",
               "proto");
        printf("#%15s  %12s  %8s  %8s  %6s  %6s\n", "(B)", "(us)", "(GB/s)", "(GB/s)", "", "");
        printf(" %15.0f  %12.2f  %8.2f  %8.2f  %6s  %6s\n", bytes, r.time_us, r.algbw, r.busbw,
               cl_algo_name(r.algo), cl_proto_name(r.proto));
    }
    cl_sim_machine_free(&m);
    return 0;
}
