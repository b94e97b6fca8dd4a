/* harness_copy.c: lab 12's staged copy: the student's modelled time of one (model), the
 * lab's link operations, and the student's plan and copy over the links of
 * harness_links.c, checked at awkward sizes (pipe) and timed against the harness's own
 * copy through one staging buffer in paired rounds (pipeperf).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab12_harness.h"

static cl_result read_link(cl_case *c, const char *bw, const char *lat, lab12_link *l)
{
    CL_CHECK(cl_case_num(c, bw, &l->bandwidth_Bps));
    return cl_case_num(c, lat, &l->latency_s);
}

cl_result model_case(cl_case *c)
{
    model_args a = {0};
    double bytes, chunk, nbuf;
    CL_CHECK(cl_case_num(c, "bytes", &bytes));
    CL_CHECK(cl_case_num(c, "chunk", &chunk));
    CL_CHECK(cl_case_num(c, "nbuf", &nbuf));
    CL_CHECK(read_link(c, "bw_in", "lat_in", &a.in));
    CL_CHECK(read_link(c, "bw_out", "lat_out", &a.out));
    a.bytes = (uint64_t)bytes, a.chunk = (uint64_t)chunk, a.nbuf = (int32_t)nbuf;
    cl_result rc = cl_case_call(c, "model", &a, sizeof a);
    cl_col_num(cl_case_row(c), "time_s", a.time_s, "%.9g");
    return rc;
}

/* The student's plan and copy of job, timed by the harness. */
static cl_result student_copy(cl_comm *c, const lab12_job *job, outcome *o)
{
    copy_args a = {.job = *job};
    cl_call_result res;
    memset(o, 0, sizeof *o);
    links_open(c, job);
    CL_CHECK(cl_student_run(c, "copy", &a, sizeof a, CL_ALLOW_LAB, &res));
    o->seconds = res.seconds, o->chunk = a.chunk, o->nbuf = a.nbuf, o->status = res.status;
    snprintf(o->error, sizeof o->error, "%s", res.error);
    return links_close(o);
}

cl_result lab_op(cl_run *run, cl_comm *c, int code, void *args, size_t bytes)
{
    (void)run;
    if (bytes != sizeof(lab12_op)) {
        cl_set_error("lab12: a link operation of %zu bytes", bytes);
        return CL_ERR_INVALID;
    }
    return links_op(c, code, args);
}

/* =========================================================================================
 * Ranks modes: pipe (correctness) and pipeperf (performance)
 * ========================================================================================= */

static cl_result parse_link(const char *text, lab12_link *l)
{
    double gbps, us;
    if (sscanf(text, "%lf:%lf", &gbps, &us) != 2 || !(gbps > 0) || !(us >= 0)) {
        cl_set_error("a link is GBPS:LATENCY_US (e.g. 2:20), not '%s'", text);
        return CL_ERR_INVALID;
    }
    *l = (lab12_link){.bandwidth_Bps = gbps * 1e9, .latency_s = us * 1e-6};
    return CL_OK;
}

static cl_result one_rank(cl_comm *c, lab12_job *job, cl_run *run)
{
    if (cl_comm_size(c) != 1) {
        cl_set_error("the staged copy runs on one rank (--nranks 1, or mpirun -np 1)");
        return CL_ERR_INVALID;
    }
    size_t staging;
    CL_CHECK(cl_parse_size(cl_opt(run, "staging"), &staging));
    job->staging_bytes = staging;
    if (links_real(c)) {
        CL_CHECK(gpu_setup(job));
    } else {
        CL_CHECK(parse_link(cl_opt(run, "in"), &job->in));
        CL_CHECK(parse_link(cl_opt(run, "out"), &job->out));
    }
    return CL_OK;
}

static void col_outcome(cl_row *row, const lab12_job *job, const outcome *o)
{
    cl_col_int(row, "bytes", (long long)job->bytes);
    cl_col_int(row, "chunk", (long long)o->chunk);
    cl_col_int(row, "nbuf", o->nbuf);
    cl_col_str(row, "status", cl_result_str(o->status));
    cl_col_str(row, "error", o->error);
    cl_col_int(row, "wrong_bytes", (long long)o->wrong);
    cl_col_int(row, "bytes_in", (long long)o->bytes_in);
    cl_col_int(row, "bytes_out", (long long)o->bytes_out);
    cl_col_int(row, "hazards", o->hazards);
}

