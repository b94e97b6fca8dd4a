/* lab25.c: lab 25, gradient compression with error feedback.
 *
 * You write the compressors of the handout (FP16/BF16 casting, top-k, scaled
 * sign), their decoders, and the compressed exchange of one data-parallel
 * step with error feedback. Read labs/lab25/README.md first; the TODOs below
 * are in the order of its sections. Build with `make lab25`, grade with
 * `./grade lab25`. The harness decodes every message you send and checks it,
 * your residual and your result at every step; the bytes on the wire come from
 * its trace of your sends.
 */
#include <math.h>
#include <string.h>

#include "lab25.h"

uint16_t lab25_to_fp16(float x)
{
    // TODO(lab25) 1: float -> binary16, round to nearest, ties to even
    //   (overflow to infinity, subnormal halves below 2^-14).
    (void)x;
    return 0;
}

uint16_t lab25_to_bf16(float x)
{
    // TODO(lab25) 2: float -> bfloat16 (the high 16 bits), round to nearest even.
    (void)x;
    return 0;
}

void lab25_encode(lab25_method m, const float *x, size_t n, size_t k, void *msg)
{
    // TODO(lab25) 3: encode x with method m in the format of lab25.h.
    (void)m, (void)x, (void)n, (void)k, (void)msg;
}

void lab25_decode_add(lab25_method m, const void *msg, size_t n, size_t k, float weight, float *out)
{
    // TODO(lab25) 4: out += weight * decode(msg).
    (void)m, (void)msg, (void)n, (void)k, (void)weight, (void)out;
}

cl_result lab25_exchange(cl_comm *comm, const lab25_exchange_args *a)
{
    // TODO(lab25) 5: error feedback, encode, exchange the messages, decode their mean.
    (void)comm, (void)a;
    return CL_ERR_NOT_IMPLEMENTED;
}
