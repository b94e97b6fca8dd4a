/* lab26.c: lab 26, pipeline parallelism: the 1F1B schedule over point-to-point transfers.
 *
 * You write one stage's part of a training step: which micro-batch to run
 * forward or backward next, and the sends and receives of activations and
 * gradients between neighbouring stages, so that the pipeline never
 * deadlocks, keeps at most p - s activations alive, and idles only for the
 * unavoidable bubble. Read labs/lab26/README.md first; the TODOs below are in
 * the order of its sections. Build with `make lab26`, grade with `./grade lab26`.
 */
#include "lab26.h"

/* BEGIN SOLUTION */
/* Slot j of a buffer. */
static void *slot(void *buf, size_t bytes, int j) { return (char *)buf + (size_t)j * bytes; }

/* The four transfers of a stage, and the two that pair a send with a receive
 * from the same neighbour (as Megatron-LM's send_forward_recv_backward and
 * send_backward_recv_forward): both sides post both at once, so neither
 * waits for the other to finish its send first. */
static cl_result recv_forward(cl_comm *c, const lab26_stage_args *a, int j)
{
    int s = cl_comm_rank(c);
    return s == 0 ? CL_OK : cl_recv(c, slot(a->act_in, a->act_bytes, j), a->act_bytes, s - 1);
}

static cl_result send_forward(cl_comm *c, const lab26_stage_args *a, int j)
{
    int s = cl_comm_rank(c), p = cl_comm_size(c);
    return s == p - 1 ? CL_OK : cl_send(c, slot(a->act_out, a->act_bytes, j), a->act_bytes, s + 1);
}

static cl_result recv_backward(cl_comm *c, const lab26_stage_args *a, int j)
{
    int s = cl_comm_rank(c), p = cl_comm_size(c);
    return s == p - 1 ? CL_OK : cl_recv(c, slot(a->grad_in, a->act_bytes, j), a->act_bytes, s + 1);
}

static cl_result send_backward(cl_comm *c, const lab26_stage_args *a, int j)
{
    int s = cl_comm_rank(c);
    return s == 0 ? CL_OK : cl_send(c, slot(a->grad_out, a->act_bytes, j), a->act_bytes, s - 1);
}

static cl_result send_forward_recv_backward(cl_comm *c, const lab26_stage_args *a, int jf, int jb)
{
    int s = cl_comm_rank(c), p = cl_comm_size(c);
    if (s == p - 1)
        return CL_OK;
    return cl_sendrecv(c, slot(a->act_out, a->act_bytes, jf), a->act_bytes, s + 1,
                       slot(a->grad_in, a->act_bytes, jb), a->act_bytes, s + 1);
}

static cl_result send_backward_recv_forward(cl_comm *c, const lab26_stage_args *a, int jb, int jf)
{
    int s = cl_comm_rank(c);
    if (s == 0)
        return CL_OK;
    return cl_sendrecv(c, slot(a->grad_out, a->act_bytes, jb), a->act_bytes, s - 1,
                       slot(a->act_in, a->act_bytes, jf), a->act_bytes, s - 1);
}
/* END SOLUTION */

