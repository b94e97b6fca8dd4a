/* harness_step.c: lab 24's step mode and the backward pass it runs, the lab's operation
 * LAB24_OP_BACKWARD. The net is sized to --ratio x the library's AllReduce of all the
 * gradients, the student's caps and buckets are asked, then each repeat: the backward pass
 * alone, the library's AllReduce alone, the student's step, checked and timed.
 */
#include <stdlib.h>
#include <string.h>

#include "harness_lab24.h"
#include "lab24_ops.h"

/* --- the backward pass ------------------------------------------------------------------------ */

#define MAX_RANKS 256

typedef struct device {
    const lab24_net *net;
    int next_kernel, next_part, parts_left;
    float *grads;
    size_t off[LAB24_MAX_PARAMS]; /* floats: where each parameter's gradient lies */
    const float *stage;           /* "cpu": this rank's gradients, written when produced */
    uint64_t seed;
    double last_end; /* the rank's clock when its last kernel ended */
} device;

static device dev[MAX_RANKS];

cl_result lab_op(cl_run *run, cl_comm *c, int code, void *args, size_t bytes)
{
    (void)run;
    lab24_backward_args *a = args;
    int r = cl_comm_rank(c);
    device *d = r < MAX_RANKS ? &dev[r] : NULL;
    if (code != LAB24_OP_BACKWARD || bytes != sizeof *a || !d || !d->net) {
        cl_set_error("lab 24 has no such operation here");
        return CL_ERR_INVALID;
    }
    if (d->next_kernel >= d->net->kernels) {
        cl_set_error("the backward pass is over: lab24_backward called after *left became 0");
        return CL_ERR_INVALID;
    }
    const lab24_kernel *k = &d->net->kernel[d->next_kernel];
    double part = k->s / k->parts, end = cl_comm_time(c) + part;
    int last = d->next_part + 1 == k->parts;
    a->nready = 0;
    if (last && !cl_comm_on_sim(c)) /* the kernel writes its gradients while it runs */
        for (int i = 0; i < k->nready; i++) {
            size_t o = d->off[k->ready[i]];
            memcpy(d->grads + o, d->stage + o, (size_t)d->net->bytes[k->ready[i]]);
        }
    CL_CHECK(cl_overlap_busy_until(c, end));
    d->last_end = cl_comm_time(c);
    d->parts_left--;
    if (!last) {
        d->next_part++;
    } else {
        for (int i = 0; i < k->nready; i++) {
            int p = k->ready[i];
            size_t o = d->off[p];
            if (cl_comm_on_sim(c)) /* the gradient exists from now on; before, it was garbage */
                CL_CHECK(cl_fill(c, d->grads + o, (size_t)(d->net->bytes[p] / sizeof(float)),
                                 CL_FLOAT32, CL_SUM, d->seed, r, o));
            a->ready[a->nready++] = p;
        }
        d->next_part = 0;
        d->next_kernel++;
    }
    a->left = d->parts_left;
    return CL_OK;
}

static void device_reset(int r, const lab24_net *net, float *grads, const size_t *off,
                         const float *stage, uint64_t seed)
{
    dev[r] = (device){
        .net = net, .grads = grads, .stage = stage, .seed = seed, .parts_left = net->parts};
    memcpy(dev[r].off, off, sizeof dev[r].off);
}

/* --- the step --------------------------------------------------------------------------------- */

/* --cap, --first-cap, --last-small: caps to try instead of your choice. */
static cl_result forced_caps(cl_run *run, plan_args *p)
{
    const char *cap = cl_opt(run, "cap"), *first = cl_opt(run, "first-cap");
    const char *last = cl_opt(run, "last-small");
    if (!cap && !first && !last)
        return CL_OK;
    size_t v;
    p->forced = 1;
    p->caps = (lab24_caps){.first_cap = 1 << 20, .cap = 25 << 20}; /* DDP's defaults */
    if (cap) {
        CL_CHECK(cl_parse_size(cap, &v));
        p->caps.cap = (double)v;
    }
    if (first) {
        CL_CHECK(cl_parse_size(first, &v));
        p->caps.first_cap = (double)v;
    }
    p->caps.last_small = last && atoi(last) != 0;
    return CL_OK;
}

/* What a repeat of the step shows beside the overlap's sample. */
typedef struct step_extra {
    double end_s, unfinished;
} step_extra;

/* One repeat: the backward pass alone, the library's AllReduce alone, your step. */
static cl_result repeat(cl_run *run, cl_comm *c, const lab24_net *net, const cl_overlap *o,
                        const size_t *off, float *stage, cl_overlap_sample *s, step_extra *x)
{
    int r = cl_comm_rank(c), sim = cl_comm_on_sim(c);
    uint64_t seed;
    double start, seconds;
    size_t wrong, count = o->count;
    CL_CHECK(cl_fresh_seed(run, c, &seed));
    if (!sim) /* what the kernels will write, made ahead of time */
        CL_CHECK(cl_data_fill(stage, 0, count, CL_FLOAT32, CL_SUM, r, seed));
    device_reset(r, net, o->grads, off, stage, seed);
    CL_CHECK(cl_overlap_alone(c, o, s));
    CL_CHECK(cl_fresh_seed(run, c, &seed));
    if (!sim)
        CL_CHECK(cl_data_fill(stage, 0, count, CL_FLOAT32, CL_SUM, r, seed));
    CL_CHECK(cl_poison(c, o->grads, count * sizeof(float), CL_FLOAT32));
    device_reset(r, net, o->grads, off, stage, seed);
    CL_CHECK(cl_overlap_step(c, o, seed, &start, &seconds, &wrong));
    double t[2] = {seconds, dev[r].last_end - start};
    double v[2] = {(double)wrong, dev[r].next_kernel < net->kernels};
    CL_CHECK(cl_agree_max(c, t, 2));
    CL_CHECK(cl_agree_sum(c, v, 2));
    s->step_s = t[0], x->end_s = t[1], s->wrong = v[0], x->unfinished = v[1];
    return CL_OK;
}

