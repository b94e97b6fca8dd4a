/* lab23.h: types and functions of lab 23 (sequence parallelism).
 *
 * A transformer's MLP sublayer, the block of Korthikanti et al. (MLSys 2023),
 * Figure 5, on t ranks of one tensor-parallel group:
 *
 *     Z = LayerNorm(X)      O = GeLU(Z A) B      Y = X + Dropout(O)
 *
 * A (h x f) is split by columns and B (f x h) by rows over the ranks (Megatron's
 * column- and row-parallel linear layers). Tensors are row-major; a row is one
 * token: rows = seq x batch, sequence-major (row = token * batch + sample), so a
 * sequence shard of t ranks is a block of rows/t consecutive rows.
 *
 * The plug-in (driver.c) calls the functions you write in lab23.c; kernels.c,
 * collectives.c and tp.c are code the lab gives you. */
#ifndef COMMLAB_LAB23_H
#define COMMLAB_LAB23_H

#include <stddef.h>
#include <stdint.h>

#include "commlab.h"
#include "lab23_mask.h"

#define LAB23_MAX_SAVED 8

/* One call's shapes: the group is the call's communicator (t = its size). */
typedef struct lab23_dims {
    int seq, batch; /* rows = seq x batch; seq is a multiple of t */
    int hidden;     /* h */
    int ffn;        /* f: a multiple of t; this rank holds f/t columns of A, rows of B */
    float dropout;  /* p: the probability an element of O is dropped */
    uint64_t seed;  /* this call's dropout mask (lab23_mask.h) */
} lab23_dims;

/* This rank's parameters: the same buffers in forward and backward. */
typedef struct lab23_params {
    const float *gamma, *beta; /* LayerNorm, h each (the same on every rank) */
    const float *a;            /* h x f/t: columns [rank f/t, (rank+1) f/t) of A */
    const float *b;            /* f/t x h: the same rows of B */
} lab23_params;

/* What forward keeps for backward: buffers from cl_mem_alloc, which backward
 * frees. Their bytes are the rank's activation memory, measured by the harness. */
typedef struct lab23_saved {
    float *buf[LAB23_MAX_SAVED];
    size_t count[LAB23_MAX_SAVED]; /* floats in each, for your own use */
    int n;
} lab23_saved;

/* Gradients of the parameters (this rank's buffers). */
typedef struct lab23_grads {
    float *gamma, *beta; /* h each: over every row of the batch, the same on every rank */
    float *a;            /* h x f/t */
    float *b;            /* f/t x h */
} lab23_grads;

/* --- given (kernels.c): the block's arithmetic on host memory --------------------------- */

/* z = LayerNorm(x) (eps 1e-5) with gamma, beta: rows x h. This function can't fail. */
void lab23_layernorm(const float *x, const float *gamma, const float *beta, int rows, int h,
                     float *z);

/* The LayerNorm's backward from its input x and dz = dL/dz: dx += dL/dx; dgamma and
 * dbeta += this rows' contributions. This function can't fail. */
void lab23_layernorm_backward(const float *x, const float *gamma, const float *dz, int rows, int h,
                              float *dx, float *dgamma, float *dbeta);

/* c (m x n) = op(a) op(b), or += with accumulate; op(a) is m x k: a itself (m x k),
 * or with ta the transpose of a (k x m); likewise op(b) is k x n. Row-major. This
 * function can't fail. */
void lab23_matmul(int m, int n, int k, const float *a, int ta, const float *b, int tb, float *c,
                  int accumulate);

/* The multiply-adds lab23_matmul has done in this process so far (m x n x k a call). */
double lab23_matmul_macs(void);

/* v = GeLU(u) (tanh form), and du = dv x GeLU'(u); n elements. These can't fail. */
void lab23_gelu(const float *u, float *v, size_t n);
void lab23_gelu_backward(const float *u, const float *dv, float *du, size_t n);

/* y = x + Dropout(o) on rows [first_row, first_row + rows) of the batch (kept
 * elements scaled by 1/(1-p)); and its backward, d_o = Dropout'(dy). These can't fail. */
void lab23_dropout_add(const float *o, const float *x, float *y, int rows, int h, long first_row,
                       float p, uint64_t seed);
void lab23_dropout_backward(const float *dy, float *d_o, int rows, int h, long first_row, float p,
                            uint64_t seed);

/* --- given (collectives.c): ring collectives of floats over the p2p interface ---------------
 * lab05's rings, blocking. Each allocates its own scratch and frees it before returning. */

/* out (t x n floats) = the n floats of in of every rank, in rank order. */
cl_result lab23_allgather(cl_comm *c, const float *in, float *out, size_t n);

/* out (n floats) = block `rank` of in (t x n floats), summed over the ranks. */
cl_result lab23_reduce_scatter(cl_comm *c, const float *in, float *out, size_t n);

/* buf (n floats) = its sum over the ranks, in place. */
cl_result lab23_allreduce(cl_comm *c, float *buf, size_t n);

/* --- given (tp.c): the block with tensor parallelism only (Megatron's f and f-bar) ----------
 * x, y, dy, dx: every row of the batch, the same on every rank. */
cl_result lab23_tp_forward(cl_comm *c, const lab23_dims *d, const lab23_params *w, const float *x,
                           float *y, lab23_saved *saved);
cl_result lab23_tp_backward(cl_comm *c, const lab23_dims *d, const lab23_params *w,
                            lab23_saved *saved, const float *dy, float *dx, lab23_grads *g);

/* --- written by the student in lab23.c, in the order of the handout ------------------------
 * Sequence parallel: x, y, dy, dx hold this rank's rows/t rows (rows [rank rows/t, ...)). */
cl_result lab23_sp_forward(cl_comm *c, const lab23_dims *d, const lab23_params *w, const float *x,
                           float *y, lab23_saved *saved);
cl_result lab23_sp_backward(cl_comm *c, const lab23_dims *d, const lab23_params *w,
                            lab23_saved *saved, const float *dy, float *dx, lab23_grads *g);

/* --- the model of a real training run (section 4), written by the student too ------------ */

/* One GPU of a tensor-parallel group, training a GPT-style model. */
typedef struct lab23_model {
    double seq, batch, hidden, heads; /* s, b (micro-batch), h, a */
    double layers;                    /* L: layers whose activations the GPU holds at once */
    int t;                            /* tensor-parallel size */
    double flops;                     /* FLOP/s one GPU sustains */
    double busbw;                     /* the TP group's AllReduce bus bandwidth, bytes/s */
    double memory;                    /* bytes of the GPU */
    double states;                    /* bytes of weights, gradients and optimizer state */
} lab23_model;

enum { LAB23_NO_RECOMPUTE = 0, LAB23_SELECTIVE = 1 };

typedef struct lab23_plan {
    int sp;          /* sequence parallelism on (1) or off (0) */
    int granularity; /* LAB23_NO_RECOMPUTE or LAB23_SELECTIVE, for layers not recomputed fully */
    int full_layers; /* N: layers recomputed fully (0 .. L) */
} lab23_plan;

/* Activation bytes one layer keeps (16-bit activations), the handout's table. */
double lab23_layer_bytes(const lab23_model *m, int sp, int granularity);

/* Bytes of the GPU under plan p, and the seconds of one micro-batch's step. */
double lab23_memory_bytes(const lab23_model *m, const lab23_plan *p);
double lab23_step_s(const lab23_model *m, const lab23_plan *p);

/* The fastest plan that fits; CL_ERR_INVALID (with a reason) when none fits. */
cl_result lab23_plan_run(const lab23_model *m, lab23_plan *out);

#endif /* COMMLAB_LAB23_H */
