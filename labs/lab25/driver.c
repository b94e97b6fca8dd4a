/* driver.c: lab 25's plug-in: data-parallel training with the student's compressed exchange.
 *
 *   lab25 train [--methods none,fp16,bf16,topk:0.05,sign] [--steps 300]   (cpu, 1-8 ranks)
 *
 * Every rank holds a shard of a seeded synthetic data set and the same
 * logistic-regression model. At every step the harness computes the rank's
 * gradient and calls the student's exchange; then it checks what came back:
 * the rank's message is the exact encoding of gradient + residual, the new
 * residual is what the message did not carry (error feedback), the student's
 * result is the mean of every rank's decoded message (the harness gathers the
 * messages itself), and the bytes the trace shows on the wire are p - 1
 * messages each way. The model is updated with the harness's own decoding of
 * the messages, and its loss is compared with uncompressed training from the
 * same start on the same data.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "deadline.h"
#include "harness/harness.h"
#include "harness_lab25.h"
#include "lab25.h"

#ifdef CL_STUDENT_SIDE

static cl_result exchange(cl_comm *c, void *args) { return lab25_exchange(c, args); }

CL_STUDENT_ENTRIES({"exchange", exchange});

#else

#define LR          0.5
#define MAX_METHODS 16
#define LOSS_EVERY  10

/* --- one method's training ------------------------------------------------------------- */

typedef struct method {
    char name[32];
    lab25_method m;
    size_t k;
} method;

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

enum { BAD_CALL, BAD_ENCODING, BAD_RESIDUAL, BAD_OUT, BAD_WIRE, NBAD };
static const char *bad_names[NBAD] = {"call_errors", "bad_encoding", "bad_residual", "bad_out",
                                      "bad_wire"};

typedef struct buffers {
    float *grad, *residual, *out;
    unsigned char *msg, *gathered, *mine, *all; /* mine, all: the harness's gather */
    size_t words;                               /* int32 words of a padded message */
} buffers;

/* Sent and received bytes of the rank's last call, from its trace. */
static void wire_bytes(const cl_comm *c, double *sent, double *received)
{
    int n;
    const cl_trace_event *ev = cl_student_trace(c, &n);
    *sent = *received = 0;
    for (int i = 0; i < n; i++) {
        if (ev[i].op == CL_WOP_ISEND)
            *sent += (double)ev[i].bytes;
        else if (ev[i].op == CL_WOP_IRECV)
            *received += (double)ev[i].bytes;
    }
}

/* One step of one method on this rank: the call, then every check. bad[] counts
 * what went wrong; mean gets the harness's decoded mean (the update). */
static cl_result one_step(cl_comm *c, const method *me, const dataset *d, const double *w,
                          buffers *b, int64_t bad[NBAD], double *mean, double *sent,
                          cl_call_result *res)
{
    int rank = cl_comm_rank(c), p = cl_comm_size(c);
    size_t n = NPARAM, bytes = lab25_message_bytes(me->m, n, me->k);
    double g[NPARAM];
    float acc[NPARAM], dec[NPARAM];
    lab25_gradient(d, w, rank, rank + 1, g);
    for (size_t i = 0; i < n; i++) {
        b->grad[i] = (float)g[i];
        acc[i] = b->grad[i] + b->residual[i];
    }
    memset(b->msg, 0, bytes);
    lab25_exchange_args a = {.method = me->m,
                             .n = n,
                             .k = me->k,
                             .grad = b->grad,
                             .residual = b->residual,
                             .msg = b->msg,
                             .gathered = b->gathered,
                             .out = b->out};
    CL_CHECK(cl_student_run(c, "exchange", &a, sizeof a, CL_ALLOW_P2P | CL_ALLOW_LOCAL, res));
    memset(bad, 0, NBAD * sizeof *bad);
    bad[BAD_CALL] = res->status != CL_OK;
    bad[BAD_ENCODING] = !lab25_encoding_ok(me->m, b->msg, acc, n, me->k);
    lab25_ref_decode(me->m, b->msg, n, me->k, dec);
    float scale = 0;
    for (size_t i = 0; i < n; i++)
        scale = fmaxf(scale, fabsf(acc[i]));
    for (size_t i = 0; i < n; i++)
        if (!(fabsf(b->residual[i] - (acc[i] - dec[i])) <= 1e-5f * scale + 1e-30f)) {
            bad[BAD_RESIDUAL] = 1;
            break;
        }
    /* the harness's own gather of every rank's message */
    memset(b->mine, 0, b->words * 4);
    memcpy(b->mine, b->msg, bytes);
    cl_coll_args ga = {
        .sendbuf = b->mine, .recvbuf = b->all, .count = b->words * (size_t)p, .dtype = CL_INT32};
    CL_CHECK(cl_library_coll(c, CL_COLL_ALLGATHER, &ga));
    double top = 0;
    for (size_t i = 0; i < n; i++)
        mean[i] = 0;
    for (int r = 0; r < p; r++) {
        lab25_ref_decode(me->m, b->all + (size_t)r * b->words * 4, n, me->k, dec);
        for (size_t i = 0; i < n; i++)
            mean[i] += dec[i] / (double)p;
    }
    for (size_t i = 0; i < n; i++)
        top = fmax(top, fabs(mean[i]));
    for (size_t i = 0; i < n; i++)
        if (!(fabs(b->out[i] - mean[i]) <= 1e-5 * top + 1e-30)) {
            bad[BAD_OUT] = 1;
            break;
        }
    double received;
    wire_bytes(c, sent, &received);
    double want = (double)(p - 1) * (double)bytes;
    bad[BAD_WIRE] = *sent != want || received != want;
    return CL_OK;
}

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

static cl_result train(cl_run *run, cl_comm *c)
{
    if (!cl_student_host_buffers()) {
        cl_set_error("lab25 trains on host buffers: run it with --backend cpu");
        return CL_ERR_UNSUPPORTED;
    }
    method methods[MAX_METHODS];
    int count;
    CL_CHECK(parse_methods(cl_opt(run, "methods"), methods, &count));
    int steps = atoi(cl_opt(run, "steps"));
    if (steps < 1 || steps > 640) {
        cl_set_error("--steps %s: give 1 to 640", cl_opt(run, "steps"));
        return CL_ERR_INVALID;
    }
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

const cl_lab cl_lab_def = {
    .name = "lab25",
    .title = "梯度压缩: FP16/BF16, top-k and sign with error feedback",
    .modes = (const cl_mode[]){{.name = "train",
                                .help = "data-parallel training with your compressed exchange",
                                .ranks = train,
                                .backends = "cpu"},
                               {0}},
    .options = (const cl_option[]){{"methods",
                                    "comma-separated: none, fp16, bf16, topk:DENSITY, "
                                    "sign",
                                    "none,fp16,bf16,topk:0.05,sign"},
                                   {"steps", "training steps per method", "300"},
                                   {0}},
};

#endif
