/* harness_train.c: lab 25's train mode: the methods of --methods parsed, each trained from
 * the same start on the same data with the student's exchange (harness_exchange.c checks
 * every step), the model updated with the harness's own decoding, and its loss compared with
 * the harness's uncompressed training.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "deadline.h"
#include "harness/harness.h"
#include "harness_lab25.h"

#define LR          0.5
#define MAX_METHODS 16
#define LOSS_EVERY  10

/* --- one method's training ------------------------------------------------------------- */

static cl_result parse_methods(const char *text, method *out, int *count)
{
    static const char *names[] = {"none", "fp16", "bf16", "topk", "sign"};
    *count = 0;
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, ",");
        method *me = &out[*count];
        if (*count == MAX_METHODS || len >= sizeof me->name) {
            cl_set_error("--methods: at most %d methods of up to 31 characters", MAX_METHODS);
            return CL_ERR_INVALID;
        }
        memcpy(me->name, p, len);
        me->name[len] = '\0';
        int found = 0;
        for (int i = 0; i < 5 && !found; i++) {
            size_t nl = strlen(names[i]);
            if (strncmp(me->name, names[i], nl) != 0)
                continue;
            me->m = (lab25_method)i;
            me->k = 0;
            if (i == LAB25_TOPK) {
                char *end;
                double density = me->name[nl] == ':' ? strtod(me->name + nl + 1, &end) : -1;
                if (me->name[nl] != ':' || *end || !(density > 0 && density <= 1)) {
                    cl_set_error("--methods: '%s': top-k is topk:DENSITY with 0 < DENSITY <= 1",
                                 me->name);
                    return CL_ERR_INVALID;
                }
                me->k = (size_t)lround(density * NPARAM);
                me->k = me->k < 1 ? 1 : me->k;
                found = 1;
            } else
                found = me->name[nl] == '\0';
        }
        if (!found) {
            cl_set_error("--methods: unknown method '%s' (none, fp16, bf16, topk:D, sign)",
                         me->name);
            return CL_ERR_INVALID;
        }
        (*count)++;
        p += len + (p[len] == ',');
    }
    if (*count == 0) {
        cl_set_error("--methods: no method given");
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

static const char *bad_names[NBAD] = {"call_errors", "bad_encoding", "bad_residual", "bad_out",
                                      "bad_wire"};

typedef struct outcome {
    int steps_run, to_target;
    int64_t bad[NBAD];
    double wire, final_loss;
    double losses[64];
    int nloss;
    char error[320];
} outcome;

static cl_result train_method(cl_run *run, cl_comm *c, const method *me, const dataset *d,
                              buffers *b, int steps, double target, outcome *o)
{
    (void)run;
    int p = cl_comm_size(c);
    double w[NPARAM] = {0}, mean[NPARAM];
    memset(o, 0, sizeof *o);
    o->to_target = -1;
    memset(b->residual, 0, NPARAM * sizeof *b->residual);
    for (int t = 1; t <= steps; t++) {
        int64_t bad[NBAD];
        double sent;
        cl_call_result res;
        CL_CHECK(one_step(c, me, d, w, b, bad, mean, &sent, &res));
        if (res.status != CL_OK && !o->error[0])
            snprintf(o->error, sizeof o->error, "%s", res.error);
        double wire[1] = {sent};
        CL_CHECK(cl_agree(c, CL_SUM, bad, NBAD));
        CL_CHECK(cl_agree_max(c, wire, 1));
        o->wire = fmax(o->wire, wire[0]);
        int any = 0;
        for (int i = 0; i < NBAD; i++) {
            o->bad[i] += bad[i];
            any |= bad[i] != 0;
        }
        o->steps_run = t;
        if (any)
            break; /* the first wrong step says enough */
        for (int j = 0; j < NPARAM; j++)
            w[j] -= LR * mean[j];
        if (cl_comm_rank(c) == 0) {
            double loss = lab25_gradient(d, w, 0, p, NULL);
            if (o->to_target < 0 && loss <= target)
                o->to_target = t;
            if (t % LOSS_EVERY == 0 && o->nloss < 64)
                o->losses[o->nloss++] = loss;
            o->final_loss = loss;
        }
    }
    return CL_OK;
}

static cl_result alloc_buffers(cl_comm *c, buffers *b)
{
    size_t most = 4 * NPARAM + 8;
    int p = cl_comm_size(c);
    b->words = most / 4;
    CL_CHECK(cl_mem_alloc(c, NPARAM * sizeof(float), (void **)&b->grad));
    CL_CHECK(cl_mem_alloc(c, NPARAM * sizeof(float), (void **)&b->residual));
    CL_CHECK(cl_mem_alloc(c, NPARAM * sizeof(float), (void **)&b->out));
    CL_CHECK(cl_mem_alloc(c, most, (void **)&b->msg));
    CL_CHECK(cl_mem_alloc(c, most * (size_t)p, (void **)&b->gathered));
    CL_CHECK(cl_mem_alloc(c, most, (void **)&b->mine));
    return cl_mem_alloc(c, most * (size_t)p, (void **)&b->all);
}

cl_result train(cl_run *run, cl_comm *c)
{
    if (!cl_student_host_buffers()) {
        cl_set_error("lab25 trains on host buffers: run it with --backend cpu");
        return CL_ERR_UNSUPPORTED;
    }
    method methods[MAX_METHODS];
    int count;
    CL_CHECK(parse_methods(cl_opt(run, "methods"), methods, &count));
    int steps;
    CL_CHECK(cl_opt_int(run, "steps", 1, 640, &steps));
    int p = cl_comm_size(c);
    uint64_t seed;
    CL_CHECK(cl_fresh_seed(run, c, &seed));
    dataset d;
    buffers b;
    CL_CHECK(lab25_make_data(seed, p, &d));
    CL_CHECK(alloc_buffers(c, &b));
    /* uncompressed training, the harness's own: the loss to reach and to end near */
    double w[NPARAM] = {0}, g[NPARAM], target = 0, base_final = 0;
    if (cl_comm_rank(c) == 0)
        for (int t = 1; t <= steps; t++) {
            lab25_gradient(&d, w, 0, p, g);
            for (int j = 0; j < NPARAM; j++)
                w[j] -= LR * g[j];
            double loss = lab25_gradient(&d, w, 0, p, NULL);
            if (t == (steps + 2) / 3)
                target = loss;
            base_final = loss;
        }
    cl_report_int(run, "params", NPARAM);
    cl_report_int(run, "samples_per_rank", SAMPLES);
    cl_report_num(run, "base_loss", base_final);
    cl_report_num(run, "target_loss", target);
    cl_report_int(run, "target_step", (steps + 2) / 3);
    for (int i = 0; i < count; i++) {
        outcome o;
        cl_deadline_doing("training with your exchange");
        CL_CHECK(train_method(run, c, &methods[i], &d, &b, steps, target, &o));
        size_t bytes = lab25_message_bytes(methods[i].m, NPARAM, methods[i].k);
        cl_row *row = cl_row_begin(run, c);
        cl_col_str(row, "method", methods[i].name);
        cl_col_int(row, "k", (long long)methods[i].k);
        cl_col_int(row, "msg_bytes", (long long)bytes);
        cl_col_num(row, "wire_bytes", o.wire, "%.0f");
        cl_col_num(row, "dense_bytes", 4.0 * NPARAM * (p - 1), "%.0f");
        cl_col_int(row, "steps", o.steps_run);
        for (int j = 0; j < NBAD; j++)
            cl_col_int(row, bad_names[j], o.bad[j]);
        cl_col_num(row, "final_loss", o.final_loss, "%.5f");
        cl_col_num(row, "base_loss", base_final, "%.5f");
        cl_col_int(row, "steps_to_target", o.to_target);
        cl_col_nums(row, "losses", o.losses, (size_t)o.nloss, "%.5f");
        cl_col_str(row, "error", o.error[0] ? o.error : "-");
        cl_row_end(row);
    }
    free(d.x);
    free(d.y);
    return CL_OK;
}
