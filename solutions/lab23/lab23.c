/* lab23.c: lab 23, sequence parallelism around a tensor-parallel MLP block.
 *
 * Tensor parallelism leaves LayerNorm and dropout replicated: every rank
 * computes them on every row and keeps their activations. Sequence
 * parallelism (Korthikanti et al., MLSys 2023) splits those regions by rows
 * instead and turns each AllReduce into a ReduceScatter and an AllGather. You
 * write the sequence-parallel forward and backward of the block (tp.c is the
 * tensor-parallel version to start from), then the paper's accounting of
 * activation memory and a plan for a real model. Read labs/lab23/README.md
 * first; the TODOs below follow its sections. Build with `make lab23`, grade
 * with `./grade lab23`.
 */
#include <math.h>
#include <string.h>

#include "lab23.h"

/* BEGIN SOLUTION */
enum { SAVED_X, SAVED_Z, SAVED_U, SAVED_V, SAVED_COUNT };

static cl_result alloc(cl_comm *c, size_t n, float **out)
{
    return cl_mem_alloc(c, n * sizeof(float), (void **)out);
}

static void release(cl_comm *c, lab23_saved *s)
{
    for (int i = 0; i < s->n && i < LAB23_MAX_SAVED; i++)
        if (s->buf[i])
            cl_mem_free(c, s->buf[i]);
    memset(s, 0, sizeof *s);
}
/* END SOLUTION */
cl_result lab23_sp_forward(cl_comm *c, const lab23_dims *d, const lab23_params *w, const float *x,
                           float *y, lab23_saved *saved)
{
    /* BEGIN SOLUTION */
    int t = cl_comm_size(c), rows = d->seq * d->batch, h = d->hidden, fl = d->ffn / t;
    int mine = rows / t; /* this rank's rows: the sequence shard */
    long first = (long)cl_comm_rank(c) * mine;
    size_t nx = (size_t)mine * h, nfull = (size_t)rows * h, nu = (size_t)rows * fl;
    cl_result rc = CL_OK;
    float *zg = NULL, *o = NULL, *o_mine = NULL;
    memset(saved, 0, sizeof *saved);
    saved->n = SAVED_COUNT;
    size_t counts[SAVED_COUNT] = {nx, nx, nu, nu};
    for (int i = 0; i < SAVED_COUNT; i++) {
        CL_TRY(alloc(c, counts[i], &saved->buf[i]));
        saved->count[i] = counts[i];
    }
    float *xs = saved->buf[SAVED_X], *z = saved->buf[SAVED_Z], *u = saved->buf[SAVED_U],
          *v = saved->buf[SAVED_V];
    memcpy(xs, x, nx * sizeof(float));
    lab23_layernorm(x, w->gamma, w->beta, mine, h, z); /* on this rank's rows only */
    CL_TRY(alloc(c, nfull, &zg));
    CL_TRY(lab23_allgather(c, z, zg, nx)); /* g: AllGather into the parallel region */
    lab23_matmul(rows, fl, h, zg, 0, w->a, 0, u, 0);
    cl_mem_free(c, zg); /* backward gathers Z again rather than keep every row */
    zg = NULL;
    lab23_gelu(u, v, nu);
    CL_TRY(alloc(c, nfull, &o));
    lab23_matmul(rows, h, fl, v, 0, w->b, 0, o, 0);
    CL_TRY(alloc(c, nx, &o_mine));
    CL_TRY(lab23_reduce_scatter(c, o, o_mine, nx)); /* g-bar: ReduceScatter out of it */
    lab23_dropout_add(o_mine, x, y, mine, h, first, d->dropout, d->seed);
done:
    if (zg)
        cl_mem_free(c, zg);
    if (o)
        cl_mem_free(c, o);
    if (o_mine)
        cl_mem_free(c, o_mine);
    if (rc != CL_OK)
        release(c, saved);
    return rc;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab23) 1: the sequence-parallel forward (section 1 of the handout):
    //   LayerNorm on your rows, an AllGather into the tensor-parallel region, a
    //   ReduceScatter out of it, dropout and the residual on your rows; keep in
    //   `saved` what backward needs, and no more.
    (void)c, (void)d, (void)w, (void)x, (void)y, (void)saved;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab23_sp_backward(cl_comm *c, const lab23_dims *d, const lab23_params *w,
                            lab23_saved *saved, const float *dy, float *dx, lab23_grads *g)
{
    /* BEGIN SOLUTION */
    int t = cl_comm_size(c), rows = d->seq * d->batch, h = d->hidden, fl = d->ffn / t;
    int mine = rows / t;
    long first = (long)cl_comm_rank(c) * mine;
    size_t nx = (size_t)mine * h, nfull = (size_t)rows * h, nu = (size_t)rows * fl;
    if (saved->n < SAVED_COUNT || saved->n > LAB23_MAX_SAVED) {
        cl_set_error("sp backward: %d saved buffers, expected %d", saved->n, SAVED_COUNT);
        return CL_ERR_INVALID;
    }
    float *x = saved->buf[SAVED_X], *z = saved->buf[SAVED_Z], *u = saved->buf[SAVED_U],
          *v = saved->buf[SAVED_V];
    cl_result rc = CL_OK;
    float *d_o = NULL, *dw = NULL, *du = NULL, *zg = NULL, *dz = NULL;
    CL_TRY(alloc(c, nx, &d_o));
    lab23_dropout_backward(dy, d_o, mine, h, first, d->dropout, d->seed);
    CL_TRY(alloc(c, nfull, &dw));
    CL_TRY(lab23_allgather(c, d_o, dw, nx)); /* g-bar's backward: AllGather */
    lab23_matmul(fl, h, rows, v, 1, dw, 0, g->b, 0);
    CL_TRY(alloc(c, nu, &du));
    lab23_matmul(rows, fl, h, dw, 0, w->b, 1, du, 0);
    lab23_gelu_backward(u, du, du, nu);
    CL_TRY(alloc(c, nfull, &zg));
    CL_TRY(lab23_allgather(c, z, zg, nx)); /* Z of every row again, for dA */
    lab23_matmul(h, fl, rows, zg, 1, du, 0, g->a, 0);
    lab23_matmul(rows, h, fl, du, 0, w->a, 1, dw, 0); /* dZ of every row, partial */
    CL_TRY(alloc(c, nx, &dz));
    CL_TRY(lab23_reduce_scatter(c, dw, dz, nx)); /* g's backward: ReduceScatter */
    memcpy(dx, dy, nx * sizeof(float));
    memset(g->gamma, 0, (size_t)h * sizeof(float));
    memset(g->beta, 0, (size_t)h * sizeof(float));
    lab23_layernorm_backward(x, w->gamma, dz, mine, h, dx, g->gamma, g->beta);
    /* Each rank saw only its rows: LayerNorm's gradients are partial sums. */
    CL_TRY(lab23_allreduce(c, g->gamma, (size_t)h));
    CL_TRY(lab23_allreduce(c, g->beta, (size_t)h));
done:
    if (d_o)
        cl_mem_free(c, d_o);
    if (dw)
        cl_mem_free(c, dw);
    if (du)
        cl_mem_free(c, du);
    if (zg)
        cl_mem_free(c, zg);
    if (dz)
        cl_mem_free(c, dz);
    release(c, saved);
    return rc;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab23) 2: the sequence-parallel backward (section 2): each collective
    //   of the forward has its conjugate here; the parameters' gradients are over
    //   every row of the batch; free what forward saved.
    (void)c, (void)d, (void)w, (void)saved, (void)dy, (void)dx, (void)g;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

