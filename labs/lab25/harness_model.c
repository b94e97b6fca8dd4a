/* harness_model.c: the seeded data set and logistic regression that lab 25 trains. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "harness_lab25.h"

static double uniform(uint64_t seed, uint64_t i)
{
    return (double)(cl_data_hash(seed ^ cl_data_hash(i)) >> 11) * 0x1.0p-53;
}

static double gauss(uint64_t seed, uint64_t i)
{
    double u = uniform(seed, 2 * i) + 0x1.0p-60, v = uniform(seed, 2 * i + 1);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* Features of unequal scales (a few dominate the gradient, as in real models),
 * labels from a hidden linear model with 10% of them flipped. */
cl_result lab25_make_data(uint64_t seed, int ranks, dataset *d)
{
    size_t rows = (size_t)ranks * SAMPLES;
    d->ranks = ranks;
    d->x = malloc(rows * NPARAM * sizeof *d->x);
    d->y = malloc(rows * sizeof *d->y);
    if (!d->x || !d->y) {
        cl_set_error("out of memory for the data set");
        return CL_ERR_NOMEM;
    }
    double w[NPARAM];
    for (int j = 0; j < NPARAM; j++)
        w[j] = gauss(seed + 1, (uint64_t)j);
    for (size_t r = 0; r < rows; r++) {
        float *x = d->x + r * NPARAM;
        double z = 0;
        for (int j = 0; j < FEATURES; j++) {
            x[j] = (float)(gauss(seed + 2, r * NPARAM + (uint64_t)j) * 3.0 / sqrt(1.0 + j));
            z += w[j] * x[j];
        }
        x[FEATURES] = 1.0f;
        z += w[FEATURES];
        int label = z > 0;
        if (uniform(seed + 3, r) < 0.1)
            label = !label;
        d->y[r] = (float)label;
    }
    return CL_OK;
}

/* Mean gradient (g, NPARAM) and mean loss over ranks lo..hi-1's shards. */
double lab25_gradient(const dataset *d, const double *w, int lo, int hi, double *g)
{
    double loss = 0;
    size_t rows = (size_t)(hi - lo) * SAMPLES;
    if (g)
        memset(g, 0, NPARAM * sizeof *g);
    for (size_t r = (size_t)lo * SAMPLES; r < (size_t)hi * SAMPLES; r++) {
        const float *x = d->x + r * NPARAM;
        double z = 0;
        for (int j = 0; j < NPARAM; j++)
            z += w[j] * x[j];
        double s = 1.0 / (1.0 + exp(-z)), margin = d->y[r] > 0.5 ? z : -z;
        loss += margin > 0 ? log1p(exp(-margin)) : -margin + log1p(exp(margin));
        if (g)
            for (int j = 0; j < NPARAM; j++)
                g[j] += (s - d->y[r]) * x[j];
    }
    if (g)
        for (int j = 0; j < NPARAM; j++)
            g[j] /= (double)rows;
    return loss / (double)rows;
}
