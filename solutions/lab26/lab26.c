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
