/* lab26.h: types and functions of lab 26 (pipeline parallelism: the 1F1B schedule).
 * The driver (driver.c) calls the function you write in lab26.c. */
#ifndef COMMLAB_LAB26_H
#define COMMLAB_LAB26_H

#include <stddef.h>

#include "commlab.h"

/* One pipeline stage per rank of comm: rank s holds layers s of a model cut
 * into p = cl_comm_size(comm) stages. A step trains m micro-batches. Every
 * buffer holds m slots of act_bytes, slot j for micro-batch j (at j * act_bytes):
 *   act_in    the activation micro-batch j arrives with (stage 0: the harness
 *             has put the input there; stage s > 0: receive it from stage s - 1)
 *   act_out   what lab26_forward(j) produced: send it to stage s + 1
 *   grad_in   the gradient of act_out j (stage p - 1: none, the loss is local;
 *             else receive it from stage s + 1)
 *   grad_out  what lab26_backward(j) produced: send it to stage s - 1 */
typedef struct lab26_stage_args {
    int m;
    int chunks; /* v: model chunks per rank (1 for 1F1B; see lab26_interleaved) */
    size_t act_bytes;
    void *act_in, *act_out, *grad_in, *grad_out;
} lab26_stage_args;

/* The stage's computation, done by the harness (given in stage.c): the forward
 * of micro-batch j reads act_in slot j and writes act_out slot j; the backward
 * reads grad_in slot j (and the activation stashed by the forward) and writes
 * grad_out slot j. Each takes the stage's compute time. They fail, with the
 * reason, when an input is not the one sequential execution would give, or
 * when the micro-batch is done twice or backward comes before forward. */
enum { LAB26_OP_FORWARD = 1, LAB26_OP_BACKWARD = 2 }; /* their cl_lab_call codes */
cl_result lab26_forward(cl_comm *comm, int j);
cl_result lab26_backward(cl_comm *comm, int j);

/* The same for model chunk k of this rank (the interleaved schedule): chunk k of rank s
 * is stage k * p + s of the v * p stages, and its slots are k * m + j. */
cl_result lab26_forward_chunk(cl_comm *comm, int k, int j);
cl_result lab26_backward_chunk(cl_comm *comm, int k, int j);

/* --- what you write (lab26.c) ------------------------------------------------------------ */

/* Run this stage's part of one training step with the 1F1B schedule: every
 * micro-batch's forward and backward exactly once, the activations and
 * gradients sent and received with the point-to-point interface, no deadlock,
 * at most p - s micro-batches forwarded and not yet backwarded at any time. */
cl_result lab26_1f1b(cl_comm *comm, const lab26_stage_args *a);

/* The stretch: the interleaved 1F1B schedule. Rank s holds v = a->chunks model
 * chunks: chunk k is stage k * p + s of a model cut into v * p stages, so an
 * activation leaving rank p - 1's chunk k goes to rank 0's chunk k + 1 (and its
 * gradient comes back the same way). Buffers have v * m slots, slot k * m + j
 * for chunk k and micro-batch j; m is a multiple of p, and p >= 3. Each chunk's
 * forward and backward take 1/v of a stage's. At most
 * min(v * m, 2 (p - s - 1) + (v - 1) p + 1) micro-batch chunks in flight. */
cl_result lab26_interleaved(cl_comm *comm, const lab26_stage_args *a);

#endif /* COMMLAB_LAB26_H */