cl_result lab26_1f1b(cl_comm *comm, const lab26_stage_args *a)
{
    /* BEGIN SOLUTION */
    int s = cl_comm_rank(comm), p = cl_comm_size(comm), m = a->m;
    int warmup = p - s - 1 < m ? p - s - 1 : m, steady = m - warmup;
    /* warm-up: forwards only, until the last stage's first backward can come back */
    for (int j = 0; j < warmup; j++) {
        CL_CHECK(recv_forward(comm, a, j));
        CL_CHECK(lab26_forward(comm, j));
        CL_CHECK(send_forward(comm, a, j));
    }
    if (steady > 0)
        CL_CHECK(recv_forward(comm, a, warmup));
    /* steady state: one forward, one backward */
    for (int i = 0; i < steady; i++) {
        int jf = warmup + i, jb = i;
        CL_CHECK(lab26_forward(comm, jf));
        CL_CHECK(send_forward_recv_backward(comm, a, jf, jb));
        CL_CHECK(lab26_backward(comm, jb));
        if (i == steady - 1)
            CL_CHECK(send_backward(comm, a, jb));
        else
            CL_CHECK(send_backward_recv_forward(comm, a, jb, jf + 1));
    }
    /* cool-down: the backwards of the warm-up's micro-batches */
    for (int j = steady; j < m; j++) {
        CL_CHECK(recv_backward(comm, a, j));
        CL_CHECK(lab26_backward(comm, j));
        CL_CHECK(send_backward(comm, a, j));
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab26) 1: warm-up: forwards only (how many on stage s?).
    // TODO(lab26) 2: steady state: one forward, one backward, each transfer paired
    //   with the one that goes the other way to the same neighbour.
    // TODO(lab26) 3: cool-down: the backwards still owed.
    (void)comm, (void)a;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* BEGIN SOLUTION */
/* The model chunk and micro-batch of this rank's i-th forward (backward) in
 * Megatron-LM's interleaved order: groups of p micro-batches go through chunk
 * 0, 1, ..., v - 1 forwards (v - 1, ..., 0 backwards). */
static void nth(int i, int p, int v, int backward, int *k, int *j)
{
    int in_group = i % (p * v);
    *k = backward ? v - 1 - in_group / p : in_group / p;
    *j = i / (p * v) * p + in_group % p;
}

#define MAX_WORK 256 /* chunks x micro-batches this schedule handles */

typedef struct interleaved_state {
    cl_comm *c;
    const lab26_stage_args *a;
    int s, p, v;
    cl_request in[MAX_WORK], grad[MAX_WORK], sent[2 * MAX_WORK];
    int nsent;
} interleaved_state;

/* Forward number i: wait for its input, compute, send the output on (non-blocking). */
static cl_result forward_nth(interleaved_state *x, int i)
{
    int k, j, m = x->a->m, last = x->v * x->p - 1;
    size_t L = x->a->act_bytes;
    nth(i, x->p, x->v, 0, &k, &j);
    CL_CHECK(cl_wait(x->c, &x->in[i]));
    CL_CHECK(lab26_forward_chunk(x->c, k, j));
    if (k * x->p + x->s < last)
        CL_CHECK(cl_isend(x->c, slot(x->a->act_out, L, k * m + j), L, (x->s + 1) % x->p,
                          &x->sent[x->nsent++]));
    return CL_OK;
}

static cl_result backward_nth(interleaved_state *x, int i)
{
    int k, j, m = x->a->m;
    size_t L = x->a->act_bytes;
    nth(i, x->p, x->v, 1, &k, &j);
    CL_CHECK(cl_wait(x->c, &x->grad[i]));
    CL_CHECK(lab26_backward_chunk(x->c, k, j));
    if (k * x->p + x->s > 0)
        CL_CHECK(cl_isend(x->c, slot(x->a->grad_out, L, k * m + j), L, (x->s - 1 + x->p) % x->p,
                          &x->sent[x->nsent++]));
    return CL_OK;
}
/* END SOLUTION */

cl_result lab26_interleaved(cl_comm *comm, const lab26_stage_args *a)
{
    /* BEGIN SOLUTION */
    static interleaved_state states[16]; /* one per simulated rank: too big for a stack */
    int s = cl_comm_rank(comm), p = cl_comm_size(comm), v = a->chunks, m = a->m;
    int total = v * m, last = v * p - 1;
    size_t L = a->act_bytes;
    if (total > MAX_WORK || s >= 16)
        return CL_ERR_INVALID;
    interleaved_state *x = &states[s];
    *x = (interleaved_state){.c = comm, .a = a, .s = s, .p = p, .v = v};
    /* every receive posted at once, in the order the neighbours send: each
     * message then has its buffer, and a rank only ever waits for its inputs */
    for (int i = 0; i < total; i++) {
        int k, j;
        nth(i, p, v, 0, &k, &j);
        if (k * p + s > 0)
            CL_CHECK(cl_irecv(comm, slot(a->act_in, L, k * m + j), L, (s - 1 + p) % p, &x->in[i]));
        nth(i, p, v, 1, &k, &j);
        if (k * p + s < last)
            CL_CHECK(cl_irecv(comm, slot(a->grad_in, L, k * m + j), L, (s + 1) % p, &x->grad[i]));
    }
    /* Megatron-LM's warm-up: 2 (p - s - 1) + (v - 1) p forwards, then 1F1B */
    int warmup = 2 * (p - s - 1) + (v - 1) * p;
    warmup = warmup < total ? warmup : total;
    for (int i = 0; i < total; i++) {
        CL_CHECK(forward_nth(x, i));
        if (i >= warmup)
            CL_CHECK(backward_nth(x, i - warmup));
    }
    for (int i = total - warmup; i < total; i++)
        CL_CHECK(backward_nth(x, i));
    return cl_waitall(comm, x->nsent, x->sent);
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab26) 4 (stretch): the interleaved schedule: which chunk and micro-batch
    //   each forward and backward is, the warm-up, and transfers that never deadlock.
    (void)comm, (void)a;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
