/* harness_stage.c: lab 26's stage computation, the operation the student's program calls
 * (lab_op, through stage.c): a forward or a backward of one micro-batch of one model chunk.
 * Each checks that its input is exactly the one sequential execution would give and that it
 * is not done twice or out of order, takes the stage's compute time (virtual on sim, slept
 * elsewhere), writes its output, and is recorded with its start and end on the rank's clock.
 */
#include <stdio.h>
#include <string.h>

#include "lab26_harness.h"
#include "p2p_sim.h"

stage stages[MAX_STAGES];

static void *slot(void *buf, size_t bytes, int j) { return (char *)buf + (size_t)j * bytes; }

/* The stage's computation time: virtual on sim, slept on cpu and gpu. */
static cl_result compute(cl_comm *c, double seconds)
{
    if (cl_comm_on_sim(c))
        return cl_sim_compute(c, seconds);
    cl_sleep_until(cl_wtime() + seconds);
    return CL_OK;
}

static cl_result fail(stage *st, const char *fmt, int j, const char *what)
{
    char text[200];
    snprintf(text, sizeof text, fmt, j, st->s, what);
    if (!st->error[0])
        snprintf(st->error, sizeof st->error, "%s", text);
    st->errors++;
    cl_set_error("%s", text);
    return CL_ERR_INVALID;
}

/* Whether slot j of buf holds exactly owner's content for seed. */
static cl_result holds(cl_comm *c, void *buf, size_t bytes, int idx, int j, uint64_t seed,
                       int owner, int *ok)
{
    size_t wrong = 0;
    CL_CHECK(cl_count_wrong_bytes(c, slot(buf, bytes, idx), bytes, seed, owner, (size_t)j * bytes,
                                  &wrong));
    *ok = wrong == 0;
    return CL_OK;
}

cl_result lab_op(cl_run *run, cl_comm *c, int code, void *args, size_t bytes)
{
    (void)run;
    stage *st = &stages[cl_comm_rank(c)];
    int kj[2], ok = 1;
    size_t L = st->a.act_bytes;
    if (bytes != sizeof kj || (code != LAB26_OP_FORWARD && code != LAB26_OP_BACKWARD)) {
        cl_set_error("lab26: unknown operation %d", code);
        return CL_ERR_INVALID;
    }
    memcpy(kj, args, sizeof kj);
    int k = kj[0], j = kj[1];
    if (k < 0 || k >= st->v)
        return fail(st, "micro-batch %d on stage %d: %s", j, "there is no such model chunk");
    if (j < 0 || j >= st->m)
        return fail(st, "micro-batch %d on stage %d: %s", j, "there is no such micro-batch");
    /* chunk k of rank s is stage g of the v * p; its slots are idx */
    int idx = k * st->m + j, g = k * st->p + st->s, last = st->v * st->p - 1;
    double t = cl_comm_time(c);
    if (code == LAB26_OP_FORWARD) {
        if (st->fwd[idx])
            return fail(st, "forward of micro-batch %d on stage %d: %s", j, "done twice");
        /* stage 0 reads the harness's input (owner v * p), stage g the output of g - 1 */
        CL_CHECK(holds(c, st->a.act_in, L, idx, j, st->seed_fwd, g == 0 ? last + 1 : g - 1, &ok));
        if (!ok)
            return fail(st, "forward of micro-batch %d on stage %d: %s", j,
                        g == 0 ? "its input was overwritten"
                               : "act_in is not the previous stage's activation yet");
        CL_CHECK(compute(c, st->tf / st->v));
        CL_CHECK(cl_fill_bytes(c, slot(st->a.act_out, L, idx), L, st->seed_fwd, g, (size_t)j * L));
        st->fwd[idx] = 1;
        if (++st->in_flight > st->max_in_flight)
            st->max_in_flight = st->in_flight;
    } else {
        if (!st->fwd[idx])
            return fail(st, "backward of micro-batch %d on stage %d: %s", j, "before its forward");
        if (st->bwd[idx])
            return fail(st, "backward of micro-batch %d on stage %d: %s", j, "done twice");
        if (g < last) {
            CL_CHECK(holds(c, st->a.grad_in, L, idx, j, st->seed_bwd, g + 1, &ok));
            if (!ok)
                return fail(st, "backward of micro-batch %d on stage %d: %s", j,
                            "grad_in is not the next stage's gradient yet");
        }
        CL_CHECK(compute(c, st->tb / st->v));
        CL_CHECK(cl_fill_bytes(c, slot(st->a.grad_out, L, idx), L, st->seed_bwd, g, (size_t)j * L));
        st->bwd[idx] = 1;
        st->in_flight--;
    }
    if (st->nops < 2 * MAX_MB) {
        st->kind[st->nops] = code == LAB26_OP_BACKWARD;
        st->mb[st->nops] = j;
        st->chunk[st->nops] = k;
        st->start[st->nops] = t - st->t0;
        st->end[st->nops++] = cl_comm_time(c) - st->t0;
    }
    return CL_OK;
}
