/* sim_scale.c: how long the simulator takes to predict a ring AllReduce at 4,096 and 32,768 GPUs.
 *
 * Usage: sim_scale [system] [gpus...]   (default: dgx-h100 4096 32768)
 * For each size: build the machine (nodes x 8 GPUs, rail-optimised fabric
 * with D-mod-K routes), then predict a 1 GiB ring AllReduce. Every flow of a
 * ring step is routed and solved max-min on the flow engine: 8 channels x
 * nranks flows per step; the 2(p-1) identical steps reuse that step's time
 * (see common/sim/sim_sched.c). Prints wall seconds for build and predict;
 * the goals are 2 s at 4,096 GPUs and 30 s at 32,768 GPUs on one core.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sim/sim.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const char *system = argc > 1 ? argv[1] : "dgx-h100";
    int sizes[8] = {4096, 32768}, nsizes = 2;
    if (argc > 2) {
        nsizes = 0;
        for (int i = 2; i < argc && nsizes < 8; i++)
            sizes[nsizes++] = atoi(argv[i]);
    }
    printf("# %-10s %8s %8s %10s %10s %10s %10s %10s\n", "system", "gpus", "nodes", "flows",
           "build(s)", "predict(s)", "total(s)", "busbw");
    for (int i = 0; i < nsizes; i++) {
        cl_sim_system sys;
        if (cl_sim_system_load(system, &sys) != CL_OK) {
            fprintf(stderr, "sim_scale: %s\n", cl_last_error());
            return 1;
        }
        cl_sim_overrides ov = {.nodes = sizes[i] / sys.gpus_per_node, .routing = -1};
        double t0 = now();
        cl_sim_machine m;
        if (cl_sim_machine_build(&sys, &ov, &m) != CL_OK) {
            fprintf(stderr, "sim_scale: %s\n", cl_last_error());
            return 1;
        }
        double t1 = now();
        cl_sim_result r;
        if (cl_sim_predict_machine(&m, CL_COLL_ALLREDUCE, CL_ALGO_RING, 1073741824.0, &r) !=
            CL_OK) {
            fprintf(stderr, "sim_scale: %s\n", cl_last_error());
            return 1;
        }
        double t2 = now();
        printf("  %-10s %8d %8d %10ld %10.3f %10.3f %10.3f %10.2f\n", system, m.nranks, m.nodes,
               r.nflows, t1 - t0, t2 - t1, t2 - t0, r.busbw);
        cl_sim_machine_free(&m);
    }
    return 0;
}
