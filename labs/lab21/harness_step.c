/* harness_step.c: the step of a plan (compute from the model, communication simulated) and
 * the search for the fastest plan.
 *
 * The handout's model (labs/lab21/README.md, "The step"): a GPT-style decoder
 * trained with 1F1B pipelining, tensor parallelism with sequence parallelism
 * and context parallelism, gradients reduced over dp-cp after the pipeline
 * drains. Compute and memory follow Narayanan et al. (SC 2021) and Korthikanti
 * et al. (MLSys 2023); every collective runs on the plan's communicators,
 * every group of a kind at once, on the simulated cluster, and the slowest
 * rank's time is the kind's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab21_harness.h"

#define BF16 2.0
#define FP32 4.0

static double params(const lab21_model *m)
{
    double h = m->hidden;
    return 12.0 * m->layers * h * h + (double)m->vocab * h;
}

static void invalid(lab21_cost *c, const char *why)
{
    c->valid = 0;
    snprintf(c->why, sizeof c->why, "%s", why);
}

void lab21_cost_model(const lab21_job *j, const lab21_plan *p, lab21_cost *c)
{
    static lab21_layout layout; /* no communication while it is used */
    const lab21_model *m = &j->m;
    int n = j->c.nodes * j->c.gpus_per_node;
    memset(c, 0, sizeof *c);
    c->valid = 1;
    char why[160];
    if (p->tp < 1 || p->cp < 1 || p->pp < 1 || p->dp < 1 ||
        (long)p->tp * p->cp * p->pp * p->dp != n) {
        snprintf(why, sizeof why, "tp x cp x pp x dp = %d x %d x %d x %d is not %d GPUs", p->tp,
                 p->cp, p->pp, p->dp, n);
        return invalid(c, why);
    }
    if (m->heads % p->tp || m->hidden % p->tp)
        return invalid(c, "tp does not divide the heads");
    if (m->layers % p->pp)
        return invalid(c, "pp does not divide the layers");
    if (p->cp > 1 && m->seq % (2 * p->cp))
        return invalid(c, "2 cp does not divide the sequence");
    if (m->global_batch % (p->dp * m->micro_batch))
        return invalid(c, "dp x micro-batch does not divide the global batch");
    lab21_parallel par = {.tp = p->tp, .cp = p->cp, .pp = p->pp, .ep = 1, .etp = p->tp};
    memcpy(par.order, p->order, sizeof par.order);
    par.order[LAB21_ORDER_LEN - 1] = '\0';
    if (lab21_ref_layout(n, &par, &layout) != CL_OK) {
        snprintf(why, sizeof why, "Megatron-LM refuses it: %s", cl_last_error());
        return invalid(c, why);
    }
    double s = m->seq, b = m->micro_batch, h = m->hidden;
    double states = 16.0 * params(m) / (p->tp * p->pp);                  /* ZeRO's 16 bytes each */
    double act = 34.0 * s * b * h * m->layers / ((double)p->tp * p->cp); /* 1F1B: L layers held */
    c->mem_GB = (states + act) / 1e9;
    c->micro_batches = (double)m->global_batch / (p->dp * m->micro_batch);
    c->layer_s = 72.0 * b * s * h * h * (1.0 + s / (6.0 * h)) / ((double)p->tp * p->cp) /
                 (j->c.tflops * 1e12);
    if (c->mem_GB > j->c.mem_GB) {
        snprintf(why, sizeof why, "needs %.1f GB per GPU, has %.0f GB", c->mem_GB, j->c.mem_GB);
        return invalid(c, why);
    }
}

/* The message sizes of plan p, bytes per rank (the collectives' nccl-tests sizes). */
static double tp_bytes(const lab21_job *j, const lab21_plan *p)
{
    return BF16 * j->m.micro_batch * ((double)j->m.seq / p->cp) * j->m.hidden;
}
static double kv_bytes(const lab21_job *j, const lab21_plan *p) /* gathered over cp */
{
    return 2 * BF16 * j->m.micro_batch * j->m.seq * ((double)j->m.hidden / p->tp);
}
static double pp_bytes(const lab21_job *j, const lab21_plan *p) { return tp_bytes(j, p) / p->tp; }
static double dp_bytes(const lab21_job *j, const lab21_plan *p)
{
    return FP32 * params(&j->m) / (p->tp * p->pp);
}

