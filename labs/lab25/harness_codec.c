/* harness_codec.c: the harness's own codecs, to check and decode the student's messages. */
#include <math.h>
#include <string.h>

#include "harness_lab25.h"

static uint16_t ref_bf16(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* The nearest binary16 by search over the neighbours of a truncation: slow and
 * plainly right (ties to the even code). */
static uint16_t ref_fp16(float x)
{
    if (isnan(x))
        return 0x7e00;
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    double a = fabs((double)x);
    if (a >= 65520.0)
        return sign | 0x7c00;
    uint16_t best = 0;
    double err = INFINITY;
    int lo = 0, hi = 0x7c00;
    while (hi - lo > 1) { /* largest code <= a */
        int mid = (lo + hi) / 2;
        if ((double)lab25_from_fp16((uint16_t)mid) <= a)
            lo = mid;
        else
            hi = mid;
    }
    for (int h = lo; h <= lo + 1 && h <= 0x7c00; h++) {
        double e = fabs((double)lab25_from_fp16((uint16_t)h) - a);
        if (e < err || (e == err && !(h & 1))) {
            err = e;
            best = (uint16_t)h;
        }
    }
    return sign | best;
}

/* out[i] = decoded value i of msg (the formats of lab25.h). */
void lab25_ref_decode(lab25_method m, const unsigned char *msg, size_t n, size_t k, float *out)
{
    memset(out, 0, n * sizeof *out);
    for (size_t i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, msg + 2 * i, m == LAB25_FP16 || m == LAB25_BF16 ? 2 : 0);
        if (m == LAB25_NONE)
            memcpy(&out[i], msg + 4 * i, 4);
        else if (m == LAB25_FP16)
            out[i] = lab25_from_fp16(h);
        else if (m == LAB25_BF16)
            out[i] = lab25_from_bf16(h);
    }
    if (m == LAB25_TOPK)
        for (size_t j = 0; j < k; j++) {
            uint32_t idx;
            float v;
            memcpy(&idx, msg + 4 * j, 4);
            memcpy(&v, msg + 4 * (k + j), 4);
            if (idx < n)
                out[idx] = v;
        }
    if (m == LAB25_SIGN) {
        float scale;
        memcpy(&scale, msg, 4);
        for (size_t i = 0; i < n; i++)
            out[i] = (msg[4 + i / 8] >> (i % 8)) & 1 ? scale : -scale;
    }
}

/* Whether msg is the exact encoding of acc (ties in top-k and zeros in sign
 * may go either way). */
int lab25_encoding_ok(lab25_method m, const unsigned char *msg, const float *acc, size_t n,
                      size_t k)
{
    if (m == LAB25_NONE)
        return memcmp(msg, acc, 4 * n) == 0;
    if (m == LAB25_FP16 || m == LAB25_BF16) {
        for (size_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, msg + 2 * i, 2);
            if (h != (m == LAB25_FP16 ? ref_fp16(acc[i]) : ref_bf16(acc[i])))
                return 0;
        }
        return 1;
    }
    if (m == LAB25_SIGN) {
        float scale;
        double sum = 0;
        memcpy(&scale, msg, 4);
        for (size_t i = 0; i < n; i++)
            sum += fabs((double)acc[i]);
        double want = sum / (double)n;
        if (!(fabs(scale - want) <= 1e-5 * want + 1e-30))
            return 0;
        for (size_t i = 0; i < n; i++) {
            int bit = (msg[4 + i / 8] >> (i % 8)) & 1;
            if ((acc[i] > 0 && !bit) || (acc[i] < 0 && bit))
                return 0;
        }
        return 1;
    }
    /* TOPK: k distinct indices with their values, none smaller than any left out */
    unsigned char taken[NPARAM] = {0};
    float smallest = INFINITY, largest_left = 0;
    for (size_t j = 0; j < k; j++) {
        uint32_t idx;
        float v;
        memcpy(&idx, msg + 4 * j, 4);
        memcpy(&v, msg + 4 * (k + j), 4);
        if (idx >= n || taken[idx] || memcmp(&v, &acc[idx], 4) != 0)
            return 0;
        taken[idx] = 1;
        smallest = fminf(smallest, fabsf(v));
    }
    for (size_t i = 0; i < n; i++)
        if (!taken[i])
            largest_left = fmaxf(largest_left, fabsf(acc[i]));
    return largest_left <= smallest;
}
