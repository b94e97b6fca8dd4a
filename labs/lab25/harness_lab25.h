/* harness_lab25.h: lab 25's harness side (never in the student's program), shared by
 * driver.c and its harness_*.c files.
 *
 * harness_codec.c     the reference codecs, to check and decode the student's messages
 * harness_model.c     the seeded data set and the logistic regression it trains
 * harness_exchange.c  one step of one method on one rank: the student's exchange, checked
 * harness_train.c     the train mode: every method trained, beside uncompressed training
 */
#ifndef LAB25_HARNESS_H
#define LAB25_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "harness/harness.h"
#include "lab25.h"

#define FEATURES 511 /* n = FEATURES + 1 (the bias) = 512 parameters */
#define NPARAM   (FEATURES + 1)
#define SAMPLES  256 /* per rank */

/* --- the codecs (harness_codec.c) --- */

/* out[i] = decoded value i of msg (the formats of lab25.h). */
void lab25_ref_decode(lab25_method m, const unsigned char *msg, size_t n, size_t k, float *out);

/* Whether msg is the exact encoding of acc (ties in top-k and zeros in sign may go either
 * way). */
int lab25_encoding_ok(lab25_method m, const unsigned char *msg, const float *acc, size_t n,
                      size_t k);

/* --- the data set and the model (harness_model.c) --- */

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

/* --- one step (harness_exchange.c) --- */

typedef struct method {
    char name[32];
    lab25_method m;
    size_t k;
} method;

enum { BAD_CALL, BAD_ENCODING, BAD_RESIDUAL, BAD_OUT, BAD_WIRE, NBAD };

typedef struct buffers {
    float *grad, *residual, *out;
    unsigned char *msg, *gathered, *mine, *all; /* mine, all: the harness's gather */
    size_t words;                               /* int32 words of a padded message */
} buffers;

/* One step of one method on this rank: the call, then every check. bad[] counts
 * what went wrong; mean gets the harness's decoded mean (the update). */
cl_result one_step(cl_comm *c, const method *me, const dataset *d, const double *w, buffers *b,
                   int64_t bad[NBAD], double *mean, double *sent, cl_call_result *res);

/* --- the mode (harness_train.c) --- */

cl_result train(cl_run *run, cl_comm *c);

#endif