cl_result pipe_mode(cl_run *run, cl_comm *c)
{
    static const size_t sizes[] = {1, 4095, 65537, ((size_t)5 << 20) + 3, ((size_t)33 << 20) + 17};
    lab12_job job = {.bytes = sizes[4]};
    CL_CHECK(one_rank(c, &job, run));
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        job.bytes = sizes[i];
        if (links_real(c))
            CL_CHECK(gpu_fresh(cl_data_hash(0x1200 + i), job.bytes));
        outcome o;
        CL_CHECK(student_copy(c, &job, &o));
        cl_row *row = cl_row_begin(run, c);
        col_outcome(row, &job, &o);
        cl_col_num(row, "seconds", o.seconds, "%.6f");
        cl_row_end(row);
    }
    gpu_teardown();
    return CL_OK;
}

cl_result pipeperf_mode(cl_run *run, cl_comm *c)
{
    const cl_opts *opts = cl_run_opts(run);
    lab12_job job = {.bytes = opts->bytes};
    CL_CHECK(one_rank(c, &job, run));
    int rounds;
    CL_CHECK(cl_opt_int(run, "rounds", 1, 64, &rounds));
    if (links_real(c)) {
        CL_CHECK(gpu_fresh(cl_data_hash(0x1210), job.bytes));
        CL_CHECK(gpu_figures(c, &job));
    }
    double mine[64], base[64], overlap = 0;
    size_t wrong = 0, chunk = 0, in = 0, out = 0;
    int nbuf = 0, hazards = 0;
    outcome o, b;
    for (long r = -1; r < rounds; r++) { /* round -1 warms both up */
        if (links_real(c))
            CL_CHECK(gpu_fresh(cl_data_hash(0x1220 + (uint64_t)(r + 1)), job.bytes));
        CL_CHECK(links_baseline(c, &job, &b));
        if (b.status != CL_OK || b.wrong) {
            cl_set_error("the harness's own copy failed (%zu wrong bytes)", b.wrong);
            return CL_ERR_BACKEND;
        }
        if (links_real(c))
            CL_CHECK(gpu_fresh(cl_data_hash(0x1240 + (uint64_t)(r + 1)), job.bytes));
        CL_CHECK(student_copy(c, &job, &o));
        if (o.status != CL_OK) {
            cl_set_error("%s", o.error);
            return o.status;
        }
        if (r < 0)
            continue;
        mine[r] = o.seconds, base[r] = b.seconds;
        wrong += o.wrong, hazards += o.hazards, chunk = o.chunk, nbuf = o.nbuf;
        in += o.bytes_in, out += o.bytes_out, overlap += o.overlap_s;
    }
    double slow = fmin(job.in.bandwidth_Bps, job.out.bandwidth_Bps);
    cl_report_num(run, "bw_in", job.in.bandwidth_Bps);
    cl_report_num(run, "lat_in", job.in.latency_s);
    cl_report_num(run, "bw_out", job.out.bandwidth_Bps);
    cl_report_num(run, "lat_out", job.out.latency_s);
    cl_report_int(run, "staging", (long long)job.staging_bytes);
    cl_row *row = cl_row_begin(run, c);
    cl_col_int(row, "bytes", (long long)job.bytes);
    cl_col_int(row, "chunk", (long long)chunk);
    cl_col_int(row, "nbuf", nbuf);
    cl_col_nums(row, "student_s", mine, (size_t)rounds, "%.6f");
    cl_col_nums(row, "baseline_s", base, (size_t)rounds, "%.6f");
    cl_col_num(row, "bound_s", (double)job.bytes / slow, "%.6f");
    cl_col_num(row, "model_s", ref_pipeline(job.bytes, chunk, nbuf, job.in, job.out), "%.6f");
    cl_col_num(row, "overlap_s", overlap / (double)rounds, "%.6f");
    cl_col_int(row, "wrong_bytes", (long long)wrong);
    cl_col_int(row, "hazards", hazards);
    cl_col_int(row, "bytes_in", (long long)(in / (size_t)rounds));
    cl_col_int(row, "bytes_out", (long long)(out / (size_t)rounds));
    cl_row_end(row);
    gpu_teardown();
    return CL_OK;
}
