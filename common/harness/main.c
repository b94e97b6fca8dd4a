/* main.c: every lab program's main(): the student's program, the ranks, the mode, the report. */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boundary/wire.h"
#include "deadline.h"
#include "run.h"

/* On MPI, one wait of the student's that lasts this long means no message is
 * coming: no exchange in any lab waits this long on a machine whose checks are
 * admitted one at a time (grader/gradelib/admission.py). */
#define STALL_S 20.0

/* --- running ----------------------------------------------------------------------------- */

static int root_process = -1; /* 1 in the process that hosts world rank 0 */
static cl_run *the_run;       /* for the lab's operations (cl_lab.lab_op) */

static cl_result lab_op(cl_comm *comm, int code, void *args, size_t bytes)
{
    return the_run->lab->lab_op(the_run, comm, code, args, bytes);
}
static int finished;

static void finish(cl_run *run, cl_result rc, const char *why)
{
    if (finished)
        return;
    finished = 1;
    cl_result wr = cl_report_finish(run, rc, why, root_process != 0);
    if (wr != CL_OK)
        fprintf(stderr, "%s: %s\n", run->lab->name, cl_last_error());
}

static cl_result hello(cl_run *run, cl_comm *comm)
{
    if (run->hello_done)
        return CL_OK;
    run->hello_done = 1;
    const char *b = run->o.backend;
    /* A cases mode runs in this one process whatever --backend says: no ranks, host memory. */
    int cases = run->mode->cases != NULL;
    int sim = !cases && strcmp(b, "sim") == 0, gpu = !cases && strcmp(b, "gpu") == 0;
    unsigned flags = sim || gpu ? 0 : CL_WIRE_HOST_BUFFERS;
    int first = sim ? 0 : comm->world_rank;
    root_process = first == 0;
    cl_report_str(run, "backend", cases ? "none" : b);
    if (!cases)
        cl_report_int(run, "ranks", comm->size);
    if (sim)
        cl_report_str(run, "system", run->o.system);
    return cl_student_hello(sim   ? CL_WIRE_SIM
                            : gpu ? CL_WIRE_GPU
                                  : CL_WIRE_CPU,
                            first, comm->size, flags);
}

static cl_result body(cl_comm *comm, void *arg)
{
    cl_run *run = arg;
    cl_result rc = hello(run, comm);
    if (rc == CL_OK && run->mode->cases)
        rc = cl_run_cases(run, comm);
    else if (rc == CL_OK && comm->size < run->mode->min_ranks) {
        cl_set_error("mode %s needs at least %d ranks, got %d", run->mode->name,
                     run->mode->min_ranks, comm->size);
        rc = CL_ERR_INVALID;
    } else if (rc == CL_OK) {
        char doing[96];
        snprintf(doing, sizeof doing, "rank %d ran mode %s", comm->world_rank, run->mode->name);
        cl_deadline_doing(doing);
        rc = run->mode->ranks(run, comm);
    }
    if (rc != CL_OK) /* a failing rank says why, before MPI ends the job */
        finish(run, rc, cl_last_error());
    return rc;
}

static void student_path(cl_run *run, char *out, size_t n)
{
    if (run->o.student) {
        snprintf(out, n, "%s", run->o.student);
        return;
    }
    char self[480];
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    if (k > 0) {
        self[k] = '\0';
        snprintf(out, n, "%.480s-student", self);
    } else {
        snprintf(out, n, "%.480s-student", run->argv0);
    }
}

int main(int argc, char **argv)
{
    /* CUDA numbers devices as nvidia-smi does, for every lab that compares them. */
    setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
    static cl_run run;
    run.lab = &cl_lab_def;
    run.o = (cl_opts){.backend = "cpu",
                      .system = "dgx-a100",
                      .nranks = 8,
                      .repeats = 5,
                      .iters = 1,
                      .factor = 2,
                      .bytes = (size_t)1 << 20,
                      .min_bytes = 8,
                      .max_bytes = (size_t)16 << 20,
                      .dtype = CL_FLOAT32,
                      .op = CL_SUM};
    snprintf(run.argv0, sizeof run.argv0, "%s", argv[0]);
    cl_collect_modes(run.lab);
    int help = 0;
    cl_result rc = cl_parse_options(&run, argc, argv, &help);
    if (help) {
        cl_usage(run.lab, stdout);
        return 0;
    }
    if (rc != CL_OK) {
        fprintf(stderr, "%s: %s\n", run.lab->name, cl_last_error());
        return cl_exit_status(rc);
    }
    run.report = cl_report_new(&run);
    int sim = strcmp(run.o.backend, "sim") == 0;
    char path[512];
    student_path(&run, path, sizeof path);
    /* The arena holds the ranks' slots and, on "cpu", their buffers: room for
     * the largest size asked for, four times over (send, receive, scratch, spare). */
    size_t biggest = run.o.bytes > run.o.max_bytes ? run.o.bytes : run.o.max_bytes;
    size_t arena = ((size_t)64 << 20) + (strcmp(run.o.backend, "cpu") == 0 ? 4 * biggest : 0);
    if (run.lab->arena_bytes > arena)
        arena = run.lab->arena_bytes;
    cl_student_opts so = {.program = path,
                          .permits = run.lab->permits,
                          .arena_bytes = arena,
                          .nlocal = sim && !run.mode->cases ? run.o.nranks : 1};
    if (run.lab->student_setup)
        rc = run.lab->student_setup(&run, &so);
    /* The student's program starts before MPI or CUDA exist in this process. */
    if (rc == CL_OK)
        rc = cl_student_start(&so);
    the_run = &run;
    if (run.lab->lab_op)
        cl_student_set_lab_handler(lab_op);
    if (rc == CL_OK) {
        cl_deadline_start(run.o.deadline);
        if (strcmp(run.o.backend, "cpu") == 0 && !run.mode->cases)
            cl_deadline_stall(STALL_S);
        cl_launch_opts lo = {.backend = run.o.backend,
                             .nranks = run.o.nranks,
                             .system = run.o.system,
                             .argc = &argc,
                             .argv = &argv};
        rc = run.mode->cases ? cl_solo_launch(&lo, body, &run) : cl_launch(&lo, body, &run);
    }
    char why[400];
    snprintf(why, sizeof why, "%s", rc == CL_OK ? "" : cl_last_error());
    if (root_process != 0)
        finish(&run, rc, why);
    cl_student_stop();
    if (rc != CL_OK)
        fprintf(stderr, "%s %s: %s%s%s\n", run.lab->name, run.mode->name, cl_result_str(rc),
                why[0] ? ": " : "", why);
    cl_report_free(run.report);
    free(run.lab_values);
    return cl_exit_status(rc);
}
