/* lab11.h: types and functions of lab 11 (SM contention and overlapping communication).
 * The plug-in (driver.c) calls the functions you write in lab11.c; device.c and
 * allreduce.c are code the lab gives you. */
#ifndef COMMLAB_LAB11_H
#define COMMLAB_LAB11_H

#include <stddef.h>

#include "coll.h"
#include "commlab.h"

#define LAB11_MAX_LAYERS   64
#define LAB11_MAX_CHANNELS 32
#define LAB11_MAX_PARTS    64

/* One training step's backward pass on every rank, and the machine it runs on.
 * Layers are computed from layers-1 down to 0; layer l produces layer_bytes[l]
 * of float gradients, which lie in the gradient buffer in that order (layer
 * layers-1 first), and must be summed over the ranks (an AllReduce). */
typedef struct lab11_model {
    int ranks;                            /* p */
    int sms;                              /* S: streaming multiprocessors of one GPU */
    int layers;                           /* L */
    double layer_s[LAB11_MAX_LAYERS];     /* layer l's kernel alone on all S SMs, seconds */
    double layer_bytes[LAB11_MAX_LAYERS]; /* layer l's gradient, bytes (a multiple of 4) */
    double alpha_s;                       /* latency of one message */
    double link_Bps;                      /* bytes/s a rank's messages share, each way */
    double slot_bytes;                    /* K: the largest message of one channel */
    int max_channels;                     /* at most LAB11_MAX_CHANNELS */
} lab11_model;

/* Your decisions for a step. */
typedef struct lab11_plan {
    int channels;        /* C: ring channels of every AllReduce, 1 .. max_channels */
    double bucket_bytes; /* a bucket closes once it holds at least this many bytes */
    int parts;           /* each layer's kernel runs in this many parts, 1 .. LAB11_MAX_PARTS */
} lab11_plan;

/* --- given (device.c): the modelled GPU ------------------------------------------- */

/* Run part `part` of `parts` of layer `layer`'s backward kernel on this rank's
 * GPU (a model kept by the harness): it takes layer_s[layer] / parts, slowed by
 * S / (S - k) while k of the SMs run communication (k: the channels of this
 * rank's transfers in flight when it starts). When a layer's last part ends,
 * its gradient appears in the gradient buffer. Layers go from layers-1 down to
 * 0 and parts in order; anything else is CL_ERR_INVALID. */
cl_result lab11_compute(cl_comm *c, int layer, int part, int parts);

/* --- given (allreduce.c): a non-blocking ring AllReduce ---------------------------- */

/* A sum AllReduce of `count` floats in place, over the ring of all ranks, on
 * `channels` channels: every block of the ring is cut into one slice per
 * channel, and every channel moves its slice in messages of at most slot
 * floats, one at a time, all channels in lock step (a round). scratch holds
 * channels x slot floats. It never blocks except in lab11_ar_finish(), and it
 * tests a round only once the model (m's latency and bandwidth) says the round
 * could be over: a test that finds it unfinished costs time. */
typedef struct lab11_allreduce {
    cl_comm *comm;
    float *buf, *scratch;
    size_t count, slot;
    int channels, rank, ranks, step;
    size_t piece;                  /* index of the current piece of every channel's slice */
    int in_flight;                 /* requests of the current round */
    double alpha_s, link_Bps, due; /* the model's link; when this round should be over */
    cl_request req[2 * LAB11_MAX_CHANNELS];
    size_t off[LAB11_MAX_CHANNELS], len[LAB11_MAX_CHANNELS]; /* this round's pieces */
    int done;
} lab11_allreduce;

/* Start: post the first round. CL_ERR_INVALID for bad arguments. */
cl_result lab11_ar_start(lab11_allreduce *ar, cl_comm *c, const lab11_model *m, float *buf,
                         float *scratch, size_t count, int channels, size_t slot);

/* Move on without waiting: when this round's transfers have finished, reduce
 * and post the next round. *done = 1 once the AllReduce is complete. */
cl_result lab11_ar_progress(lab11_allreduce *ar, int *done);

/* Block until the AllReduce is complete. */
cl_result lab11_ar_finish(lab11_allreduce *ar);

/* --- written by the student in lab11.c, in the order of the handout --- */

/* The model's time of one AllReduce of `bytes` on `channels` channels. */
double lab11_allreduce_s(const lab11_model *m, double bytes, int channels);

/* The model's time of a whole step under plan p (the handout's event model). */
double lab11_step_s(const lab11_model *m, const lab11_plan *p);

/* Choose the plan for machine m. CL_ERR_INVALID for an impossible model. */
cl_result lab11_plan_step(const lab11_model *m, lab11_plan *out);

/* Run one overlapped step on this rank: every layer's kernel (lab11_compute)
 * and the AllReduce of the gradients in grads (sum, in place) under plan p.
 * scratch holds p->channels x slot floats (slot = m->slot_bytes / 4). Return when
 * both are done. */
cl_result lab11_step(cl_comm *c, const lab11_model *m, const lab11_plan *p, float *grads,
                     float *scratch);

#endif /* COMMLAB_LAB11_H */
