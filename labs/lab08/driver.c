/* driver.c: lab 08's plug-in: fits of nccl-tests sweeps, the tuning table, and sweeps to fit.
 *
 *   lab08 fit points=8:17.3,64:17.4,...            your fit of one sweep (BYTES:US pairs)
 *   lab08 table fits=17.1:4.6,40.1:10.3 max_bytes=4294967295
 *                                                  your table for fitted ALPHA_US:BW_GBPS
 *   lab08 calibrate --machine l40s-4gpu [--data DIR]  every recorded sweep of a machine:
 *                                                  your fits of its fitting points, your table
 *   lab08 sweep [-b 8 -e 64M -f 4 | --sizes 8,1M] [--repeats 5]   (cpu, gpu)
 *       the library's AllReduce at each size, nccl-tests' way: time per call and bus
 *       bandwidth; on gpu NCCL honours NCCL_ALGO and NCCL_PROTO from the environment
 *
 * The recorded sweeps are datasets/nccl-tests/ (README.md names every source).
 * Your code gets the fitting points only; the held-out points stay with the
 * grader, which scores your fits and your table on them.
 *
 * This file holds the student's entries and the lab's table; the fit and table modes are in
 * harness_cases.c, calibrate in harness_calibrate.c, sweep in harness_sweep.c
 * (lab08_harness.h).
 */
#include "lab08_harness.h"

#ifdef CL_STUDENT_SIDE

static cl_result fit(cl_comm *c, void *args)
{
    (void)c;
    fit_args *a = args;
    return lab08_fit_sweep(a->points, a->n, &a->out);
}

static cl_result table(cl_comm *c, void *args)
{
    (void)c;
    table_args *a = args;
    return lab08_make_table(a->fits, a->nconfigs, a->max_bytes, a->rows, &a->nrows);
}

CL_STUDENT_ENTRIES({"fit", fit}, {"table", table});

#else

const cl_lab cl_lab_def = {
    .name = "lab08",
    .title = "16 卡与 NVSwitch: 从 nccl-tests 扫描标定调优表",
    .modes =
        (const cl_mode[]){
            {.name = "fit", .help = "your fit of points=BYTES:US,...", .cases = fit_case},
            {.name = "table",
             .help = "your table for fits=ALPHA_US:BW_GBPS,... max_bytes=N",
             .cases = table_case},
            {.name = "calibrate",
             .help = "your fits and table for the recorded sweeps of --machine",
             .ranks = calibrate,
             .backends = "cpu"},
            {.name = "sweep",
             .help = "the library's AllReduce per size (nccl-tests' columns)",
             .ranks = sweep,
             .backends = "cpu,gpu"},
            {0}},
    .options =
        (const cl_option[]){
            {.name = "machine",
             .help = "M  calibrate: a system of sweeps.csv",
             .fallback = "l40s-4gpu"},
            {.name = "data", .help = "DIR  the recorded sweeps", .fallback = "datasets/nccl-tests"},
            {.name = "max-bytes-table",
             .help = "SIZE  calibrate: the table's last size (4G, as -e)",
             .fallback = "4294967295"},
            {.name = "sizes", .help = "LIST  sweep these sizes (8,64K,1M) instead of -b/-e/-f"},
            {0}},
};

#endif
