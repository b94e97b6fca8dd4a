/* driver.c: lab 26's plug-in: one training step of a p-stage pipeline, the student's schedule.
 *
 *   lab26 run [--micro-batches 8] [--act-bytes 64K] [--forward-ms 1] [--backward-ms 2]
 *             [--backend cpu|sim] [--nranks P]
 *
 * Every rank is one stage. The student's lab26_1f1b() decides the order of the
 * stage's forwards and backwards and moves activations and gradients with the
 * point-to-point interface; the stage's computation is the harness's
 * (lab_op: a forward or a backward, timed on the rank's clock, charged in
 * virtual time on sim). Every activation and gradient carries the content of
 * its stage and micro-batch (fresh seeds each run), so each forward and
 * backward checks that its input is exactly the one sequential execution
 * would give. The harness records every operation's start and end: the
 * timeline it reports, the bubble and the activations in flight come from it.
 *
 * This file holds the student's entries and the lab's table; the stage's
 * computation is in harness_stage.c, the run mode in harness_run.c
 * (lab26_harness.h).
 */
#include "harness/harness.h"
#include "lab26.h"

#ifdef CL_STUDENT_SIDE

static cl_result schedule(cl_comm *c, void *args) { return lab26_1f1b(c, args); }

static cl_result interleaved(cl_comm *c, void *args) { return lab26_interleaved(c, args); }

CL_STUDENT_ENTRIES({"1f1b", schedule}, {"interleaved", interleaved});

#else

#include "lab26_harness.h"

const cl_lab cl_lab_def = {
    .name = "lab26",
    .title = "流水线并行 P2P: the 1F1B schedule",
    .modes = (const cl_mode[]){{.name = "run",
                                .help = "one training step with your schedule, one stage a rank",
                                .ranks = run_mode,
                                .backends = "cpu,sim"},
                               {0}},
    .options =
        (const cl_option[]){{"micro-batches", "micro-batches per step (m)", "8"},
                            {"act-bytes", "bytes of one activation or gradient", "64K"},
                            {"forward-ms", "a stage's forward of one micro-batch", "1"},
                            {"backward-ms", "a stage's backward of one micro-batch", "2"},
                            {"chunks", "model chunks per rank (more than 1: interleaved)", "1"},
                            {0}},
    .lab_op = lab_op,
};

#endif
