/* harness_call.c: lab 03's call of the student's matrix, once, and the method it runs with:
 * the options (--kind, --warmup, --repeats, --noise) checked, with the buffers they need,
 * and reported; the call with fresh buffers, every operation recorded (harness_ops.c), and
 * what the harness found; a failed call as the mode's error.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab03_harness.h"

const char *const kind_names[] = {"uni", "bidir", "latency"};

/* Run the student's matrix of kind once, with fresh buffers, and gather findings. */
cl_result student_matrix(cl_run *run, cl_comm *c, int kind, size_t bytes, const lab03_method *m,
                         int noise, findings *f, cl_call_result *res)
{
    matrix_args *a = calloc(1, sizeof *a);
    if (!a)
        return CL_ERR_NOMEM;
    a->kind = kind, a->bytes = bytes, a->m = *m;
    for (int k = 0; k < MAXR * MAXR; k++)
        a->matrix[k] = NAN;
    cl_result rc = ops_start(run, c, kind, bytes, m, noise);
    if (rc == CL_OK)
        rc = cl_student_run(c, "matrix", a, sizeof *a,
                            CL_ALLOW_P2P | CL_ALLOW_BARRIER | CL_ALLOW_LAB, res);
    char why[200] = "";
    if (rc == CL_OK)
        rc = ops_finish(c, a->matrix, f, why, sizeof why);
    if (rc == CL_OK && res->status == CL_OK && !res->forbidden[0] && why[0])
        snprintf(res->error, sizeof res->error, "%s", why);
    free(a);
    return rc;
}

cl_result parse_method(cl_run *run, lab03_method *m, int *kind, int *noise)
{
    const cl_opts *o = cl_run_opts(run);
    const char *k = cl_opt(run, "kind"), *nz = cl_opt(run, "noise");
    int w;
    CL_CHECK(cl_opt_int(run, "warmup", 0, 1000, &w));
    *m = (lab03_method){.warmup = w, .iters = o->iters, .repeats = o->repeats};
    if (m->repeats > LAB03_MAX_REPEATS) {
        cl_set_error("--repeats: at most %d", LAB03_MAX_REPEATS);
        return CL_ERR_INVALID;
    }
    *kind = -1;
    for (int i = 0; i < 3; i++)
        if (strcmp(k, kind_names[i]) == 0)
            *kind = i;
    if (*kind < 0 || (strcmp(nz, "on") && strcmp(nz, "off"))) {
        cl_set_error("--kind is uni, bidir or latency and --noise on or off");
        return CL_ERR_INVALID;
    }
    *noise = strcmp(nz, "on") == 0;
    return CL_OK;
}

cl_result check_size(cl_comm *c, size_t bytes, const lab03_method *m)
{
    size_t P = (size_t)(m->warmup + m->iters * m->repeats);
    if (cl_comm_size(c) > MAXR) {
        cl_set_error("at most %d ranks", MAXR);
        return CL_ERR_INVALID;
    }
    if (bytes == 0 || P * bytes > ((size_t)256 << 20)) {
        cl_set_error("%zu operations of %zu bytes need %zu MiB of buffers per rank (at most "
                     "512): fewer operations or smaller messages",
                     P, bytes, 2 * P * bytes >> 20);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

void report_method(cl_run *run, int kind, size_t bytes, const lab03_method *m)
{
    cl_report_str(run, "kind", kind_names[kind]);
    cl_report_int(run, "bytes", (long long)bytes);
    cl_report_int(run, "warmup", m->warmup);
    cl_report_int(run, "iters", m->iters);
    cl_report_int(run, "repeats", m->repeats);
    cl_report_str(run, "units", kind == LAB03_LATENCY ? "us" : "GB/s");
}

cl_result call_failed(const cl_call_result *res)
{
    if (res->status == CL_OK)
        return CL_OK;
    cl_set_error("%s%s%s", res->error, res->forbidden[0] ? "; forbidden: " : "", res->forbidden);
    return res->status;
}