size_t lab21_step_bytes(const lab21_job *j)
{
    double most = j->c.mem_GB * 1e9 / FP32; /* the largest gradient a plan that fits holds */
    lab21_plan one = {.tp = 1, .cp = 1, .pp = 1, .dp = 1};
    most = fmax(most, fmax(tp_bytes(j, &one), kv_bytes(j, &one)));
    return ((size_t)(3 * most) + 8191) / 4096 * 4096;
}

/* One collective of `bytes` on every rank's c at once; the slowest rank's time. */
static cl_result timed(cl_comm *world, cl_comm *c, cl_coll_kind kind, double bytes, char *buf,
                       double *out)
{
    size_t count = (size_t)(bytes / FP32), n = count * sizeof(float);
    CL_CHECK(cl_barrier(world));
    double t0 = cl_comm_time(world);
    if (c && cl_comm_size(c) > 1 && count > 0) {
        int k = cl_comm_size(c);
        size_t block = count / (size_t)k + 1;
        cl_coll_args a = {.count = count, .dtype = CL_FLOAT32, .op = CL_SUM};
        a.sendbuf = buf;
        a.recvbuf = buf + n;
        a.scratch = buf + 2 * n;
        a.scratch_bytes = n;
        if (kind == CL_COLL_REDUCESCATTER) /* the result is this rank's block */
            a.scratch = buf + n + block * sizeof(float);
        CL_CHECK(cl_library_coll(c, kind, &a));
    }
    double dt = cl_comm_time(world) - t0;
    CL_CHECK(cl_agree_max(world, &dt, 1));
    *out = dt;
    return CL_OK;
}

/* Every stage sends `bytes` to the next one at once; the slowest rank's time. */
static cl_result timed_p2p(cl_comm *world, cl_comm *c, double bytes, char *buf, double *out)
{
    CL_CHECK(cl_barrier(world));
    double t0 = cl_comm_time(world);
    if (c && cl_comm_size(c) > 1) {
        int r = cl_comm_rank(c), k = cl_comm_size(c);
        size_t n = (size_t)bytes;
        cl_request req[2] = {{0}, {0}};
        if (r + 1 < k)
            CL_CHECK(cl_isend(c, buf, n, r + 1, &req[0]));
        if (r > 0)
            CL_CHECK(cl_irecv(c, buf + n, n, r - 1, &req[1]));
        CL_CHECK(cl_waitall(c, 2, req));
    }
    double dt = cl_comm_time(world) - t0;
    CL_CHECK(cl_agree_max(world, &dt, 1));
    *out = dt;
    return CL_OK;
}

cl_result lab21_simulate(cl_comm *world, const lab21_job *j, const lab21_plan *p,
                         const lab21_step_comms *s, void *buf, lab21_cost *c)
{
    double ag, rs;
    char *b = buf;
    CL_CHECK(timed(world, s->tp, CL_COLL_ALLREDUCE, tp_bytes(j, p), b, &c->tp_s));
    CL_CHECK(timed(world, s->cp, CL_COLL_ALLGATHER, kv_bytes(j, p), b, &ag));
    CL_CHECK(timed(world, s->cp, CL_COLL_REDUCESCATTER, kv_bytes(j, p), b, &rs));
    c->cp_s = 2 * ag + rs;
    CL_CHECK(timed_p2p(world, s->pp, pp_bytes(j, p), b, &c->pp_s));
    CL_CHECK(timed(world, s->dpcp, CL_COLL_ALLREDUCE, dp_bytes(j, p), b, &c->dp_s));
    double per_layer = c->layer_s + 4 * c->tp_s + c->cp_s;
    double stage = (double)j->m.layers / p->pp * per_layer + 2 * c->pp_s;
    c->step_s = (c->micro_batches + p->pp - 1) * stage + c->dp_s;
    return CL_OK;
}

/* --- the search ---------------------------------------------------------------------------- */

static const char *const dims[4] = {"tp", "cp", "dp", "pp"};

/* Split world into this rank's group of kind k of layout l (NULL for groups of one). */
static cl_result split(cl_comm *world, int color, int key, int size, cl_comm **out)
{
    *out = NULL;
    CL_CHECK(cl_comm_split(world, size > 1 ? color : -1, key, out));
    return CL_OK;
}

static void free_comms(lab21_step_comms *s)
{
    cl_comm **all[4] = {&s->tp, &s->cp, &s->pp, &s->dpcp};
    for (int i = 0; i < 4; i++)
        if (*all[i]) {
            cl_comm_free(*all[i]);
            *all[i] = NULL;
        }
}

