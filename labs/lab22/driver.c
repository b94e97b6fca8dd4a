/* driver.c: lab 22's plug-in: ZeRO-1/2/3 on a small MLP, checked against plain data parallel.
 *
 *   lab22 collectives                   your ring ReduceScatter and AllGather, exact
 *   lab22 train [--stages 0,1,2,3]      each stage's model after --steps steps, the bytes
 *                                       each rank sent and its peak memory, from the trace
 *   lab22 bucket params=6.7e9 ranks=64 ...   your ZeRO-2 bucket, modelled, and the best one
 *
 * The harness never takes the student's word: the model after k steps is
 * compared with the harness's own plain data-parallel run in double precision
 * (harness_train.c); the bytes a rank sent and the memory it held are read from
 * the harness's trace of the call (every cl_send, cl_mem_alloc, cl_mem_free). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deadline.h"
#include "harness/harness.h"
#include "lab22.h"

typedef struct coll_args {
    int gather; /* 0: reduce-scatter, 1: all-gather */
    float *buf, *shard;
    size_t n;
} coll_args;

typedef struct train_args {
    lab22_job job;
} train_args;

typedef struct bucket_args {
    lab22_cluster k;
    double bucket; /* out */
} bucket_args;

#ifdef CL_STUDENT_SIDE

static cl_result coll(cl_comm *c, void *args)
{
    coll_args *a = args;
    return a->gather ? lab22_all_gather(c, a->shard, a->n, a->buf)
                     : lab22_reduce_scatter(c, a->buf, a->n, a->shard);
}

static cl_result train(cl_comm *c, void *args)
{
    train_args *a = args;
    return lab22_train(c, &a->job);
}

static cl_result bucket(cl_comm *c, void *args)
{
    (void)c;
    bucket_args *a = args;
    a->bucket = lab22_choose_bucket(&a->k);
    return CL_OK;
}

CL_STUDENT_ENTRIES({"coll", coll}, {"train", train}, {"bucket", bucket});

#else

#include "lab22_harness.h"

#define ALLOW (CL_ALLOW_P2P | CL_ALLOW_LOCAL | CL_ALLOW_MEMORY)

/* --- the collectives ----------------------------------------------------------------------- */

/* Bytes the rank sent in its last call, from the trace. */
static size_t sent_bytes(const cl_comm *c)
{
    int n;
    const cl_trace_event *ev = cl_student_trace(c, &n);
    size_t sum = 0;
    for (int i = 0; i < n; i++)
        if (ev[i].op == CL_WOP_ISEND)
            sum += ev[i].bytes;
    return sum;
}

/* The most memory the rank held at once in its last call: cl_mem_alloc less cl_mem_free. */
static size_t peak_bytes(const cl_comm *c)
{
    int n;
    const cl_trace_event *ev = cl_student_trace(c, &n);
    long long live = 0, peak = 0;
    for (int i = 0; i < n; i++) {
        if (ev[i].op == CL_WOP_ALLOC)
            live += (long long)ev[i].bytes;
        else if (ev[i].op == CL_WOP_FREE)
            live -= (long long)ev[i].bytes;
        if (live > peak)
            peak = live;
    }
    return (size_t)peak;
}

