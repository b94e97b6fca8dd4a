/* lab22.h: ZeRO-1/2/3 on a small MLP: the student's functions and the model the lab gives.
 *
 * The model: `layers` fully connected layers of width x width, each with its
 * bias; the activation softsign(z) = z / (1 + |z|) after every layer but the last;
 * the loss is half the mean squared error over the rank's batch (per row). Layer l's parameters are
 * one block of LAB22_LAYER(width) floats: W (width x width, row-major: W[i * width + j] joins input
 * i to output j), then b (width). The model is the blocks of layers 0 .. layers-1, one after the
 * other.
 *
 * Sharding: every layer's block is cut into N equal pieces (N = the ranks);
 * rank r owns floats [r * n / N, (r + 1) * n / N) of each block (n =
 * LAB22_LAYER(width)). A rank's shard of the model is its piece of every
 * layer, layer after layer. */
#ifndef LAB22_H
#define LAB22_H

#include <stddef.h>

#include "p2p.h"

#define LAB22_LAYER(w)   ((size_t)(w) * (size_t)(w) + (size_t)(w))
#define LAB22_MAX_LAYERS 32

/* One training run of data parallelism on the ranks of a communicator. */
typedef struct lab22_job {
    int stage;                /* 0: plain data parallel; 1, 2, 3: ZeRO's stages */
    int layers, width, batch; /* the model, and the rank's batch (rows) */
    int steps;                /* optimizer steps */
    float lr, momentum;       /* SGD with momentum: m = momentum * m + g; p -= lr * m */
    const float *params;      /* in: the initial model (every layer's block), same on every
                                 rank; read only */
    const float *x, *t;       /* in: the rank's batch, batch x width each; read only */
    float *out;               /* out: the rank's shard of the final model */
} lab22_job;

/* The ring collectives on n floats (n a multiple of the ranks). */
cl_result lab22_reduce_scatter(cl_comm *c, const float *buf, size_t n, float *shard);
cl_result lab22_all_gather(cl_comm *c, const float *shard, size_t n, float *buf);

/* Train the job's model for job->steps steps; write the rank's shard into job->out. */
cl_result lab22_train(cl_comm *c, const lab22_job *job);

/* --- the decision: ZeRO-2's gradient bucket ---------------------------------------------- */

typedef struct lab22_cluster {
    double params;      /* Ψ: gradients of the model, elements */
    int elem_bytes;     /* bytes of one gradient element (2: fp16/bf16) */
    int ranks;          /* N: the data-parallel ranks */
    double backward_s;  /* the backward pass's compute time on one rank */
    double alpha_s;     /* latency of one step of the ring */
    double bytes_per_s; /* bandwidth of one rank's link */
    double free_bytes;  /* memory left on the GPU for the gradient buckets */
} lab22_cluster;

/* The bucket, in gradient elements (>= 1), for ZeRO-2's reduce-scatter overlapped with
 * the backward pass on cluster k (the handout's model). */
double lab22_choose_bucket(const lab22_cluster *k);

/* --- the model's arithmetic, given (mlp.c) ------------------------------------------------ */

/* y = x W + b for batch rows; then softsign when act. p is the layer's block. */
void lab22_forward(const float *p, const float *x, float *y, int batch, int width, int act);
/* g = (y - t) / batch: the loss's gradient at the last layer's output. */
void lab22_loss_grad(const float *y, const float *t, float *g, int batch, int width);
/* The layer's gradient: grad (its block) = the gradient of W (x^T g) and of b (the column
 * sums of g), overwritten. When gin is not NULL, gin = g W^T times softsign's derivative
 * (1 - |x|)^2 (x is the output of the softsign before this layer). */
void lab22_backward(const float *p, const float *x, const float *g, float *grad, float *gin,
                    int batch, int width);
/* m = momentum * m + g; p -= lr * m, for n elements. */
void lab22_sgd(float *p, float *m, const float *g, size_t n, float lr, float momentum);
/* v *= s for n elements. */
void lab22_scale(float *v, size_t n, float s);

#endif /* LAB22_H */
