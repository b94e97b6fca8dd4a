/* harness_run.c: lab 26's run mode: every rank one stage, its buffers poisoned and stage 0's
 * input filled with fresh data, the student's schedule called (1F1B, or interleaved with more
 * than one chunk), then every stage's summary and timeline brought to every rank and reported:
 * the makespan, the bubble against the ideal, and per stage its operations and the most
 * activations in flight.
 */
#include <stdlib.h>
#include <string.h>

#include "deadline.h"
#include "lab26_harness.h"

/* Every rank gets v[0..n) combined by max over ranks (each rank wrote its part). */
static cl_result read_ms(cl_run *run, const char *name, double *out)
{
    char *end;
    *out = strtod(cl_opt(run, name), &end) * 1e-3;
    if (*end || !(*out > 0 && *out <= 1.0)) {
        cl_set_error("--%s %s: give milliseconds, more than 0 and at most 1000", name,
                     cl_opt(run, name));
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

/* Per stage: forwards, backwards, max in flight, busy seconds, first start, last end,
 * errors; then 2m ops of (kind, micro-batch, start, end). */
enum { F_FWD, F_BWD, F_FLIGHT, F_BUSY, F_FIRST, F_LAST, F_ERR, NF };

cl_result run_mode(cl_run *run, cl_comm *c)
{
    int p = cl_comm_size(c), s = cl_comm_rank(c);
    int m, nv;
    CL_CHECK(cl_opt_int(run, "micro-batches", 1, MAX_MB, &m));
    CL_CHECK(cl_opt_int(run, "chunks", 1, MAX_MB, &nv));
    size_t L;
    double tf, tb;
    CL_CHECK(cl_parse_size(cl_opt(run, "act-bytes"), &L));
    CL_CHECK(read_ms(run, "forward-ms", &tf));
    CL_CHECK(read_ms(run, "backward-ms", &tb));
    if (m < 1 || nv < 1 || nv * m > MAX_MB || p > MAX_STAGES || L < 1 || L > ((size_t)1 << 24)) {
        cl_set_error("give chunks x micro-batches of at most %d, of 1 B to 16 MiB, on at most %d "
                     "stages",
                     MAX_MB, MAX_STAGES);
        return CL_ERR_INVALID;
    }
    if (nv > 1 && (m % p != 0 || p < 3)) {
        /* messages between two ranks match in order, with no tags: with two ranks the
         * activations and the gradients of the wrap-around would share one pair */
        cl_set_error("--chunks %d: the interleaved schedule needs 3 or more ranks and "
                     "micro-batches a multiple of them (m=%d, p=%d)",
                     nv, m, p);
        return CL_ERR_INVALID;
    }
    stage *st = &stages[s];
    memset(st, 0, sizeof *st);
    st->m = m, st->p = p, st->s = s, st->v = nv, st->tf = tf, st->tb = tb;
    CL_CHECK(cl_fresh_seed(run, c, &st->seed_fwd));
    CL_CHECK(cl_fresh_seed(run, c, &st->seed_bwd));
    size_t total = (size_t)nv * m * L;
    st->a.m = m;
    st->a.chunks = nv;
    st->a.act_bytes = L;
    CL_CHECK(cl_mem_alloc(c, total, &st->a.act_in));
    CL_CHECK(cl_mem_alloc(c, total, &st->a.act_out));
    CL_CHECK(cl_mem_alloc(c, total, &st->a.grad_in));
    CL_CHECK(cl_mem_alloc(c, total, &st->a.grad_out));
    CL_CHECK(cl_poison(c, st->a.act_in, total, CL_INT32));
    CL_CHECK(cl_poison(c, st->a.act_out, total, CL_INT32));
    CL_CHECK(cl_poison(c, st->a.grad_in, total, CL_INT32));
    CL_CHECK(cl_poison(c, st->a.grad_out, total, CL_INT32));
    if (s == 0) /* chunk 0's slots: the input of stage 0 */
        CL_CHECK(cl_fill_bytes(c, st->a.act_in, (size_t)m * L, st->seed_fwd, nv * p, 0));
    CL_CHECK(cl_barrier(c));
    st->t0 = cl_comm_time(c);
    cl_call_result res;
    lab26_stage_args a = st->a;
    cl_deadline_doing("running your pipeline schedule");
    CL_CHECK(cl_student_run(c, nv > 1 ? "interleaved" : "1f1b", &a, sizeof a,
                            CL_ALLOW_P2P | CL_ALLOW_LAB, &res));
    int done_f = 0, done_b = 0;
    for (int j = 0; j < nv * m; j++)
        done_f += st->fwd[j], done_b += st->bwd[j];
    double busy = 0, first = 0, last = 0;
    for (int i = 0; i < st->nops; i++) {
        busy += st->end[i] - st->start[i];
        first = i == 0 || st->start[i] < first ? st->start[i] : first;
        last = st->end[i] > last ? st->end[i] : last;
    }
    /* every stage's summary and timeline, brought to every rank */
    int per = NF + 10 * nv * m, n = p * per;
    double *all = calloc((size_t)n, sizeof *all);
    if (!all) {
        cl_set_error("out of memory");
        return CL_ERR_NOMEM;
    }
    double *mine = all + (size_t)s * per;
    mine[F_FWD] = done_f, mine[F_BWD] = done_b, mine[F_FLIGHT] = st->max_in_flight;
    mine[F_BUSY] = busy, mine[F_FIRST] = first, mine[F_LAST] = last;
    mine[F_ERR] = st->errors + (res.status != CL_OK);
    for (int i = 0; i < st->nops; i++) {
        mine[NF + 5 * i] = st->kind[i];
        mine[NF + 5 * i + 1] = st->mb[i];
        mine[NF + 5 * i + 2] = st->start[i];
        mine[NF + 5 * i + 3] = st->end[i];
        mine[NF + 5 * i + 4] = st->chunk[i];
    }
    cl_result rc = cl_agree_max(c, all, n);
    int64_t status[1] = {res.status != CL_OK};
    if (rc == CL_OK)
        rc = cl_agree(c, CL_SUM, status, 1);
    double start = -1, end = 0, work = 0;
    for (int r = 0; rc == CL_OK && r < p; r++) {
        const double *v = all + (size_t)r * per;
        if (v[F_FWD] > 0 && (start < 0 || v[F_FIRST] < start))
            start = v[F_FIRST];
        end = v[F_LAST] > end ? v[F_LAST] : end;
        work += v[F_BUSY];
    }
    double makespan = end - (start > 0 ? start : 0);
    double bubble = makespan > 0 ? 1.0 - work / (p * makespan) : 1.0;
    cl_report_int(run, "stages", p);
    cl_report_int(run, "micro_batches", m);
    cl_report_num(run, "makespan_s", makespan);
    cl_report_num(run, "bubble", bubble);
    cl_report_int(run, "chunks", nv);
    cl_report_num(run, "ideal_bubble", (double)(p - 1) / (nv * m + p - 1));
    cl_report_int(run, "failed_stages", rc == CL_OK ? status[0] : p);
    for (int r = 0; rc == CL_OK && r < p; r++) {
        const double *v = all + (size_t)r * per;
        cl_row *row = cl_row_begin(run, c);
        cl_col_int(row, "stage", r);
        cl_col_int(row, "forwards", (long long)v[F_FWD]);
        cl_col_int(row, "backwards", (long long)v[F_BWD]);
        cl_col_int(row, "max_in_flight", (long long)v[F_FLIGHT]);
        int limit = nv == 1 ? p - r : 2 * (p - r - 1) + (nv - 1) * p + 1;
        cl_col_int(row, "limit", nv * m < limit ? nv * m : limit);
        cl_col_num(row, "busy_s", v[F_BUSY], "%.6f");
        cl_col_int(row, "errors", (long long)v[F_ERR]);
        long long kind[2 * MAX_MB], mb[2 * MAX_MB], chunk[2 * MAX_MB];
        double t0[2 * MAX_MB], t1[2 * MAX_MB];
        int k = 0;
        for (int i = 0; i < 2 * nv * m && v[NF + 5 * i + 3] > 0; i++, k++) {
            kind[k] = (long long)v[NF + 5 * i], mb[k] = (long long)v[NF + 5 * i + 1];
            chunk[k] = (long long)v[NF + 5 * i + 4];
            t0[k] = v[NF + 5 * i + 2], t1[k] = v[NF + 5 * i + 3];
        }
        cl_col_ints(row, "op_backward", kind, (size_t)k);
        cl_col_ints(row, "op_micro_batch", mb, (size_t)k);
        cl_col_ints(row, "op_chunk", chunk, (size_t)k);
        cl_col_nums(row, "op_start_s", t0, (size_t)k, "%.6f");
        cl_col_nums(row, "op_end_s", t1, (size_t)k, "%.6f");
        cl_row_end(row);
    }
    /* this rank's reason, if its schedule failed */
    if (res.status != CL_OK)
        cl_report_str(run, "error", st->error[0] ? st->error : res.error);
    free(all);
    CL_CHECK(cl_mem_free(c, st->a.act_in));
    CL_CHECK(cl_mem_free(c, st->a.act_out));
    CL_CHECK(cl_mem_free(c, st->a.grad_in));
    CL_CHECK(cl_mem_free(c, st->a.grad_out));
    return rc;
}
