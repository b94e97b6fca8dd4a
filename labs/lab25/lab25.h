/* lab25.h: types and functions of lab 25 (gradient compression with error feedback).
 * The driver (driver.c) calls the functions you write in lab25.c. */
#ifndef COMMLAB_LAB25_H
#define COMMLAB_LAB25_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "commlab.h"

/* The compressors. Each turns n floats into a message with a fixed format
 * (the harness decodes what you send, so the formats are exact):
 *   NONE  n floats (4n bytes)
 *   FP16  n IEEE 754 binary16, rounded to nearest, ties to even (2n bytes)
 *   BF16  n bfloat16 (the high half of a float), rounded to nearest even (2n bytes)
 *   TOPK  k uint32 indices, then the k float values at them (8k bytes): the k
 *         entries of largest magnitude, any order, each index once
 *   SIGN  one float scale = (sum of |x_i|) / n, then ceil(n/8) bytes of bits:
 *         bit i (byte i/8, bit i%8, least significant first) is 1 when x_i >= 0;
 *         it decodes to +scale or -scale (4 + ceil(n/8) bytes) */
typedef enum lab25_method {
    LAB25_NONE,
    LAB25_FP16,
    LAB25_BF16,
    LAB25_TOPK,
    LAB25_SIGN
} lab25_method;

/* The size of a message of method m for n values (k for TOPK). */
static inline size_t lab25_message_bytes(lab25_method m, size_t n, size_t k)
{
    switch (m) {
    case LAB25_NONE: return 4 * n;
    case LAB25_FP16:
    case LAB25_BF16: return 2 * n;
    case LAB25_TOPK: return 8 * k;
    case LAB25_SIGN: return 4 + (n + 7) / 8;
    }
    return 0;
}

/* binary16 and bfloat16 to float (exact: every half value is a float). */
static inline float lab25_from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline float lab25_from_fp16(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff, u;
    if (e == 0x1f) {
        u = sign | 0x7f800000u | (m << 13); /* inf, NaN */
    } else if (e != 0) {
        u = sign | ((e + 112) << 23) | (m << 13); /* normal: rebias 15 -> 127 */
    } else if (m == 0) {
        u = sign; /* zero */
    } else {      /* subnormal: m * 2^-24 */
        float f = (float)m * 5.9604644775390625e-8f;
        return sign ? -f : f;
    }
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* --- what you write (lab25.c) ------------------------------------------------------------ */

/* x rounded to the nearest binary16 / bfloat16, ties to even; values beyond
 * binary16's range become infinity; NaN stays NaN. */
uint16_t lab25_to_fp16(float x);
uint16_t lab25_to_bf16(float x);

/* Encode x[0..n) with method m (k entries for TOPK) into msg
 * (lab25_message_bytes(m, n, k) bytes). */
void lab25_encode(lab25_method m, const float *x, size_t n, size_t k, void *msg);

/* out[i] += weight * decoded value i of msg, for i < n. */
void lab25_decode_add(lab25_method m, const void *msg, size_t n, size_t k, float weight,
                      float *out);

/* One compressed exchange of a data-parallel step, on every rank of comm.
 *   grad      this rank's gradient, n floats (read only)
 *   residual  your error-feedback memory, n floats: zero before the first step,
 *             kept by the harness between steps, never touched by it
 *   msg       this rank's message for this step (what you send)
 *   gathered  p * lab25_message_bytes(...) bytes: yours to use
 *   out       n floats: the mean over the ranks of their decoded messages
 * Error feedback: compress acc = grad + residual, and leave in residual
 * acc - decode(msg), what the message did not carry. */
typedef struct lab25_exchange_args {
    int method; /* lab25_method */
    size_t n, k;
    const float *grad;
    float *residual;
    void *msg;
    void *gathered;
    float *out;
} lab25_exchange_args;

cl_result lab25_exchange(cl_comm *comm, const lab25_exchange_args *a);

#endif /* COMMLAB_LAB25_H */
