/* driver.c: lab 27's plug-in: the student's nccl-tests-style benchmark, the harness's own
 * reference benchmark in the same run, and the before/after record of one change.
 *
 *   lab27 sweep [--coll allreduce|allgather] [-b 1K] [-e 16M] [-f 4] [--warmup 5]
 *               [--iters 20] [--repeats 1] [--backend cpu|gpu|sim]
 *   lab27 compare before=B1,B2,... after=A1,A2,...     (or --cases FILE)
 *
 * sweep runs, --repeats times, the harness's reference benchmark and then the student's
 * lab27_sweep() on every rank. The student's report (nccl-tests' table) is printed as it
 * came and goes to the JSON whole; the reference's rows carry the harness's times and the
 * number of elements the harness corrupted in each row (what #wrong must say). The
 * collective under test, the fills and the checks are the lab's operations (lab_op): the
 * student's code asks, the harness performs them on buffers it has checked are the
 * rank's own.
 *
 * This file holds the student's entries and the lab's table; the sweep mode is in
 * harness_sweep.c, the reference benchmark it runs in harness_ref.c, the lab's operations in
 * harness_ops.c and the compare mode in harness_compare.c (lab27_harness.h). The argument
 * blocks are in lab27_wire.h.
 */
#include "harness/harness.h"
#include "lab27.h"
#include "lab27_wire.h"

#ifdef CL_STUDENT_SIDE

static cl_result e_sweep(cl_comm *c, void *args)
{
    sweep_args *a = args;
    a->text[0] = '\0';
    return lab27_sweep(c, &a->cfg, a->text, sizeof a->text);
}

static cl_result e_compare(cl_comm *c, void *args)
{
    (void)c;
    compare_args *a = args;
    return lab27_compare(a->before, a->after, a->n, &a->e);
}

/* The lab's own entry: the reference's timed loop (harness_ref.c), timed by the harness. */
static cl_result e_ref_loop(cl_comm *c, void *args)
{
    const lab27_loop_args *a = args;
    for (int i = 0; i < a->iters; i++)
        CL_CHECK(lab27_coll(c, a->kind, a->sendbuf, a->recvbuf, a->count));
    return CL_OK;
}

CL_STUDENT_ENTRIES({"sweep", e_sweep}, {"compare", e_compare}, {"ref_loop", e_ref_loop});

#else

#include "lab27_harness.h"

const cl_lab cl_lab_def = {
    .name = "lab27",
    .title = "基准测试方法论: an nccl-tests-style harness and the before/after record",
    .modes = (const cl_mode[]){{.name = "sweep",
                                .help = "your benchmark and the harness's reference, same run",
                                .ranks = sweep_mode},
                               {.name = "compare",
                                .help = "your record of one change: before=.. after=..",
                                .cases = compare_case},
                               {0}},
    .options = (const cl_option[]){{.name = "warmup",
                                    .help = "untimed calls before each measurement (default 5)",
                                    .fallback = "5"},
                                   {0}},
    .lab_op = lab27_lab_op,
    .arena_bytes = (size_t)256 << 20,
};

#endif
