/* lab22.c: lab 22, ZeRO's communication: ZeRO-1/2/3 on a small MLP.
 *
 * You write the ring ReduceScatter and AllGather, then one training loop that runs
 * plain data parallelism and ZeRO's three stages, and the choice of ZeRO-2's
 * gradient bucket for a cluster. The model's arithmetic is given (lab22.h, mlp.c).
 * Read labs/lab22/README.md first; the TODOs below follow its sections. Build with
 * `make lab22`, grade with `./grade lab22`.
 */
#include <math.h>
#include <string.h>

#include "lab22.h"

cl_result lab22_reduce_scatter(cl_comm *c, const float *buf, size_t n, float *shard)
{
    /* BEGIN SOLUTION */
    int N = cl_comm_size(c), r = cl_comm_rank(c);
    if (n % (size_t)N) {
        cl_set_error("lab22_reduce_scatter: %zu floats do not split into %d shards", n, N);
        return CL_ERR_INVALID;
    }
    size_t k = n / (size_t)N;
    if (N == 1) {
        memmove(shard, buf, k * sizeof *shard);
        return CL_OK;
    }
    float *tmp;
    CL_CHECK(cl_mem_alloc(c, k * sizeof *tmp, (void **)&tmp));
    int right = (r + 1) % N, left = (r + N - 1) % N;
    cl_result rc = CL_OK;
    /* Step s sends the running sum of chunk r-s-1 and adds this rank's part to chunk r-s-2;
     * after N-1 steps that chunk is r, summed over every rank. */
    for (int s = 0; s < N - 1 && rc == CL_OK; s++) {
        size_t out = (size_t)((r - s - 1 + 2 * N) % N), in = (size_t)((r - s - 2 + 2 * N) % N);
        const float *send = s == 0 ? buf + out * k : shard;
        rc = cl_sendrecv(c, send, k * sizeof *tmp, right, tmp, k * sizeof *tmp, left);
        for (size_t i = 0; rc == CL_OK && i < k; i++)
            shard[i] = tmp[i] + buf[in * k + i];
    }
    cl_mem_free(c, tmp);
    return rc;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab22) 1: the ring ReduceScatter: every rank ends with its chunk of the sum.
    (void)c, (void)buf, (void)n, (void)shard;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab22_all_gather(cl_comm *c, const float *shard, size_t n, float *buf)
{
    /* BEGIN SOLUTION */
    int N = cl_comm_size(c), r = cl_comm_rank(c);
    if (n % (size_t)N) {
        cl_set_error("lab22_all_gather: %zu floats do not split into %d shards", n, N);
        return CL_ERR_INVALID;
    }
    size_t k = n / (size_t)N, bytes = k * sizeof *buf;
    memmove(buf + (size_t)r * k, shard, bytes); /* shard may already be there */
    int right = (r + 1) % N, left = (r + N - 1) % N;
    for (int s = 0; s < N - 1; s++) {
        size_t out = (size_t)((r - s + N) % N), in = (size_t)((r - s - 1 + N) % N);
        CL_CHECK(cl_sendrecv(c, buf + out * k, bytes, right, buf + in * k, bytes, left));
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab22) 2: the ring AllGather: every rank ends with every rank's shard.
    (void)c, (void)shard, (void)n, (void)buf;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* BEGIN SOLUTION */
/* The rank's buffers; NULL where the stage does not keep it. */
typedef struct state {
    float *p;       /* full parameters (stages 0-2) */
    float *ps;      /* parameter shard (stage 3) */
    float *layer;   /* one layer's gathered parameters (stage 3) */
    float *g;       /* full gradients (stages 0-1) */
    float *glayer;  /* one layer's full gradient (stages 2-3) */
    float *gs;      /* gradient shard (stages 1-3); one layer's (stage 0) */
    float *m;       /* momentum: full (stage 0) or shard (1-3) */
    float *acts;    /* every layer's output */
    float *d, *din; /* the loss's gradient at a layer's output and input */
} state;

static void release(cl_comm *c, state *s)
{
    float **all[] = {&s->p,  &s->ps, &s->layer, &s->g, &s->glayer,
                     &s->gs, &s->m,  &s->acts,  &s->d, &s->din};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (*all[i]) {
            cl_mem_free(c, *all[i]);
            *all[i] = NULL;
        }
}

static cl_result alloc(cl_comm *c, int want, size_t floats, float **out)
{
    *out = NULL;
    if (!want)
        return CL_OK;
    CL_CHECK(cl_mem_alloc(c, floats * sizeof(float), (void **)out));
    memset(*out, 0, floats * sizeof(float));
    return CL_OK;
}

/* Layer l's parameters, gathered first in stage 3. */
static cl_result params_of(cl_comm *c, const lab22_job *j, state *s, int l, float **p)
{
    size_t n = LAB22_LAYER(j->width), k = n / (size_t)cl_comm_size(c);
    if (j->stage < 3) {
        *p = s->p + (size_t)l * n;
        return CL_OK;
    }
    *p = s->layer;
    return lab22_all_gather(c, s->ps + (size_t)l * k, n, s->layer);
}
/* END SOLUTION */

cl_result lab22_train(cl_comm *c, const lab22_job *j)
{
    /* BEGIN SOLUTION */
    int N = cl_comm_size(c), r = cl_comm_rank(c), L = j->layers, st = j->stage;
    size_t n = LAB22_LAYER(j->width), k = n / (size_t)N, psi = n * (size_t)L;
    size_t bx = (size_t)j->batch * (size_t)j->width;
    state s = {0};
    cl_result rc = CL_OK;
    if (st < 0 || st > 3 || n % (size_t)N) {
        cl_set_error("stage %d with %zu parameters per layer on %d ranks", st, n, N);
        return CL_ERR_INVALID;
    }
    CL_TRY(alloc(c, st < 3, psi, &s.p));
    CL_TRY(alloc(c, st == 3, (size_t)L * k, &s.ps));
    CL_TRY(alloc(c, st == 3, n, &s.layer));
    CL_TRY(alloc(c, st < 2, psi, &s.g));
    CL_TRY(alloc(c, st >= 2, n, &s.glayer));
    CL_TRY(alloc(c, 1, st <= 1 ? k : (size_t)L * k, &s.gs)); /* stages 0-1: one layer's */
    CL_TRY(alloc(c, 1, st == 0 ? psi : (size_t)L * k, &s.m));
    CL_TRY(alloc(c, 1, (size_t)L * bx, &s.acts));
    CL_TRY(alloc(c, 1, bx, &s.d));
    CL_TRY(alloc(c, 1, bx, &s.din));
    for (int l = 0; l < L; l++) {
        if (st < 3)
            memcpy(s.p + (size_t)l * n, j->params + (size_t)l * n, n * sizeof(float));
        else
            memcpy(s.ps + (size_t)l * k, j->params + (size_t)l * n + (size_t)r * k,
                   k * sizeof(float));
    }
    for (int step = 0; step < j->steps; step++) {
        /* Forward: stage 3 gathers each layer's parameters just before it. */
        for (int l = 0; l < L; l++) {
            float *p;
            CL_TRY(params_of(c, j, &s, l, &p));
            const float *x = l == 0 ? j->x : s.acts + (size_t)(l - 1) * bx;
            lab22_forward(p, x, s.acts + (size_t)l * bx, j->batch, j->width, l < L - 1);
        }
        lab22_loss_grad(s.acts + (size_t)(L - 1) * bx, j->t, s.d, j->batch, j->width);
        /* Backward: stage 3 gathers again; stages 2-3 reduce-scatter each layer's
         * gradient as soon as it exists, so no full gradient of the model is ever held. */
        for (int l = L - 1; l >= 0; l--) {
            float *p, *grad = st < 2 ? s.g + (size_t)l * n : s.glayer;
            CL_TRY(params_of(c, j, &s, l, &p));
            const float *x = l == 0 ? j->x : s.acts + (size_t)(l - 1) * bx;
            lab22_backward(p, x, s.d, grad, l > 0 ? s.din : NULL, j->batch, j->width);
            float *swap = s.d;
            s.d = s.din, s.din = swap;
            if (st >= 2)
                CL_TRY(lab22_reduce_scatter(c, grad, n, s.gs + (size_t)l * k));
        }
        /* The mean over ranks, then each stage's update. */
        for (int l = 0; l < L; l++) {
            size_t off = (size_t)l * n, mine = off + (size_t)r * k;
            if (st == 0) { /* an AllReduce: ReduceScatter, then AllGather */
                CL_TRY(lab22_reduce_scatter(c, s.g + off, n, s.gs));
                CL_TRY(lab22_all_gather(c, s.gs, n, s.g + off));
                lab22_scale(s.g + off, n, 1.0f / (float)N);
                lab22_sgd(s.p + off, s.m + off, s.g + off, n, j->lr, j->momentum);
                continue;
            }
            float *gs = st == 1 ? s.gs : s.gs + (size_t)l * k;
            if (st == 1)
                CL_TRY(lab22_reduce_scatter(c, s.g + off, n, gs));
            lab22_scale(gs, k, 1.0f / (float)N);
            float *p = st < 3 ? s.p + mine : s.ps + (size_t)l * k;
            lab22_sgd(p, s.m + (size_t)l * k, gs, k, j->lr, j->momentum);
            if (st < 3)
                CL_TRY(lab22_all_gather(c, s.p + mine, n, s.p + off));
        }
    }
    for (int l = 0; l < L; l++) {
        const float *src = st < 3 ? s.p + (size_t)l * n + (size_t)r * k : s.ps + (size_t)l * k;
        memcpy(j->out + (size_t)l * k, src, k * sizeof(float));
    }
done:
    release(c, &s);
    return rc;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab22) 3: job->steps steps of job->stage, as section 2's table says: the
    // stage's buffers from cl_mem_alloc (freed before you return), the mean of the ranks'
    // gradients by your collectives, and your shard of the final model in job->out.
    (void)c, (void)j;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* BEGIN SOLUTION */
static double ring(const lab22_cluster *k, double x)
{
    return (k->ranks - 1) * (k->alpha_s + x * k->elem_bytes / k->ranks / k->bytes_per_s);
}

/* The handout's step: forward, backward, and the buckets' ReduceScatters behind it. */
static double bucket_step(const lab22_cluster *k, double s)
{
    double psi = k->params, tb = k->backward_s, nb = ceil(psi / s);
    if (nb <= 1)
        return tb / 2 + tb + ring(k, psi);
    double p = tb * s / psi, c = ring(k, s), last = psi - (nb - 1) * s;
    double link = fmax(p + (nb - 1) * c, (nb - 1) * p + c);
    return tb / 2 + fmax(tb, link) + ring(k, last);
}
/* END SOLUTION */

double lab22_choose_bucket(const lab22_cluster *k)
{
    /* BEGIN SOLUTION */
    double psi = k->params, smax = fmin(psi, floor(k->free_bytes / (2.0 * k->elem_bytes)));
    double best = INFINITY, best_s = 1;
    /* Sizes on a fine geometric grid, and the sizes that split the model evenly. */
    for (int i = 0; i <= 2000; i++) {
        double s = i == 2000 ? smax : floor(exp(log(smax) * i / 2000.0));
        double t = bucket_step(k, s);
        if (t < best)
            best = t, best_s = s;
    }
    for (int m = 1; m <= 2048; m++) {
        double s = ceil(psi / m);
        if (s <= smax && bucket_step(k, s) < best)
            best = bucket_step(k, s), best_s = s;
    }
    return best_s;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab22) 4: the bucket (elements) whose step, in section 4's model, is the
    // shortest among those whose two buffers fit in k->free_bytes.
    (void)k;
    return 0;
    END SKELETON */
}