static cl_result one_coll(cl_run *run, cl_comm *c, int gather, size_t k)
{
    int nr = cl_comm_size(c), r = cl_comm_rank(c);
    size_t n = k * (size_t)nr, wrong = 0;
    float *buf = NULL, *shard = NULL;
    uint64_t seed;
    cl_call_result res = {0};
    cl_result rc = CL_OK;
    CL_TRY(cl_fresh_seed(run, c, &seed));
    CL_TRY(cl_mem_alloc(c, n * sizeof(float), (void **)&buf));
    CL_TRY(cl_mem_alloc(c, k * sizeof(float), (void **)&shard));
    if (gather) {
        CL_TRY(cl_fill(c, shard, k, CL_FLOAT32, CL_SUM, seed, r, (size_t)r * k));
        CL_TRY(cl_poison(c, buf, n * sizeof(float), CL_FLOAT32));
    } else {
        CL_TRY(cl_fill(c, buf, n, CL_FLOAT32, CL_SUM, seed, r, 0));
        CL_TRY(cl_poison(c, shard, k * sizeof(float), CL_FLOAT32));
    }
    coll_args a = {.gather = gather, .buf = buf, .shard = shard, .n = n};
    cl_deadline_doing(gather ? "lab22_all_gather" : "lab22_reduce_scatter");
    CL_TRY(cl_student_run(c, "coll", &a, sizeof a, ALLOW, &res));
    if (res.status == CL_OK) {
        if (gather) {
            for (int i = 0; i < nr; i++) {
                size_t w;
                CL_TRY(cl_count_wrong(c, buf + (size_t)i * k, k, CL_FLOAT32, CL_SUM, seed, i, i + 1,
                                      (size_t)i * k, &w));
                wrong += w;
            }
        } else {
            CL_TRY(cl_count_wrong(c, shard, k, CL_FLOAT32, CL_SUM, seed, 0, nr, (size_t)r * k,
                                  &wrong));
        }
    }
    int64_t v[3] = {res.status != CL_OK, (int64_t)wrong, (int64_t)sent_bytes(c)};
    int64_t lo = v[2];
    CL_TRY(cl_agree(c, CL_MIN, &lo, 1));
    CL_TRY(cl_agree(c, CL_MAX, v, 3));
    int64_t sum_wrong = (int64_t)wrong;
    CL_TRY(cl_agree(c, CL_SUM, &sum_wrong, 1));
    cl_row *row = cl_row_begin(run, c);
    cl_col_str(row, "coll", gather ? "allgather" : "reducescatter");
    cl_col_int(row, "ranks", nr);
    cl_col_int(row, "count", (long long)n);
    cl_col_call(row, &res);
    cl_col_int(row, "failed_ranks", v[0]);
    cl_col_int(row, "wrong", sum_wrong);
    cl_col_int(row, "sent_min", lo);
    cl_col_int(row, "sent_max", v[2]);
    cl_col_int(row, "sent_expected", (long long)((size_t)(nr - 1) * k * sizeof(float)));
    cl_row_end(row);
done:
    if (shard)
        cl_mem_free(c, shard);
    if (buf)
        cl_mem_free(c, buf);
    return rc;
}

