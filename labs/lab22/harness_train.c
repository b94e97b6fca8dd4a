/* harness_train.c: the harness's plain data-parallel run in double precision, its inputs,
 * and ZeRO's accounting of bytes and memory (Rajbhandari et al., SC 2020, sections 5 and 7). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lab22_harness.h"

static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A float in [-1, 1), the same for (seed, stream, i) on every rank. */
static float unit(uint64_t seed, uint64_t stream, uint64_t i)
{
    uint64_t z = mix(seed ^ mix(stream * 0x100000001b3ull + i));
    return (float)((double)(z >> 40) / (double)(1ull << 23) - 1.0);
}

void lab22_init(const lab22_model *m, uint64_t seed, int rank, float *params, float *x, float *t)
{
    size_t n = LAB22_LAYER(m->width), ww = (size_t)m->width * (size_t)m->width;
    size_t bx = (size_t)m->batch * (size_t)m->width;
    float a = (float)sqrt(3.0 / m->width); /* weights of variance 1/width */
    for (int l = 0; l < m->layers; l++)
        for (size_t i = 0; i < n; i++)
            params[(size_t)l * n + i] = (i < ww ? a : 0.1f) * unit(seed, 1, (size_t)l * n + i);
    for (size_t i = 0; i < bx; i++) {
        x[i] = unit(seed, 2 + 2 * (uint64_t)rank, i);
        t[i] = 0.5f * unit(seed, 3 + 2 * (uint64_t)rank, i);
    }
}

cl_result lab22_count_changed(cl_comm *c, const lab22_model *m, const float *params, const float *x,
                              const float *t, const float *host, size_t *changed)
{
    size_t psi = LAB22_LAYER(m->width) * (size_t)m->layers;
    size_t bx = (size_t)m->batch * (size_t)m->width;
    float *now = malloc((psi + 2 * bx) * sizeof *now);
    if (!now)
        return CL_ERR_NOMEM;
    cl_result rc = CL_OK;
    CL_TRY(cl_mem_download(c, now, params, psi * sizeof *now));
    CL_TRY(cl_mem_download(c, now + psi, x, bx * sizeof *now));
    CL_TRY(cl_mem_download(c, now + psi + bx, t, bx * sizeof *now));
    *changed = 0;
    for (size_t i = 0; i < psi + 2 * bx; i++)
        *changed += memcmp(&now[i], &host[i], sizeof *now) != 0;
done:
    free(now);
    return rc;
}

/* One rank's gradient, added into grad (every layer's block), in double precision. */
static void rank_gradient(const lab22_model *m, const double *p, const float *x0, const float *t,
                          double *acts, double *g, double *gin, double *grad)
{
    int w = m->width, b = m->batch, L = m->layers;
    size_t n = LAB22_LAYER(w), bx = (size_t)b * (size_t)w;
    for (size_t i = 0; i < bx; i++)
        acts[i] = x0[i];
    for (int l = 0; l < L; l++) {
        const double *W = p + (size_t)l * n, *bias = W + (size_t)w * w, *x = acts + l * bx;
        double *y = acts + (l + 1) * bx;
        for (int r = 0; r < b; r++)
            for (int j = 0; j < w; j++) {
                double s = bias[j];
                for (int i = 0; i < w; i++)
                    s += x[(size_t)r * w + i] * W[(size_t)i * w + j];
                y[(size_t)r * w + j] = l < L - 1 ? s / (1 + fabs(s)) : s;
            }
    }
    for (size_t i = 0; i < bx; i++)
        g[i] = (acts[L * bx + i] - t[i]) / b;
    for (int l = L - 1; l >= 0; l--) {
        const double *W = p + (size_t)l * n, *x = acts + l * bx;
        double *gw = grad + (size_t)l * n, *gb = gw + (size_t)w * w;
        for (int r = 0; r < b; r++)
            for (int j = 0; j < w; j++) {
                double gr = g[(size_t)r * w + j];
                gb[j] += gr;
                for (int i = 0; i < w; i++)
                    gw[(size_t)i * w + j] += x[(size_t)r * w + i] * gr;
            }
        if (l == 0)
            break;
        for (int r = 0; r < b; r++)
            for (int i = 0; i < w; i++) {
                double s = 0, d = 1 - fabs(x[(size_t)r * w + i]);
                for (int j = 0; j < w; j++)
                    s += g[(size_t)r * w + j] * W[(size_t)i * w + j];
                gin[(size_t)r * w + i] = s * d * d;
            }
        memcpy(g, gin, bx * sizeof *g);
    }
}

cl_result lab22_reference(const lab22_model *m, uint64_t seed, int ranks, double *want)
{
    size_t n = LAB22_LAYER(m->width), psi = n * (size_t)m->layers;
    size_t bx = (size_t)m->batch * (size_t)m->width;
    float *p0 = malloc(psi * sizeof *p0), *x = malloc(bx * sizeof *x), *t = malloc(bx * sizeof *t);
    double *mom = calloc(psi, sizeof *mom), *grad = malloc(psi * sizeof *grad);
    double *acts = malloc((size_t)(m->layers + 1) * bx * sizeof *acts);
    double *g = malloc(bx * sizeof *g), *gin = malloc(bx * sizeof *gin);
    cl_result rc = CL_OK;
    if (!p0 || !x || !t || !mom || !grad || !acts || !g || !gin) {
        rc = CL_ERR_NOMEM;
        goto done;
    }
    lab22_init(m, seed, 0, p0, x, t);
    for (size_t i = 0; i < psi; i++)
        want[i] = p0[i];
    for (int s = 0; s < m->steps; s++) {
        memset(grad, 0, psi * sizeof *grad);
        for (int r = 0; r < ranks; r++) {
            lab22_init(m, seed, r, p0, x, t);
            rank_gradient(m, want, x, t, acts, g, gin, grad);
        }
        for (size_t i = 0; i < psi; i++) {
            mom[i] = (double)m->momentum * mom[i] + grad[i] / ranks;
            want[i] -= (double)m->lr * mom[i];
        }
    }
done:
    free(p0);
    free(x);
    free(t);
    free(mom);
    free(grad);
    free(acts);
    free(g);
    free(gin);
    return rc;
}

size_t lab22_expected_sent(const lab22_model *m, int ranks, int stage)
{
    size_t shard = LAB22_LAYER(m->width) / (size_t)ranks * sizeof(float) * (size_t)m->layers;
    size_t per_step = (stage == 3 ? 3 : 2) * shard * (size_t)(ranks - 1);
    return per_step * (size_t)m->steps;
}

size_t lab22_states_bytes(const lab22_model *m, int ranks, int stage)
{
    size_t psi = LAB22_LAYER(m->width) * (size_t)m->layers, s = psi / (size_t)ranks;
    static const int full[4][3] = {{1, 1, 1}, {1, 1, 0}, {1, 0, 0}, {0, 0, 0}};
    size_t floats = 0;
    for (int i = 0; i < 3; i++) /* parameters, gradients, momentum */
        floats += full[stage][i] ? psi : s;
    return floats * sizeof(float);
}

size_t lab22_memory_bound(const lab22_model *m, int ranks, int stage)
{
    size_t bx = (size_t)m->batch * (size_t)m->width;
    /* Activations: every layer's output and two gradients of a layer's input. Working
     * buffers: one layer's gathered parameters, its full gradient and the ring's pieces. */
    size_t allowance = (size_t)(m->layers + 2) * bx + 3 * LAB22_LAYER(m->width);
    return lab22_states_bytes(m, ranks, stage) + allowance * sizeof(float);
}