/* What one rank of the step mode holds (on "sim" every rank lives in this process). */
typedef struct step_state {
    lab24_net net;
    step_args a;
    plan_args p;
    lab24_buckets ddp;
    size_t off[LAB24_MAX_PARAMS];
} step_state;

static cl_result step_rank(cl_run *run, cl_comm *c, step_state *st);

cl_result step_mode(cl_run *run, cl_comm *c)
{
    step_state *st = calloc(1, sizeof *st);
    if (!st)
        return CL_ERR_NOMEM;
    cl_result rc = step_rank(run, c, st);
    free(st);
    return rc;
}

static cl_result step_rank(cl_run *run, cl_comm *c, step_state *st)
{
    lab24_net *n = &st->net;
    step_args *a = &st->a;
    plan_args *p = &st->p;
    int reps = cl_overlap_repeats(run);
    int layers = (int)num_opt(run, "layers", 8, 16), hidden = (int)num_opt(run, "hidden", 256, 512);
    double ratio = num_opt(run, "ratio", 2.5, 2.5);
    double quantum = num_opt(run, "quantum", 500e-6, 10e-6);
    CL_CHECK(lab24_net_build(n, layers, hidden, quantum));
    size_t count = (size_t)(n->total_bytes / sizeof(float));
    cl_overlap o = {.args = a, .args_bytes = sizeof *a};
    float *stage = NULL;
    cl_result rc = CL_OK;
    CL_TRY(cl_overlap_alloc(c, &o, count));
    a->grads = o.grads;
    if (!cl_comm_on_sim(c) && !(stage = malloc(count * sizeof(float)))) {
        rc = CL_ERR_NOMEM;
        goto done;
    }
    double comm[3];
    CL_TRY(cl_overlap_allreduce(c, &o, &comm[0])); /* warm-up */
    for (int i = 0; i < 3; i++)
        CL_TRY(cl_overlap_allreduce(c, &o, &comm[i]));
    CL_TRY(lab24_net_scale(n, ratio * cl_median(comm, 3)));
    CL_TRY(build_model(run, c, n, a->grads, &p->m));
    CL_TRY(forced_caps(run, p));
    cl_call_result res;
    CL_TRY(cl_student_run(c, "plan", p, sizeof *p, 0, &res));
    CL_TRY(res.status);
    CL_TRY(lab24_buckets_check(&p->b, n->params));
    CL_TRY(same_buckets(c, &p->b, n->params));
    CL_TRY(lab24_ddp_assign(n, &p->caps, &st->ddp));
    a->m = p->m, a->b = p->b;
    size_t largest;
    lab24_layout(n, &a->b, st->off, &largest);
    size_t scratch = (largest + (size_t)p->m.ranks - 1) / (size_t)p->m.ranks + 1;
    CL_TRY(cl_mem_alloc(c, scratch * sizeof(float), (void **)&a->scratch));
    cl_report_int(run, "layers", layers);
    cl_report_int(run, "hidden", hidden);
    cl_report_int(run, "params", n->params);
    cl_report_num(run, "grad_bytes", n->total_bytes);
    cl_report_num(run, "alpha_us", p->m.alpha_s * 1e6);
    cl_report_num(run, "link_gbps", p->m.link_Bps / 1e9);
    cl_report_num(run, "reduce_gbps", p->m.reduce_Bps / 1e9);
    cl_report_num(run, "quantum_us", n->quantum_s * 1e6);
    cl_report_num(run, "compute_us", n->compute_s * 1e6);
    cl_report_num(run, "first_cap", p->caps.first_cap);
    cl_report_num(run, "cap", p->caps.cap);
    cl_report_int(run, "last_small", p->caps.last_small);
    cl_report_int(run, "buckets", p->b.n);
    cl_report_int(run, "ddp_match", lab24_buckets_equal(&st->ddp, &p->b, n->params));
    cl_overlap_sample s[CL_OVERLAP_MAX_SAMPLES];
    step_extra x[CL_OVERLAP_MAX_SAMPLES];
    for (int i = 0; i < reps; i++)
        CL_TRY(repeat(run, c, n, &o, st->off, stage, &s[i], &x[i]));
    double end[CL_OVERLAP_MAX_SAMPLES], unfinished = 0;
    for (int i = 0; i < reps; i++)
        end[i] = x[i].end_s, unfinished += x[i].unfinished;
    cl_row *row = cl_overlap_row(run, c, s, reps);
    cl_col_nums(row, "last_kernel_end_s", end, (size_t)reps, "%.6f");
    cl_col_int(row, "wrong", cl_overlap_wrong(s, reps));
    cl_col_int(row, "unfinished", (long long)unfinished);
    cl_row_end(row);
done:
    free(stage);
    if (a->scratch)
        cl_mem_free(c, a->scratch);
    cl_overlap_free(c, &o);
    return rc;
}
