/* tp.c: lab 23's given code: the MLP block with tensor parallelism only (the baseline).
 *
 * Megatron-LM's tensor parallelism (Shoeybi et al. 2019): every rank holds the
 * whole batch, computes LayerNorm and dropout on all of it (the same values on
 * every rank), and owns f/t columns of A and the matching rows of B. The two
 * conjugate operations around the parallel region:
 *   f      forward: identity          backward: AllReduce of dZ
 *   f-bar  forward: AllReduce of W    backward: identity
 * It keeps for backward: X and Z (rows x h each, replicated on every rank) and
 * U, V (rows x f/t each).
 */
#include <string.h>

#include "lab23.h"

enum { SAVED_X, SAVED_Z, SAVED_U, SAVED_V, SAVED_COUNT };

static cl_result alloc(cl_comm *c, size_t n, float **out)
{
    return cl_mem_alloc(c, n * sizeof(float), (void **)out);
}

static void release(cl_comm *c, lab23_saved *s)
{
    for (int i = 0; i < s->n; i++)
        if (s->buf[i])
            cl_mem_free(c, s->buf[i]);
    memset(s, 0, sizeof *s);
}

cl_result lab23_tp_forward(cl_comm *c, const lab23_dims *d, const lab23_params *w, const float *x,
                           float *y, lab23_saved *saved)
{
    int rows = d->seq * d->batch, h = d->hidden, fl = d->ffn / cl_comm_size(c);
    size_t nx = (size_t)rows * h, nu = (size_t)rows * fl;
    cl_result rc = CL_OK;
    float *o = NULL;
    memset(saved, 0, sizeof *saved);
    saved->n = SAVED_COUNT;
    size_t counts[SAVED_COUNT] = {nx, nx, nu, nu};
    for (int i = 0; i < SAVED_COUNT; i++) {
        CL_TRY(alloc(c, counts[i], &saved->buf[i]));
        saved->count[i] = counts[i];
    }
    float *xs = saved->buf[SAVED_X], *z = saved->buf[SAVED_Z], *u = saved->buf[SAVED_U],
          *v = saved->buf[SAVED_V];
    memcpy(xs, x, nx * sizeof(float)); /* the LayerNorm's input, for its backward */
    lab23_layernorm(x, w->gamma, w->beta, rows, h, z);
    lab23_matmul(rows, fl, h, z, 0, w->a, 0, u, 0); /* f: identity */
    lab23_gelu(u, v, nu);
    CL_TRY(alloc(c, nx, &o));
    lab23_matmul(rows, h, fl, v, 0, w->b, 0, o, 0); /* this rank's partial sum */
    CL_TRY(lab23_allreduce(c, o, nx));              /* f-bar: AllReduce */
    lab23_dropout_add(o, x, y, rows, h, 0, d->dropout, d->seed);
done:
    if (o)
        cl_mem_free(c, o);
    if (rc != CL_OK)
        release(c, saved);
    return rc;
}

cl_result lab23_tp_backward(cl_comm *c, const lab23_dims *d, const lab23_params *w,
                            lab23_saved *saved, const float *dy, float *dx, lab23_grads *g)
{
    int rows = d->seq * d->batch, h = d->hidden, fl = d->ffn / cl_comm_size(c);
    size_t nx = (size_t)rows * h, nu = (size_t)rows * fl;
    if (saved->n != SAVED_COUNT) {
        cl_set_error("tp backward: %d saved buffers, expected %d", saved->n, SAVED_COUNT);
        return CL_ERR_INVALID;
    }
    float *x = saved->buf[SAVED_X], *z = saved->buf[SAVED_Z], *u = saved->buf[SAVED_U],
          *v = saved->buf[SAVED_V];
    cl_result rc = CL_OK;
    float *d_o = NULL, *du = NULL;
    CL_TRY(alloc(c, nx, &d_o));
    CL_TRY(alloc(c, nu, &du));
    lab23_dropout_backward(dy, d_o, rows, h, 0, d->dropout, d->seed); /* f-bar: identity */
    lab23_matmul(fl, h, rows, v, 1, d_o, 0, g->b, 0);                 /* dB = V^T dO */
    lab23_matmul(rows, fl, h, d_o, 0, w->b, 1, du, 0);                /* dV = dO B^T */
    lab23_gelu_backward(u, du, du, nu);                               /* dU */
    lab23_matmul(h, fl, rows, z, 1, du, 0, g->a, 0);                  /* dA = Z^T dU */
    lab23_matmul(rows, h, fl, du, 0, w->a, 1, d_o, 0);                /* dZ, partial */
    CL_TRY(lab23_allreduce(c, d_o, nx));                              /* f: AllReduce */
    memcpy(dx, dy, nx * sizeof(float));                               /* the residual */
    memset(g->gamma, 0, (size_t)h * sizeof(float));
    memset(g->beta, 0, (size_t)h * sizeof(float));
    lab23_layernorm_backward(x, w->gamma, d_o, rows, h, dx, g->gamma, g->beta);
done:
    if (du)
        cl_mem_free(c, du);
    if (d_o)
        cl_mem_free(c, d_o);
    release(c, saved);
    return rc;
}
