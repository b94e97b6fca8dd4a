/* sim.c: `commlab sim`: predict one collective on a recorded system and print an nccl-tests row. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sim/sim.h"
#include "topo.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: commlab sim --system NAME|FILE [--topo FILE] [--nodes N] [--gpus-per-node G]\n"
            "                   [--nics-per-node R] [--nic-gbps GBIT]\n"
            "                   [--fabric rail|leafspine|fattree] [--oversubscription X]\n"
            "                   [--routing dmodk|ecmp|minhop] [--ring-order rail|naive]\n"
            "                   [--pxn on|off]\n"
            "                   --coll allreduce|allgather|reducescatter|broadcast|alltoall\n"
            "                   [--algo ring|tree|nvls|nvlstree|hier|auto] --size BYTES[K|M|G]\n"
            "                   [--json]\n"
            "Predicts one collective on a recorded system: NAME is datasets/systems/NAME.conf,\n"
            "FILE any file in that format (keys in datasets/systems/README.md).\n"
            "  --topo FILE         build the node from `nvidia-smi topo -m` text or NCCL XML\n"
            "                      (every NIC it lists; --nics-per-node overrides); the system\n"
            "                      still gives speeds, latencies and the fabric\n"
            "                      (default system: dgx-h100 for NV18, dgx-a100 for NV12,\n"
            "                      dgx1-v100 for other NVLink, else pcie-8gpu)\n"
            "  --oversubscription  down:up ratio of the first switch tier (1 = non-blocking)\n"
            "  --ring-order        rail: channel c enters and leaves every node by NIC c;\n"
            "                      naive: node-major order, crossing rails between nodes\n"
            "  --pxn               off: p2p traffic leaves by the sender GPU's own NIC\n"
            "Sizes are nccl-tests sizes in bytes (K/M/G = 1024-based; a whole number of bytes).\n");
}

/* Parse "1G", "512K", "1.5K", "8388608": a whole, finite number of bytes.
 * Returns 0, or -1 for anything else. */
static int parse_size(const char *s, double *out)
{
    char *e;
    errno = 0;
    double v = strtod(s, &e);
    if (e == s || errno || !isfinite(v) || v < 0)
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
    v *= mul;
    if (v != floor(v) || v > 1e15) /* bytes are whole; 1 PB is beyond any collective */
        return -1;
    *out = v;
    return 0;
}

/* A finite number in [lo, hi]; -1 with a message otherwise. */
static int parse_num_arg(const char *flag, const char *s, double lo, double hi, double *out)
{
    char *e;
    errno = 0;
    double v = strtod(s, &e);
    if (e == s || *e || errno || !isfinite(v) || v < lo || v > hi) {
        fprintf(stderr, "commlab sim: %s: expected a number from %g to %g, got '%s'\n", flag, lo,
                hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

/* The system whose constants suit a recorded node when no --system is given. */
static const char *system_for(const cl_topo *t)
{
    int most = 0, any = 0;
    for (int a = 0; a < t->ndevices; a++)
        for (int b = 0; b < t->ndevices; b++)
            if (t->link[a][b].kind == CL_LINK_NVLINK) {
                any = 1;
                most = t->link[a][b].nvlinks > most ? t->link[a][b].nvlinks : most;
            }
    return most >= 18 ? "dgx-h100" : most >= 12 ? "dgx-a100" : any ? "dgx1-v100" : "pcie-8gpu";
}

static int parse_int_arg(const char *flag, const char *s, int *out)
{
    char *e;
    errno = 0;
    long v = strtol(s, &e, 10);
    if (e == s || *e || errno || v < 1 || v > CL_SIM_MAX_GPUS) {
        fprintf(stderr, "commlab sim: %s: expected an integer from 1 to %d, got '%s'\n", flag,
                CL_SIM_MAX_GPUS, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int cl_cli_sim(int argc, char **argv)
{
    const char *system = NULL, *coll_s = NULL, *algo_s = "auto", *size_s = NULL, *topo_s = NULL;
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
            if (parse_num_arg(a, v, 1, 1e5, &ov.nic_gbps))
                return 2;
        } else if (!strcmp(a, "--oversubscription")) {
            if (parse_num_arg(a, v, 1, 64, &ov.oversubscription))
                return 2;
        } else if (!strcmp(a, "--topo")) {
            topo_s = v;
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
        } else if (!strcmp(a, "--fabric")) {
            if (!strcmp(v, "rail"))
                ov.fabric = 1 + CL_SIM_FABRIC_RAIL;
            else if (!strcmp(v, "leafspine"))
                ov.fabric = 1 + CL_SIM_FABRIC_LEAFSPINE;
            else if (!strcmp(v, "fattree"))
                ov.fabric = 1 + CL_SIM_FABRIC_FATTREE;
            else {
                fprintf(stderr, "commlab sim: --fabric: rail, leafspine or fattree, not '%s'\n", v);
                return 2;
            }
        } else if (!strcmp(a, "--ring-order")) {
            if (!strcmp(v, "rail") || !strcmp(v, "naive"))
                ov.ring_order = !strcmp(v, "rail") ? CL_SIM_RING_RAIL : CL_SIM_RING_NAIVE;
            else {
                fprintf(stderr, "commlab sim: --ring-order: rail or naive, not '%s'\n", v);
                return 2;
            }
        } else if (!strcmp(a, "--pxn")) {
            if (!strcmp(v, "on") || !strcmp(v, "off"))
                ov.pxn = !strcmp(v, "on") ? 1 : 2;
            else {
                fprintf(stderr, "commlab sim: --pxn: on or off, not '%s'\n", v);
                return 2;
            }
        } else {
            fprintf(stderr, "commlab sim: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    static cl_topo topo;
    if (topo_s) {
        if (cl_topo_load(topo_s, &topo) != CL_OK) {
            fprintf(stderr, "commlab sim: %s\n", cl_last_error());
            return 2;
        }
        if (!system)
            system = system_for(&topo);
    }
    if (!system || !coll_s || !size_s) {
        fprintf(stderr, "commlab sim: --system (or --topo), --coll and --size are required\n");
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
    memset(&m, 0, sizeof m);
    cl_sim_system sys;
    cl_result rc = cl_sim_system_load(system, &sys);
    if (rc == CL_OK && topo_s)
        rc = cl_sim_system_apply_topo(&sys, &topo);
    if (rc == CL_OK)
        rc = cl_sim_machine_build(&sys, &ov, &m);
    if (rc != CL_OK) {
        cl_sim_machine_free(&m);
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
               cl_algo_name(r.algo), cl_proto_name(r.proto), bytes, r.time_us, r.algbw, r.busbw,
               r.lat_us, r.nchannels, r.nflows);
    } else {
        printf("# commlab sim: %s, %d node(s) x %d GPUs, %d NICs x %g Gb/s, %s, algo %s\n",
               m.sys.name, m.nodes, m.gpus, m.nics, m.sys.nic_gbps, cl_coll_name(coll), algo_s);
        printf("#%15s  %12s  %8s  %8s  %6s  %6s\n", "size", "time", "algbw", "busbw", "algo",
               "proto");
        printf("#%15s  %12s  %8s  %8s  %6s  %6s\n", "(B)", "(us)", "(GB/s)", "(GB/s)", "", "");
        printf(" %15.0f  %12.2f  %8.2f  %8.2f  %6s  %6s\n", bytes, r.time_us, r.algbw, r.busbw,
               cl_algo_name(r.algo), cl_proto_name(r.proto));
    }
    cl_sim_machine_free(&m);
    return 0;
}