static cl_result collectives_mode(cl_run *run, cl_comm *c)
{
    static const size_t sizes[] = {1, 37, 1040, 16384};
    for (int g = 0; g < 2; g++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            CL_CHECK(one_coll(run, c, g, sizes[i]));
    return CL_OK;
}

/* --- training ------------------------------------------------------------------------------ */

static cl_result opt_int(cl_run *run, const char *name, int lo, int hi, int *out)
{
    const char *t = cl_opt(run, name);
    char *end;
    long v = strtol(t, &end, 10);
    if (*t == '\0' || *end || v < lo || v > hi) {
        cl_set_error("--%s %s: expected a whole number from %d to %d", name, t, lo, hi);
        return CL_ERR_INVALID;
    }
    *out = (int)v;
    return CL_OK;
}

static cl_result one_stage(cl_run *run, cl_comm *c, const lab22_model *m, int stage)
{
    int nr = cl_comm_size(c), r = cl_comm_rank(c);
    size_t n = LAB22_LAYER(m->width), k = n / (size_t)nr, psi = n * (size_t)m->layers;
    size_t bx = (size_t)m->batch * (size_t)m->width, far = 0, changed = 0;
    float *params = NULL, *x = NULL, *t = NULL, *out = NULL, *host = NULL;
    double *want = NULL;
    uint64_t seed;
    cl_call_result res = {0};
    cl_result rc = CL_OK;
    CL_TRY(cl_fresh_seed(run, c, &seed));
    host = malloc((psi + 2 * bx) * sizeof *host);
    want = malloc(psi * sizeof *want);
    if (!host || !want) {
        rc = CL_ERR_NOMEM;
        goto done;
    }
    CL_TRY(cl_mem_alloc(c, psi * sizeof(float), (void **)&params));
    CL_TRY(cl_mem_alloc(c, bx * sizeof(float), (void **)&x));
    CL_TRY(cl_mem_alloc(c, bx * sizeof(float), (void **)&t));
    CL_TRY(cl_mem_alloc(c, (size_t)m->layers * k * sizeof(float), (void **)&out));
    lab22_init(m, seed, r, host, host + psi, host + psi + bx);
    CL_TRY(cl_mem_upload(c, params, host, psi * sizeof(float)));
    CL_TRY(cl_mem_upload(c, x, host + psi, bx * sizeof(float)));
    CL_TRY(cl_mem_upload(c, t, host + psi + bx, bx * sizeof(float)));
    CL_TRY(cl_poison(c, out, (size_t)m->layers * k * sizeof(float), CL_FLOAT32));
    train_args a = {.job = {.stage = stage,
                            .layers = m->layers,
                            .width = m->width,
                            .batch = m->batch,
                            .steps = m->steps,
                            .lr = m->lr,
                            .momentum = m->momentum,
                            .params = params,
                            .x = x,
                            .t = t,
                            .out = out}};
    char doing[64];
    snprintf(doing, sizeof doing, "lab22_train, stage %d", stage);
    cl_deadline_doing(doing);
    CL_TRY(cl_student_run(c, "train", &a, sizeof a, ALLOW, &res));
    size_t sent = sent_bytes(c), peak = peak_bytes(c);
    if (res.status == CL_OK) {
        /* The inputs are read only: a changed one was used as the student's storage. */
        size_t w;
        CL_TRY(lab22_count_changed(c, m, params, x, t, host, &w));
        changed = w;
        CL_TRY(lab22_reference(m, seed, nr, want));
        for (int l = 0; l < m->layers; l++) {
            double *shard = want + (size_t)l * n + (size_t)r * k;
            CL_TRY(cl_count_far(c, out + (size_t)l * k, shard, k, CL_FLOAT32, LAB22_REL, LAB22_ABS,
                                &w));
            far += w;
        }
    }
    double v[5] = {res.status != CL_OK, (double)far, (double)changed, (double)sent, (double)peak};
    CL_TRY(cl_agree_max(c, v, 5));
    int64_t mins[2] = {(int64_t)sent, (int64_t)peak};
    CL_TRY(cl_agree(c, CL_MIN, mins, 2));
    double sums[1] = {(double)far};
    CL_TRY(cl_agree_sum(c, sums, 1));
    cl_row *row = cl_row_begin(run, c);
    cl_col_int(row, "stage", stage);
    cl_col_int(row, "ranks", nr);
    cl_col_call(row, &res);
    cl_col_int(row, "failed_ranks", (long long)v[0]);
    cl_col_int(row, "far", (long long)sums[0]);
    cl_col_int(row, "inputs_changed", (long long)v[2]);
    cl_col_int(row, "sent_min", mins[0]);
    cl_col_int(row, "sent_max", (long long)v[3]);
    cl_col_int(row, "sent_expected", (long long)lab22_expected_sent(m, nr, stage));
    cl_col_int(row, "peak_min", mins[1]);
    cl_col_int(row, "peak_max", (long long)v[4]);
    cl_col_int(row, "peak_bound", (long long)lab22_memory_bound(m, nr, stage));
    cl_col_int(row, "states_bytes", (long long)lab22_states_bytes(m, nr, stage));
    cl_col_int(row, "psi", (long long)psi);
    cl_row_end(row);
done:
    if (out)
        cl_mem_free(c, out);
    if (t)
        cl_mem_free(c, t);
    if (x)
        cl_mem_free(c, x);
    if (params)
        cl_mem_free(c, params);
    free(host);
    free(want);
    return rc;
}

static cl_result train_mode(cl_run *run, cl_comm *c)
{
    lab22_model m = {.lr = 0.05f, .momentum = 0.9f};
    CL_CHECK(opt_int(run, "layers", 1, LAB22_MAX_LAYERS, &m.layers));
    CL_CHECK(opt_int(run, "width", 1, 256, &m.width));
    CL_CHECK(opt_int(run, "batch", 1, 256, &m.batch));
    CL_CHECK(opt_int(run, "steps", 1, 100, &m.steps));
    if (LAB22_LAYER(m.width) % (size_t)cl_comm_size(c)) {
        cl_set_error("a layer's %zu parameters do not split into %d equal shards",
                     LAB22_LAYER(m.width), cl_comm_size(c));
        return CL_ERR_INVALID;
    }
    char list[64];
    snprintf(list, sizeof list, "%s", cl_opt(run, "stages"));
    cl_report_int(run, "layers", m.layers);
    cl_report_int(run, "width", m.width);
    cl_report_int(run, "batch", m.batch);
    cl_report_int(run, "steps", m.steps);
    for (char *save = NULL, *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
        if (strlen(s) != 1 || s[0] < '0' || s[0] > '3') {
            cl_set_error("--stages: '%s' is not a stage from 0 to 3", s);
            return CL_ERR_INVALID;
        }
        CL_CHECK(one_stage(run, c, &m, s[0] - '0'));
    }
    return CL_OK;
}

/* --- the bucket ---------------------------------------------------------------------------- */

static cl_result bucket_case(cl_case *cs)
{
    bucket_args a = {0};
    double v;
    long long i;
    CL_CHECK(cl_case_num(cs, "params", &a.k.params));
    CL_CHECK(cl_case_int(cs, "elem_bytes", &i));
    a.k.elem_bytes = (int)i;
    CL_CHECK(cl_case_int(cs, "ranks", &i));
    a.k.ranks = (int)i;
    CL_CHECK(cl_case_num(cs, "backward_s", &a.k.backward_s));
    CL_CHECK(cl_case_num(cs, "alpha_s", &a.k.alpha_s));
    CL_CHECK(cl_case_num(cs, "bytes_per_s", &v));
    a.k.bytes_per_s = v;
    CL_CHECK(cl_case_num(cs, "free_bytes", &a.k.free_bytes));
    if (!(a.k.params >= 1) || a.k.elem_bytes < 1 || a.k.ranks < 2 || !(a.k.backward_s > 0) ||
        !(a.k.alpha_s >= 0) || !(a.k.bytes_per_s > 0) || !(a.k.free_bytes > 0)) {
        cl_set_error("a cluster needs params >= 1, elem_bytes >= 1, ranks >= 2 and positive "
                     "times, bandwidth and memory");
        return CL_ERR_INVALID;
    }
    lab22_cluster k = a.k; /* the student's copy may come back changed */
    cl_result rc = cl_case_call(cs, "bucket", &a, sizeof a);
    cl_row *row = cl_case_row(cs);
    double best_s, best = lab22_best_bucket(&k, &best_s);
    const char *why = "";
    double step = rc == CL_OK ? lab22_bucket_step(&k, a.bucket, &why) : INFINITY;
    cl_col_num(row, "bucket", a.bucket, "%.4g");
    cl_col_str(row, "valid", isfinite(step) ? "yes" : "no");
    cl_col_str(row, "why", rc != CL_OK ? "your function failed" : why);
    cl_col_num(row, "step_s", isfinite(step) ? step : -1, "%.5g");
    cl_col_num(row, "best_bucket", best_s, "%.4g");
    cl_col_num(row, "best_step_s", best, "%.5g");
    return rc;
}

static const cl_mode modes[] = {
    {.name = "collectives",
     .help = "your ring ReduceScatter and AllGather, checked exactly, bytes from the trace",
     .ranks = collectives_mode,
     .backends = "cpu"},
    {.name = "train",
     .help = "each --stages' model after --steps steps, bytes sent and peak memory",
     .ranks = train_mode,
     .backends = "cpu"},
    {.name = "bucket",
     .help = "your ZeRO-2 bucket for a cluster, and the best",
     .cases = bucket_case},
    {0}};

static const cl_option options[] = {
    {.name = "stages", .help = "0,1,2,3  train: the stages to run", .fallback = "0,1,2,3"},
    {.name = "layers", .help = "N  train: layers", .fallback = "8"},
    {.name = "width", .help = "N  train: width of every layer", .fallback = "64"},
    {.name = "batch", .help = "N  train: rows of each rank's batch", .fallback = "8"},
    {.name = "steps", .help = "N  train: optimizer steps", .fallback = "3"},
    {0}};

const cl_lab cl_lab_def = {
    .name = "lab22",
    .title = "ZeRO 通信模式",
    .modes = modes,
    .options = options,
};

#endif
