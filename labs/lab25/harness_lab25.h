/* harness_lab25.h: lab 25's harness side: the reference codecs and the model (never in the
 * student's program). */
#ifndef LAB25_HARNESS_H
#define LAB25_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "lab25.h"

#define FEATURES 511 /* n = FEATURES + 1 (the bias) = 512 parameters */
#define NPARAM   (FEATURES + 1)
#define SAMPLES  256 /* per rank */

/* out[i] = decoded value i of msg (the formats of lab25.h). */
void lab25_ref_decode(lab25_method m, const unsigned char *msg, size_t n, size_t k, float *out);

/* Whether msg is the exact encoding of acc (ties in top-k and zeros in sign may go either
 * way). */
int lab25_encoding_ok(lab25_method m, const unsigned char *msg, const float *acc, size_t n,
                      size_t k);

typedef struct dataset {
    int ranks;
    float *x; /* ranks * SAMPLES rows of NPARAM (the last feature is 1: the bias) */
    float *y; /* 0 or 1 */
} dataset;

/* Features of unequal scales, labels from a hidden linear model with 10% flipped: ranks
 * shards of SAMPLES rows, all of them (every rank can compute any shard's loss). */
cl_result lab25_make_data(uint64_t seed, int ranks, dataset *d);

/* Mean gradient (g, NPARAM; NULL: none) and mean loss over ranks lo..hi-1's shards. */
double lab25_gradient(const dataset *d, const double *w, int lo, int hi, double *g);

#endif
