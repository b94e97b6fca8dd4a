/* driver.c: lab 30's plug-in: the torus AllReduce, and the algorithm of each fabric and size.
 *
 *   lab30 verify|bench|sweep   the student's torus AllReduce (coll_suite.h), every message
 *                              checked to go to a torus neighbour
 *   lab30 choose FABRIC points=G:B,...   the student's algorithm of each point, and the time
 *                              of every algorithm there
 *   lab30 table  FABRIC points=G:B,...   the time of every algorithm at each point
 * FABRIC: fabric=superpod|superpod-sharp|torus2d|torus3d.
 *
 * Switched fabrics are simulated (common/sim: a DGX H100 rail fabric built for the job,
 * routed flows, NCCL's latencies). The simulator has no torus and no reduction in the
 * network's switches (its NVLS across servers is a ring per rail): a torus and SHARP are
 * timed by the handout's formulas (torus_time, sharp_time in harness_time.c).
 *
 * This file holds the student's entries and the lab's table; the fabrics and a case are in
 * harness_case.c, the time of a point in harness_time.c, the choose and table modes in
 * harness_choose.c, the torus's message check in harness_pattern.c (lab30_harness.h).
 */
#include "lab30_harness.h"

#ifdef CL_STUDENT_SIDE

CL_COLL_REDUCING_ENTRY(torus, lab30_torus_allreduce)

static cl_result choose(cl_comm *c, void *args)
{
    choose_args *a = args;
    return lab30_choose(c, &a->f, a->n, a->pts, a->algo);
}

CL_STUDENT_ENTRIES({"torus", torus}, {"choose", choose});

#else

const cl_lab cl_lab_def = {
    .name = "lab30",
    .title = "未来趋势: torus、网内归约与 32K GPU 的 AllReduce",
    .collectives =
        (const cl_coll_entry[]){
            {.name = "torus", .kind = CL_COLL_ALLREDUCE, .baseline = 1, .pattern = torus_pattern},
            {0}},
    .modes = (const cl_mode[]){{.name = "choose",
                                .help = "your algorithm at each point (fabric= points=G:B,...), "
                                        "and every algorithm's time",
                                .cases = choose_case},
                               {.name = "table",
                                .help = "every algorithm's time at each point (fabric= "
                                        "points=G:B,...)",
                                .cases = table_case},
                               {0}},
    .lab_op = lab_op,
};

#endif
