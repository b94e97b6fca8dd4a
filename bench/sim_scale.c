/* sim_scale.c: the simulator's speed table: whole-collective predictions at scale, memory reuse.
 *
 * Usage: sim_scale [system]   (default dgx-h100)
 * Rows, each measured in this run on one core: build the machine (nodes x 8
 * GPUs, rail-optimised fabric, D-mod-K) and predict a 1 GiB AllReduce with
 * `auto` (every algorithm NCCL could pick is simulated and the fastest kept)
 * and with `ring`, at 4,096 and 32,768 GPUs; then the same 4,096-GPU auto
 * prediction 10 times, reporting the resident memory before and after (it
 * must stay flat: nothing accumulates between simulations). Goals: auto at
 * 4,096 GPUs <= 2 s and at 32,768 <= 30 s.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/sim.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Resident set size in MiB (Linux). */
static double rss_mib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, res = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &res) != 2)
            res = 0;
        fclose(f);
    }
    return res * 4096.0 / 1048576.0;
}

static int one(const char *system, int gpus, cl_algo algo, double goal, double *secs)
{
    cl_sim_system sys;
    if (cl_sim_system_load(system, &sys) != CL_OK)
        return -1;
    cl_sim_overrides ov = {.nodes = gpus / sys.gpus_per_node, .routing = -1};
    double t0 = now();
    cl_sim_machine m;
    if (cl_sim_machine_build(&sys, &ov, &m) != CL_OK)
        return -1;
    double t1 = now();
    cl_sim_result r;
    cl_result rc = cl_sim_predict_machine(&m, CL_COLL_ALLREDUCE, algo, 1073741824.0, &r);
    double t2 = now();
    if (rc != CL_OK) {
        cl_sim_machine_free(&m);
        return -1;
    }
    *secs = t2 - t0;
    if (goal > 0)
        printf("| %6d | %-5s | %-8s | %9ld | %8.3f | %10.3f | %8.3f | %6.1f | <= %g s: %s |\n",
               gpus, cl_algo_name(algo), cl_algo_name(r.algo), r.nflows, t1 - t0, t2 - t1, t2 - t0,
               r.busbw, goal, t2 - t0 <= goal ? "met" : "MISSED");
    else if (goal == 0)
        printf("| %6d | %-5s | %-8s | %9ld | %8.3f | %10.3f | %8.3f | %6.1f | - |\n", gpus,
               cl_algo_name(algo), cl_algo_name(r.algo), r.nflows, t1 - t0, t2 - t1, t2 - t0,
               r.busbw);
    cl_sim_machine_free(&m);
    return 0;
}

int main(int argc, char **argv)
{
    const char *system = argc > 1 ? argv[1] : "dgx-h100";
    printf("Simulator speed, %s, 1 GiB AllReduce, one core, measured in this run\n\n", system);
    printf("| GPUs | algo | chosen | flows | build (s) | predict (s) | total (s) | busbw | goal |\n"
           "|---|---|---|---|---|---|---|---|---|\n");
    double s;
    struct {
        int gpus;
        cl_algo algo;
        double goal;
    } rows[] = {{4096, CL_ALGO_AUTO, 2},
                {32768, CL_ALGO_AUTO, 30},
                {4096, CL_ALGO_RING, 0},
                {32768, CL_ALGO_RING, 0}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (one(system, rows[i].gpus, rows[i].algo, rows[i].goal, &s)) {
            fprintf(stderr, "sim_scale: %s\n", cl_last_error());
            return 1;
        }
    double before = 0;
    for (int i = 0; i < 10; i++) {
        if (i == 1) /* after the first: allocator pools are warm */
            before = rss_mib();
        if (one(system, 4096, CL_ALGO_AUTO, -1, &s) != 0)
            return 1;
        fflush(stdout);
    }
    double after = rss_mib();
    printf("\nMemory across 10 repeated 4,096-GPU auto predictions: %.1f MiB after the first, "
           "%.1f MiB after the tenth (%+.1f MiB): %s\n",
           before, after, after - before, after - before <= 8 ? "flat" : "GROWING");
    return 0;
}
