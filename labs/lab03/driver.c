/* driver.c: lab 03's plug-in: the student's matrices, checked operation by operation.
 *
 *   lab03 metric kind=uni bytes=N seconds=S          (or --cases FILE)
 *   lab03 matrix --kind uni|bidir|latency [--bytes 1M] [--warmup 2] [--iters 4] [--repeats 5]
 *   lab03 bench  [--bytes 4M] [--rounds 5]           your matrix and the harness's, interleaved
 *   lab03 infer  --backend sim --system S --link-gbps G   three matrices, then your reading
 *
 * Every operation of a pair goes through LAB03_OP_BEGIN (xfer.c): the harness
 * fills that operation's send buffer with fresh data before the pair starts,
 * checks every receive buffer after it, and logs when each operation began.
 * With the rank's trace (when each transfer finished) it rebuilds the runs the
 * method prescribes and their median, and compares it with the matrix the
 * student's code wrote. With --noise on, the timing rank of every pair is
 * held up (a sleep, or virtual time on "sim") in the middle of some of the
 * timed runs, as a busy machine would: only a median survives that.
 *
 * This file holds the student's entries and the lab's table; the modes are in
 * harness_checks.c (metric, matrix), harness_bench.c and harness_infer.c, the call of the
 * student's matrix and its method in harness_call.c, and the record of every operation in
 * harness_ops.c (lab03_harness.h).
 */
#include "lab03_harness.h"

#ifdef CL_STUDENT_SIDE

static cl_result metric(cl_comm *c, void *args)
{
    (void)c;
    metric_args *a = args;
    a->value = lab03_metric((lab03_kind)a->kind, a->bytes, a->seconds);
    return CL_OK;
}

static cl_result matrix(cl_comm *c, void *args)
{
    matrix_args *a = args;
    return lab03_matrix(c, (lab03_kind)a->kind, a->bytes, &a->m, a->matrix);
}

static cl_result infer(cl_comm *c, void *args)
{
    (void)c;
    infer_args *a = args;
    return lab03_infer(a->n, a->uni, a->bidir, a->lat_us, a->bytes, a->link_gbps, a->link);
}

CL_STUDENT_ENTRIES({"metric", metric}, {"matrix", matrix}, {"infer", infer});

#else

const cl_lab cl_lab_def = {
    .name = "lab03",
    .title = "带宽与时延测量: the bandwidth and latency matrix",
    .modes = (const cl_mode[]){{.name = "metric",
                                .help = "your lab03_metric of kind=K bytes=N seconds=S",
                                .cases = metric_case},
                               {.name = "matrix",
                                .help = "your matrix of --kind, every operation checked",
                                .ranks = matrix_mode,
                                .min_ranks = 2},
                               {.name = "bench",
                                .help = "your matrix and the harness's, --rounds times interleaved",
                                .ranks = bench_mode,
                                .min_ranks = 2},
                               {.name = "infer",
                                .help = "uni, bidir and latency matrices, then your lab03_infer",
                                .ranks = infer_mode,
                                .min_ranks = 2},
                               {0}},
    .options =
        (const cl_option[]){
            {.name = "kind", .help = "uni, bidir or latency", .fallback = "uni"},
            {.name = "warmup", .help = "operations before the timed runs", .fallback = "2"},
            {.name = "noise",
             .help = "on: hold up some timed runs, as a busy machine does",
             .fallback = "on"},
            {.name = "rounds", .help = "bench: paired samples", .fallback = "5"},
            {.name = "link-gbps",
             .help = "infer: GB/s of one NVLink of these GPUs",
             .fallback = "20"},
            {0}},
    .arena_bytes = (size_t)640 << 20,
    .lab_op = lab_op,
};

#endif
