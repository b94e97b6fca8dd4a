/* harness_stages.c: lab 22's train mode: each ZeRO stage run by the student's program, the
 * model after k steps compared with the harness's own plain data-parallel run
 * (harness_train.c), the bytes each rank sent and the memory it held read from the trace. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deadline.h"
#include "lab22_harness.h"

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
    size_t sent = cl_student_sent_bytes(c, NULL), peak = peak_bytes(c);
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

cl_result train_mode(cl_run *run, cl_comm *c)
{
    lab22_model m = {.lr = 0.05f, .momentum = 0.9f};
    CL_CHECK(cl_opt_int(run, "layers", 1, LAB22_MAX_LAYERS, &m.layers));
    CL_CHECK(cl_opt_int(run, "width", 1, 256, &m.width));
    CL_CHECK(cl_opt_int(run, "batch", 1, 256, &m.batch));
    CL_CHECK(cl_opt_int(run, "steps", 1, 100, &m.steps));
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
