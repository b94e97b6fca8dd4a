/* harness_calibrate.c: lab 06's calibrate mode, and the model select runs with: alpha, beta
 * and gamma as the student's code meets them (a ping-pong and a loop of local reductions made
 * by the student's program, timed by the harness), or given by --model; and the harness's own
 * ping-pong, for the cost of the way to the harness.
 */
#include <stdio.h>
#include <string.h>

#include "lab06_harness.h"

#define PINGPONG_MAX ((size_t)4 << 20)

/* --- calibration: alpha, beta and gamma as the student's code meets them --------------------- */

/* One-way time of a ping-pong of `bytes` between ranks 0 and 1, made by the
 * student's program and timed by the harness (median of 5). */
static cl_result one_way(cl_comm *c, void *buf, size_t bytes, int iters, double *t)
{
    double v[5];
    for (int k = 0; k < 5; k++) {
        pingpong_args a = {.buf = buf, .bytes = bytes, .iters = iters};
        cl_call_result res;
        CL_CHECK(cl_barrier(c));
        CL_CHECK(cl_student_run(c, "pingpong", &a, sizeof a, CL_ALLOW_P2P, &res));
        if (res.status != CL_OK) {
            cl_set_error("the calibration ping-pong failed: %s", res.error);
            return res.status;
        }
        v[k] = cl_comm_rank(c) == 0 ? res.seconds / (2.0 * iters) : 0;
        CL_CHECK(cl_agree_max(c, &v[k], 1));
    }
    *t = cl_median(v, 5);
    return CL_OK;
}

static cl_result calibrate(cl_comm *c, lab06_model *m)
{
    const size_t big = PINGPONG_MAX;
    void *a = NULL, *b = NULL;
    double small_t = 0, big_t = 0, g[5];
    cl_result rc = cl_mem_alloc(c, big, &a);
    if (rc == CL_OK)
        rc = cl_mem_alloc(c, big, &b);
    if (rc == CL_OK)
        rc = cl_fill_bytes(c, a, big, 1, 0, 0);
    if (rc == CL_OK)
        rc = cl_fill_bytes(c, b, big, 2, 0, 0);
    if (rc == CL_OK && cl_comm_size(c) > 1) {
        rc = one_way(c, a, 8, 200, &small_t);
        if (rc == CL_OK)
            rc = one_way(c, a, big, 4, &big_t);
    }
    for (int k = 0; rc == CL_OK && k < 5; k++) {
        reduce_args ra = {.a = a, .b = b, .count = big / 4, .iters = 4};
        cl_call_result res;
        rc = cl_student_run(c, "reduce_loop", &ra, sizeof ra, CL_ALLOW_LOCAL, &res);
        if (rc == CL_OK && res.status != CL_OK) {
            cl_set_error("the calibration's local reductions failed: %s", res.error);
            rc = res.status;
        }
        g[k] = res.seconds / ra.iters / (double)big;
        if (rc == CL_OK)
            rc = cl_agree_max(c, &g[k], 1);
    }
    if (rc == CL_OK) {
        *m = (lab06_model){.alpha_s = small_t,
                           .beta_s_per_byte = big_t > small_t ? (big_t - small_t) / big : 0,
                           .gamma_s_per_byte = cl_median(g, 5)};
    }
    if (a)
        cl_mem_free(c, a);
    if (b)
        cl_mem_free(c, b);
    return rc;
}

/* The model of --model A,B,G, or measured. */
cl_result get_model(cl_run *run, cl_comm *c, lab06_model *m)
{
    const char *text = cl_opt(run, "model");
    if (!text || strcmp(text, "measure") == 0)
        CL_CHECK(calibrate(c, m));
    else if (sscanf(text, "%lf,%lf,%lf", &m->alpha_s, &m->beta_s_per_byte, &m->gamma_s_per_byte) !=
                 3 ||
             !(m->alpha_s >= 0 && m->beta_s_per_byte >= 0 && m->gamma_s_per_byte >= 0)) {
        cl_set_error("--model wants ALPHA,BETA,GAMMA (seconds, seconds per byte), not '%s'", text);
        return CL_ERR_INVALID;
    }
    cl_report_num(run, "alpha_s", m->alpha_s);
    cl_report_num(run, "beta_s_per_byte", m->beta_s_per_byte);
    cl_report_num(run, "gamma_s_per_byte", m->gamma_s_per_byte);
    return CL_OK;
}

/* The harness's own ping-pong of 8 B: alpha without the way to the harness. */
static cl_result harness_alpha(cl_comm *c, double *t)
{
    void *buf;
    int r = cl_comm_rank(c), iters = 200;
    *t = 0;
    CL_CHECK(cl_mem_alloc(c, 8, &buf));
    CL_CHECK(cl_barrier(c));
    double t0 = cl_comm_time(c);
    for (int i = 0; i < iters && r < 2 && cl_comm_size(c) > 1; i++) {
        CL_CHECK(r == 0 ? cl_send(c, buf, 8, 1) : cl_recv(c, buf, 8, 0));
        CL_CHECK(r == 0 ? cl_recv(c, buf, 8, 1) : cl_send(c, buf, 8, 0));
    }
    if (r == 0 && cl_comm_size(c) > 1)
        *t = (cl_comm_time(c) - t0) / (2.0 * iters);
    CL_CHECK(cl_mem_free(c, buf));
    return cl_agree_max(c, t, 1);
}

cl_result calibrate_mode(cl_run *run, cl_comm *c)
{
    lab06_model m;
    double t;
    CL_CHECK(get_model(run, c, &m));
    CL_CHECK(harness_alpha(c, &t));
    cl_report_num(run, "harness_alpha_s", t);
    return CL_OK;
}
