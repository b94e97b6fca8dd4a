/* harness_exchange.c: one step of one method of lab 25 on one rank: the rank's gradient, the
 * student's exchange, then every check of what came back (the message is the exact encoding
 * of gradient + residual, the residual is what it did not carry, the result is the mean of
 * every rank's decoded message, the wire carried p - 1 messages each way).
 */
#include <math.h>
#include <string.h>

#include "harness/harness.h"
#include "harness_lab25.h"

cl_result one_step(cl_comm *c, const method *me, const dataset *d, const double *w, buffers *b,
                   int64_t bad[NBAD], double *mean, double *sent, cl_call_result *res)
{
    int rank = cl_comm_rank(c), p = cl_comm_size(c);
    size_t n = NPARAM, bytes = lab25_message_bytes(me->m, n, me->k);
    double g[NPARAM];
    float acc[NPARAM], dec[NPARAM];
    lab25_gradient(d, w, rank, rank + 1, g);
    for (size_t i = 0; i < n; i++) {
        b->grad[i] = (float)g[i];
        acc[i] = b->grad[i] + b->residual[i];
    }
    memset(b->msg, 0, bytes);
    lab25_exchange_args a = {.method = me->m,
                             .n = n,
                             .k = me->k,
                             .grad = b->grad,
                             .residual = b->residual,
                             .msg = b->msg,
                             .gathered = b->gathered,
                             .out = b->out};
    CL_CHECK(cl_student_run(c, "exchange", &a, sizeof a, CL_ALLOW_P2P | CL_ALLOW_LOCAL, res));
    memset(bad, 0, NBAD * sizeof *bad);
    bad[BAD_CALL] = res->status != CL_OK;
    bad[BAD_ENCODING] = !lab25_encoding_ok(me->m, b->msg, acc, n, me->k);
    lab25_ref_decode(me->m, b->msg, n, me->k, dec);
    float scale = 0;
    for (size_t i = 0; i < n; i++)
        scale = fmaxf(scale, fabsf(acc[i]));
    for (size_t i = 0; i < n; i++)
        if (!(fabsf(b->residual[i] - (acc[i] - dec[i])) <= 1e-5f * scale + 1e-30f)) {
            bad[BAD_RESIDUAL] = 1;
            break;
        }
    /* the harness's own gather of every rank's message */
    memset(b->mine, 0, b->words * 4);
    memcpy(b->mine, b->msg, bytes);
    cl_coll_args ga = {
        .sendbuf = b->mine, .recvbuf = b->all, .count = b->words * (size_t)p, .dtype = CL_INT32};
    CL_CHECK(cl_library_coll(c, CL_COLL_ALLGATHER, &ga));
    double top = 0;
    for (size_t i = 0; i < n; i++)
        mean[i] = 0;
    for (int r = 0; r < p; r++) {
        lab25_ref_decode(me->m, b->all + (size_t)r * b->words * 4, n, me->k, dec);
        for (size_t i = 0; i < n; i++)
            mean[i] += dec[i] / (double)p;
    }
    for (size_t i = 0; i < n; i++)
        top = fmax(top, fabs(mean[i]));
    for (size_t i = 0; i < n; i++)
        if (!(fabs(b->out[i] - mean[i]) <= 1e-5 * top + 1e-30)) {
            bad[BAD_OUT] = 1;
            break;
        }
    size_t received;
    *sent = (double)cl_student_sent_bytes(c, &received);
    double want = (double)(p - 1) * (double)bytes;
    bad[BAD_WIRE] = *sent != want || (double)received != want;
    return CL_OK;
}