double lab23_layer_bytes(const lab23_model *m, int sp, int granularity)
{
    /* BEGIN SOLUTION */
    double sbh = m->seq * m->batch * m->hidden, t = m->t;
    double attention = 5 * m->heads * m->seq / (m->hidden * t); /* scores, softmax, dropout */
    double rest = sp ? 34 / t : 10 + 24 / t;
    return sbh * (rest + (granularity == LAB23_SELECTIVE ? 0 : attention));
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab23) 3: the activation bytes of one layer (section 4.1's table).
    (void)m, (void)sp, (void)granularity;
    return 0;
    END SKELETON */
}

/* BEGIN SOLUTION */
/* A layer recomputed in full keeps only its input (2sbh bytes, sharded with SP). */
static double full_layer_bytes(const lab23_model *m, int sp)
{
    return 2 * m->seq * m->batch * m->hidden / (sp ? m->t : 1);
}
/* END SOLUTION */
double lab23_memory_bytes(const lab23_model *m, const lab23_plan *p)
{
    /* BEGIN SOLUTION */
    double kept = m->layers - p->full_layers;
    double bytes = m->states + kept * lab23_layer_bytes(m, p->sp, p->granularity) +
                   p->full_layers * full_layer_bytes(m, p->sp);
    if (p->full_layers > 0) /* the layer being recomputed holds everything meanwhile */
        bytes += lab23_layer_bytes(m, p->sp, LAB23_NO_RECOMPUTE);
    return bytes;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab23) 3: the GPU's bytes under plan p (section 4.2).
    (void)m, (void)p;
    return 0;
    END SKELETON */
}

double lab23_step_s(const lab23_model *m, const lab23_plan *p)
{
    /* BEGIN SOLUTION */
    double s = m->seq, b = m->batch, h = m->hidden, t = m->t;
    double fwd = 24 * b * s * h * h + 4 * b * s * s * h; /* one layer's forward FLOPs */
    double core = 4 * b * s * s * h;                     /* QK^T and the scores times V */
    double comm = t > 1 ? 2 * (2 * (t - 1) / t) * (2 * s * b * h) / m->busbw : 0;
    double plain = 3 * fwd / (t * m->flops) + 2 * comm;
    double layer = p->granularity == LAB23_SELECTIVE ? plain + core / (t * m->flops) : plain;
    double full = 4 * fwd / (t * m->flops) + 3 * comm;
    return (m->layers - p->full_layers) * layer + p->full_layers * full;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab23) 3: the seconds of one micro-batch under plan p (section 4.2).
    (void)m, (void)p;
    return 0;
    END SKELETON */
}

cl_result lab23_plan_run(const lab23_model *m, lab23_plan *out)
{
    /* BEGIN SOLUTION */
    double best = INFINITY;
    int layers = (int)m->layers;
    for (int sp = 0; sp <= 1; sp++)
        for (int g = LAB23_NO_RECOMPUTE; g <= LAB23_SELECTIVE; g++)
            for (int n = 0; n <= layers; n++) {
                lab23_plan p = {.sp = sp, .granularity = g, .full_layers = n};
                double s = lab23_step_s(m, &p);
                if (lab23_memory_bytes(m, &p) <= m->memory && s < best) {
                    best = s;
                    *out = p;
                }
            }
    if (best == INFINITY) {
        cl_set_error("no plan fits in %.1f GB", m->memory / 1e9);
        return CL_ERR_INVALID;
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab23) 4: your decision (section 4.3): the fastest plan that fits.
    (void)m, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