/* The plan's cost with the harness's own communicators. */
static cl_result try_plan(cl_comm *world, const lab21_job *j, const lab21_plan *p, void *buf,
                          lab21_cost *c)
{
    static lab21_layout layout;
    lab21_parallel par = {.tp = p->tp, .cp = p->cp, .pp = p->pp, .ep = 1, .etp = p->tp};
    memcpy(par.order, p->order, sizeof par.order);
    CL_CHECK(lab21_ref_layout(cl_comm_size(world), &par, &layout));
    int r = cl_comm_rank(world), kinds[4] = {LAB21_TP, LAB21_CP, LAB21_PP, LAB21_DP_CP};
    int size[4] = {p->tp, p->cp, p->pp, p->dp * p->cp}, color[4], key[4];
    for (int i = 0; i < 4; i++) /* before any split lets another rank reuse the layout */
        color[i] = layout.color[kinds[i]][r], key[i] = layout.key[kinds[i]][r];
    lab21_step_comms s = {0};
    cl_comm **out[4] = {&s.tp, &s.cp, &s.pp, &s.dpcp};
    cl_result rc = CL_OK;
    for (int i = 0; i < 4 && rc == CL_OK; i++)
        rc = split(world, color[i], key[i], size[i], out[i]);
    if (rc == CL_OK)
        rc = lab21_simulate(world, j, p, &s, buf, c);
    free_comms(&s);
    return rc;
}

/* Every order of the kinds of size > 1 (Heap's algorithm over their indices). */
static cl_result orders(cl_comm *world, const lab21_job *j, lab21_plan *p, void *buf,
                        lab21_plan *best, lab21_cost *best_cost, int *count)
{
    int k[4], n = 0, size[4] = {p->tp, p->cp, p->dp, p->pp};
    for (int i = 0; i < 4; i++) /* dp also when cp > 1: the expert generator's dp is dp x cp */
        if (size[i] > 1 || (i == 2 && p->cp > 1))
            k[n++] = i;
    int perm[24][4], np = 0;
    if (n == 0) {
        snprintf(p->order, sizeof p->order, "tp-cp-ep-dp-pp");
        np = 0;
    }
    int a[4], c[4] = {0};
    for (int i = 0; i < n; i++)
        a[i] = k[i];
    if (n > 0) {
        memcpy(perm[np++], a, sizeof a);
        for (int i = 1; i < n;) {
            if (c[i] < i) {
                int t = i % 2 == 0 ? 0 : c[i], x = a[t];
                a[t] = a[i], a[i] = x;
                memcpy(perm[np++], a, sizeof a);
                c[i]++, i = 1;
            } else
                c[i++] = 0;
        }
    }
    for (int q = 0; q < (np ? np : 1); q++) {
        if (np) {
            p->order[0] = '\0';
            for (int i = 0; i < n; i++) {
                if (i)
                    strcat(p->order, "-");
                strcat(p->order, dims[perm[q][i]]);
            }
        }
        lab21_cost c0;
        lab21_cost_model(j, p, &c0);
        if (!c0.valid)
            continue;
        CL_CHECK(try_plan(world, j, p, buf, &c0));
        (*count)++;
        if (c0.step_s < best_cost->step_s) {
            *best = *p;
            *best_cost = c0;
        }
    }
    return CL_OK;
}

cl_result lab21_search(cl_comm *world, const lab21_job *j, void *buf, lab21_plan *best,
                       lab21_cost *best_cost, int *count)
{
    int n = j->c.nodes * j->c.gpus_per_node;
    memset(best, 0, sizeof *best);
    memset(best_cost, 0, sizeof *best_cost);
    best_cost->step_s = INFINITY;
    *count = 0;
    for (int tp = 1; tp <= n; tp++)
        for (int cp = 1; tp * cp <= n; cp++)
            for (int pp = 1; tp * cp * pp <= n; pp++) {
                if (n % (tp * cp * pp))
                    continue;
                lab21_plan p = {.tp = tp, .cp = cp, .pp = pp, .dp = n / (tp * cp * pp)};
                lab21_cost c0;
                snprintf(p.order, sizeof p.order, "tp-cp-ep-dp-pp");
                lab21_cost_model(j, &p, &c0); /* a cheap test before any order */
                if (!c0.valid && strncmp(c0.why, "Megatron", 8) != 0)
                    continue;
                CL_CHECK(orders(world, j, &p, buf, best, best_cost, count));
            }
    if (*count == 0) {
        cl_set_error("no plan of this job fits in the GPUs' memory");
        return CL_ERR_INVALID;
    }
    return CL_OK;
}
