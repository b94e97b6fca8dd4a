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
    /* BEGIN SOLUTION */
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u)
        return sign | 0x7e00; /* NaN */
    if (a >= 0x477ff000u)
        return sign | 0x7c00; /* 65520 and above round to infinity */
    if (a < 0x38800000u) {    /* below 2^-14: a subnormal half, in units of 2^-24 */
        float f;
        memcpy(&f, &a, sizeof f);
        return sign | (uint16_t)rintf(f * 16777216.0f); /* rintf: nearest, ties to even */
    }
    a += 0xfffu + ((a >> 13) & 1u); /* round the 13 dropped bits, ties to even */
    return sign | (uint16_t)((a - (112u << 23)) >> 13);
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab25) 1: float -> binary16, round to nearest, ties to even
    //   (overflow to infinity, subnormal halves below 2^-14).
    (void)x;
    return 0;
    END SKELETON */
}

uint16_t lab25_to_bf16(float x)
{
    /* BEGIN SOLUTION */
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40); /* keep NaN a NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab25) 2: float -> bfloat16 (the high 16 bits), round to nearest even.
    (void)x;
    return 0;
    END SKELETON */
}

/* BEGIN SOLUTION */
/* How many of x[0..n) have a magnitude above the float whose bits are t. */
static size_t count_above(const float *x, size_t n, uint32_t t)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++) {
        float a = fabsf(x[i]);
        uint32_t b;
        memcpy(&b, &a, sizeof b);
        c += b > t;
    }
    return c;
}

/* The k entries of largest magnitude: the threshold is found by bisection on
 * the bit pattern of |x| (ordered as the values are), with no extra memory. */
static void encode_topk(const float *x, size_t n, size_t k, uint32_t *idx, float *val)
{
    uint32_t lo = 0, hi = 0x7f800000u; /* count_above(hi) = 0 <= k */
    while (lo < hi) {                  /* smallest t with count_above(t) < k... */
        uint32_t mid = lo + (hi - lo) / 2;
        if (count_above(x, n, mid) < k)
            hi = mid;
        else
            lo = mid + 1;
    }
    /* every entry above lo is in; entries equal to lo fill the rest */
    size_t j = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n && j < k; i++) {
            float a = fabsf(x[i]);
            uint32_t b;
            memcpy(&b, &a, sizeof b);
            if (pass == 0 ? b > lo : b == lo) {
                idx[j] = (uint32_t)i;
                val[j++] = x[i];
            }
        }
}
/* END SOLUTION */

void lab25_encode(lab25_method m, const float *x, size_t n, size_t k, void *msg)
{
    /* BEGIN SOLUTION */
    uint16_t *h = msg;
    switch (m) {
    case LAB25_NONE: memcpy(msg, x, 4 * n); break;
    case LAB25_FP16:
        for (size_t i = 0; i < n; i++)
            h[i] = lab25_to_fp16(x[i]);
        break;
    case LAB25_BF16:
        for (size_t i = 0; i < n; i++)
            h[i] = lab25_to_bf16(x[i]);
        break;
    case LAB25_TOPK: encode_topk(x, n, k, msg, (float *)msg + k); break;
    case LAB25_SIGN: {
        double sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += fabsf(x[i]);
        float scale = (float)(sum / (double)n);
        unsigned char *bits = (unsigned char *)msg + 4;
        memcpy(msg, &scale, 4);
        memset(bits, 0, (n + 7) / 8);
        for (size_t i = 0; i < n; i++)
            if (x[i] >= 0)
                bits[i / 8] |= (unsigned char)(1u << (i % 8));
        break;
    }
    }
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab25) 3: encode x with method m in the format of lab25.h.
    (void)m, (void)x, (void)n, (void)k, (void)msg;
    END SKELETON */
}

void lab25_decode_add(lab25_method m, const void *msg, size_t n, size_t k, float weight, float *out)
{
    /* BEGIN SOLUTION */
    const uint16_t *h = msg;
    switch (m) {
    case LAB25_NONE: {
        const float *v = msg;
        for (size_t i = 0; i < n; i++)
            out[i] += weight * v[i];
        break;
    }
    case LAB25_FP16:
        for (size_t i = 0; i < n; i++)
            out[i] += weight * lab25_from_fp16(h[i]);
        break;
    case LAB25_BF16:
        for (size_t i = 0; i < n; i++)
            out[i] += weight * lab25_from_bf16(h[i]);
        break;
    case LAB25_TOPK: {
        const uint32_t *idx = msg;
        const float *val = (const float *)msg + k;
        for (size_t j = 0; j < k; j++)
            if (idx[j] < n)
                out[idx[j]] += weight * val[j];
        break;
    }
    case LAB25_SIGN: {
        float scale;
        memcpy(&scale, msg, 4);
        const unsigned char *bits = (const unsigned char *)msg + 4;
        for (size_t i = 0; i < n; i++)
            out[i] += weight * ((bits[i / 8] >> (i % 8)) & 1 ? scale : -scale);
        break;
    }
    }
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab25) 4: out += weight * decode(msg).
    (void)m, (void)msg, (void)n, (void)k, (void)weight, (void)out;
    END SKELETON */
}

cl_result lab25_exchange(cl_comm *comm, const lab25_exchange_args *a)
{
    /* BEGIN SOLUTION */
    int p = cl_comm_size(comm), rank = cl_comm_rank(comm);
    lab25_method m = (lab25_method)a->method;
    size_t n = a->n, bytes = lab25_message_bytes(m, n, a->k);
    unsigned char *all = a->gathered;
    /* error feedback: compress what is owed too, and remember what was not sent */
    for (size_t i = 0; i < n; i++)
        a->residual[i] += a->grad[i];
    lab25_encode(m, a->residual, n, a->k, a->msg);
    lab25_decode_add(m, a->msg, n, a->k, -1.0f, a->residual);
    /* every rank needs every message (compressed messages do not add up): p - 1
     * rounds, each sending this rank's message one rank further */
    memcpy(all + (size_t)rank * bytes, a->msg, bytes);
    for (int s = 1; s < p; s++) {
        int to = (rank + s) % p, from = (rank - s + p) % p;
        CL_CHECK(cl_sendrecv(comm, a->msg, bytes, to, all + (size_t)from * bytes, bytes, from));
    }
    memset(a->out, 0, n * sizeof *a->out);
    for (int r = 0; r < p; r++)
        lab25_decode_add(m, all + (size_t)r * bytes, n, a->k, 1.0f / (float)p, a->out);
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab25) 5: error feedback, encode, exchange the messages, decode their mean.
    (void)comm, (void)a;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
