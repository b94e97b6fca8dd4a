/* harness_pingpong.c: lab 01's sweep and bench modes. They interleave the student's
 * ping-pong with the harness's own loop, on buffers filled with fresh bytes for every call;
 * the harness checks that both ranks end with rank 0's bytes, counts the messages each rank
 * really sent and received (its trace), and times the call from outside. sweep then hands
 * the student's own measurements to the student's fit.
 */
#include <string.h>

#include "lab01_harness.h"

/* --- ping-pong ------------------------------------------------------------------------- */

/* The harness's own loop: the same exchange as the student's, without the
 * crossing between the student's program and the harness. */
static cl_result harness_loop(cl_comm *c, void *buf, size_t bytes, int iters, double *one_way)
{
    int rank = cl_comm_rank(c);
    if (rank > 1)
        return CL_OK;
    double t0 = cl_comm_time(c);
    for (int i = 0; i < iters; i++) {
        if (rank == 0) {
            CL_CHECK(cl_send(c, buf, bytes, 1));
            CL_CHECK(cl_recv(c, buf, bytes, 1));
        } else {
            CL_CHECK(cl_recv(c, buf, bytes, 0));
            CL_CHECK(cl_send(c, buf, bytes, 0));
        }
    }
    *one_way = (cl_comm_time(c) - t0) / (2.0 * iters);
    return CL_OK;
}

/* Transfers of `bytes` with the other rank that the trace shows, not counting
 * any of another size or peer (those make *odd non-zero). */
static void count_messages(const cl_comm *c, size_t bytes, int *sends, int *recvs, int *odd)
{
    int n;
    const cl_trace_event *ev = cl_student_trace(c, &n);
    int peer = 1 - cl_comm_rank(c);
    *sends = *recvs = *odd = 0;
    for (int i = 0; i < n; i++) {
        if (ev[i].op != CL_WOP_ISEND && ev[i].op != CL_WOP_IRECV)
            continue;
        if (ev[i].peer != peer || ev[i].bytes != bytes)
            (*odd)++;
        else if (ev[i].op == CL_WOP_ISEND)
            (*sends)++;
        else
            (*recvs)++;
    }
}

typedef struct sample {
    double student, external, harness; /* one-way seconds */
    int64_t corrupt, messages_off;
} sample;

/* One student call and one harness loop at `bytes`, checked; agreed over ranks. */
static cl_result one_sample(cl_run *run, cl_comm *c, void *buf, size_t bytes, int iters, sample *s)
{
    int rank = cl_comm_rank(c);
    uint64_t seed;
    CL_CHECK(cl_barrier(c));
    CL_CHECK(harness_loop(c, buf, bytes, iters, &s->harness));
    CL_CHECK(cl_fresh_seed(run, c, &seed));
    CL_CHECK(cl_fill_bytes(c, buf, bytes, seed, rank, 0));
    CL_CHECK(cl_barrier(c));
    pingpong_args a = {.buf = buf, .bytes = bytes, .iters = iters};
    cl_call_result res;
    CL_CHECK(cl_student_run(c, "pingpong", &a, sizeof a, CL_ALLOW_P2P, &res));
    if (res.status != CL_OK)
        return res.status;
    s->student = a.one_way_s;
    s->external = res.seconds / (2.0 * iters);
    size_t wrong = 0;
    int sends = iters, recvs = iters, odd = 0;
    if (rank <= 1) {
        CL_CHECK(cl_count_wrong_bytes(c, buf, bytes, seed, 0, 0, &wrong));
        count_messages(c, bytes, &sends, &recvs, &odd);
    }
    int64_t v[2] = {(int64_t)wrong, (sends != iters) + (recvs != iters) + (odd != 0)};
    CL_CHECK(cl_agree(c, CL_SUM, v, 2));
    s->corrupt = v[0];
    s->messages_off = v[1];
    double t[3] = {s->student > 0 ? s->student : 0, s->external, s->harness};
    if (rank > 1)
        t[0] = t[1] = t[2] = 0;
    return cl_agree_max(c, t, 3);
}

static int iterations_for(size_t bytes)
{
    size_t n = ((size_t)16 << 20) / (bytes ? bytes : 1);
    return n < 10 ? 10 : n > 500 ? 500 : (int)n;
}

static cl_result pingpong_mode(cl_run *run, cl_comm *c, int bench)
{
    const cl_opts *o = cl_run_opts(run);
    size_t first = bench ? o->bytes : 8, last = bench ? o->bytes : o->max_bytes;
    int reps = o->repeats > 64 ? 64 : o->repeats;
    void *buf;
    CL_CHECK(cl_mem_alloc(c, last, &buf));
    double sizes[32], mine[32];
    int n = 0;
    cl_report_str(run, "units", "bytes, one-way times in us, bandwidths in GB/s");
    for (size_t bytes = first; bytes <= last && n < 32; bytes *= 4, n++) {
        int iters = bench ? 50 : iterations_for(bytes);
        sample s[64];
        double st[64], ex[64], hs[64], sbw[64], hbw[64];
        int64_t corrupt = 0, off = 0;
        for (int r = 0; r < reps; r++) {
            CL_CHECK(one_sample(run, c, buf, bytes, iters, &s[r]));
            st[r] = s[r].student * 1e6, ex[r] = s[r].external * 1e6, hs[r] = s[r].harness * 1e6;
            sbw[r] = s[r].student > 0 ? bytes / s[r].student / 1e9 : 0;
            hbw[r] = s[r].harness > 0 ? bytes / s[r].harness / 1e9 : 0;
            corrupt += s[r].corrupt;
            off += s[r].messages_off;
        }
        sizes[n] = (double)bytes;
        mine[n] = cl_median(st, (size_t)reps) * 1e-6;
        cl_row *row = cl_row_begin(run, c);
        cl_col_int(row, "bytes", (long long)bytes);
        cl_col_int(row, "iters", iters);
        cl_col_nums(row, "student_us", st, (size_t)reps, "%.2f");
        cl_col_nums(row, "external_us", ex, (size_t)reps, "%.2f");
        cl_col_nums(row, "harness_us", hs, (size_t)reps, "%.2f");
        cl_col_nums(row, "student_gbps", sbw, (size_t)reps, "%.3f");
        cl_col_nums(row, "harness_gbps", hbw, (size_t)reps, "%.3f");
        cl_col_int(row, "corrupt_bytes", corrupt);
        cl_col_int(row, "messages_off", off);
        cl_row_end(row);
        if (bench)
            break;
    }
    CL_CHECK(cl_mem_free(c, buf));
    if (bench || cl_comm_rank(c) != 0)
        return CL_OK;
    /* The student's fit of the student's own measurements. */
    fit_args f = {.n = n};
    memcpy(f.bytes, sizes, (size_t)n * sizeof *sizes);
    memcpy(f.seconds, mine, (size_t)n * sizeof *mine);
    cl_call_result res;
    CL_CHECK(cl_student_run(c, "fit", &f, sizeof f, 0, &res));
    cl_report_str(run, "fit_status", cl_result_str(res.status));
    cl_report_num(run, "alpha_s", res.status == CL_OK ? f.alpha_s : 0.0 / 0.0);
    cl_report_num(run, "beta_s_per_byte", res.status == CL_OK ? f.beta_s_per_byte : 0.0 / 0.0);
    return CL_OK;
}

cl_result sweep(cl_run *run, cl_comm *c) { return pingpong_mode(run, c, 0); }
cl_result bench(cl_run *run, cl_comm *c) { return pingpong_mode(run, c, 1); }
