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
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "deadline.h"
#include "harness/harness.h"
#include "lab26.h"
#include "p2p_sim.h"

#ifdef CL_STUDENT_SIDE

static cl_result schedule(cl_comm *c, void *args) { return lab26_1f1b(c, args); }

static cl_result interleaved(cl_comm *c, void *args) { return lab26_interleaved(c, args); }

CL_STUDENT_ENTRIES({"1f1b", schedule}, {"interleaved", interleaved});

#else

#define MAX_STAGES 16
#define MAX_MB     64

/* One stage's state during a run (the harness's; on sim every stage lives in
 * this process, on cpu each process uses its own entry). */
typedef struct stage {
    lab26_stage_args a; /* the buffers the student was given */
    int m, p, s, v;
    uint64_t seed_fwd, seed_bwd;
    double tf, tb, t0;
    unsigned char fwd[MAX_MB], bwd[MAX_MB];
    int in_flight, max_in_flight, nops, errors;
    int kind[2 * MAX_MB], mb[2 * MAX_MB], chunk[2 * MAX_MB];
    double start[2 * MAX_MB], end[2 * MAX_MB];
    char error[200];
} stage;

static stage stages[MAX_STAGES];

static void *slot(void *buf, size_t bytes, int j) { return (char *)buf + (size_t)j * bytes; }

/* The stage's computation time: virtual on sim, slept on cpu and gpu. */
static cl_result compute(cl_comm *c, double seconds)
{
    if (strcmp(cl_comm_backend(c), "sim") == 0)
        return cl_sim_compute(c, seconds);
    double until = cl_comm_time(c) + seconds;
    for (double now = cl_comm_time(c); now < until; now = cl_comm_time(c)) {
        double left = until - now;
        struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        nanosleep(&ts, NULL);
    }
    return CL_OK;
}

static cl_result fail(stage *st, const char *fmt, int j, const char *what)
{
    char text[200];
    snprintf(text, sizeof text, fmt, j, st->s, what);
    if (!st->error[0])
        snprintf(st->error, sizeof st->error, "%s", text);
    st->errors++;
    cl_set_error("%s", text);
    return CL_ERR_INVALID;
}

/* Whether slot j of buf holds exactly owner's content for seed. */
static cl_result holds(cl_comm *c, void *buf, size_t bytes, int idx, int j, uint64_t seed,
                       int owner, int *ok)
{
    size_t wrong = 0;
    CL_CHECK(cl_count_wrong_bytes(c, slot(buf, bytes, idx), bytes, seed, owner, (size_t)j * bytes,
                                  &wrong));
    *ok = wrong == 0;
    return CL_OK;
}

static cl_result lab_op(cl_run *run, cl_comm *c, int code, void *args, size_t bytes)
{
    (void)run;
    stage *st = &stages[cl_comm_rank(c)];
    int kj[2], ok = 1;
    size_t L = st->a.act_bytes;
    if (bytes != sizeof kj || (code != LAB26_OP_FORWARD && code != LAB26_OP_BACKWARD)) {
        cl_set_error("lab26: unknown operation %d", code);
        return CL_ERR_INVALID;
    }
    memcpy(kj, args, sizeof kj);
    int k = kj[0], j = kj[1];
    if (k < 0 || k >= st->v)
        return fail(st, "micro-batch %d on stage %d: %s", j, "there is no such model chunk");
    if (j < 0 || j >= st->m)
        return fail(st, "micro-batch %d on stage %d: %s", j, "there is no such micro-batch");
    /* chunk k of rank s is stage g of the v * p; its slots are idx */
    int idx = k * st->m + j, g = k * st->p + st->s, last = st->v * st->p - 1;
    double t = cl_comm_time(c);
    if (code == LAB26_OP_FORWARD) {
        if (st->fwd[idx])
            return fail(st, "forward of micro-batch %d on stage %d: %s", j, "done twice");
        /* stage 0 reads the harness's input (owner v * p), stage g the output of g - 1 */
        CL_CHECK(holds(c, st->a.act_in, L, idx, j, st->seed_fwd, g == 0 ? last + 1 : g - 1, &ok));
        if (!ok)
            return fail(st, "forward of micro-batch %d on stage %d: %s", j,
                        g == 0 ? "its input was overwritten"
                               : "act_in is not the previous stage's activation yet");
        CL_CHECK(compute(c, st->tf / st->v));
        CL_CHECK(cl_fill_bytes(c, slot(st->a.act_out, L, idx), L, st->seed_fwd, g, (size_t)j * L));
        st->fwd[idx] = 1;
        if (++st->in_flight > st->max_in_flight)
            st->max_in_flight = st->in_flight;
    } else {
        if (!st->fwd[idx])
            return fail(st, "backward of micro-batch %d on stage %d: %s", j, "before its forward");
        if (st->bwd[idx])
            return fail(st, "backward of micro-batch %d on stage %d: %s", j, "done twice");
        if (g < last) {
            CL_CHECK(holds(c, st->a.grad_in, L, idx, j, st->seed_bwd, g + 1, &ok));
            if (!ok)
                return fail(st, "backward of micro-batch %d on stage %d: %s", j,
                            "grad_in is not the next stage's gradient yet");
        }
        CL_CHECK(compute(c, st->tb / st->v));
        CL_CHECK(cl_fill_bytes(c, slot(st->a.grad_out, L, idx), L, st->seed_bwd, g, (size_t)j * L));
        st->bwd[idx] = 1;
        st->in_flight--;
    }
    if (st->nops < 2 * MAX_MB) {
        st->kind[st->nops] = code == LAB26_OP_BACKWARD;
        st->mb[st->nops] = j;
        st->chunk[st->nops] = k;
        st->start[st->nops] = t - st->t0;
        st->end[st->nops++] = cl_comm_time(c) - st->t0;
    }
    return CL_OK;
}

/* Every rank gets v[0..n) combined by max over ranks (each rank wrote its part). */
static cl_result gather_max(cl_comm *c, double *v, int n)
{
    for (int i = 0; i < n; i += CL_AGREE_MAX)
        CL_CHECK(cl_agree_max(c, v + i, n - i < CL_AGREE_MAX ? n - i : CL_AGREE_MAX));
    return CL_OK;
}

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

static cl_result run_mode(cl_run *run, cl_comm *c)
{
    int p = cl_comm_size(c), s = cl_comm_rank(c);
    int m = atoi(cl_opt(run, "micro-batches")), nv = atoi(cl_opt(run, "chunks"));
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
    cl_result rc = gather_max(c, all, n);
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
