/* mlp.c: the model's arithmetic, given to the student (lab22.h). Sums run in a fixed
 * order, so two ranks with the same inputs get the same bits. */
#include <string.h>

#include "lab22.h"

void lab22_forward(const float *p, const float *x, float *y, int batch, int width, int act)
{
    const float *w = p, *b = p + (size_t)width * width;
    for (int r = 0; r < batch; r++) {
        float *yr = y + (size_t)r * width;
        memcpy(yr, b, (size_t)width * sizeof *yr);
        for (int i = 0; i < width; i++) {
            float xi = x[(size_t)r * width + i];
            for (int j = 0; j < width; j++)
                yr[j] += xi * w[(size_t)i * width + j];
        }
        if (act) /* softsign: smooth, so float and double runs never take different branches */
            for (int j = 0; j < width; j++)
                yr[j] = yr[j] / (1 + (yr[j] < 0 ? -yr[j] : yr[j]));
    }
}

void lab22_loss_grad(const float *y, const float *t, float *g, int batch, int width)
{
    for (size_t i = 0; i < (size_t)batch * width; i++)
        g[i] = (y[i] - t[i]) / (float)batch;
}

void lab22_backward(const float *p, const float *x, const float *g, float *grad, float *gin,
                    int batch, int width)
{
    const float *w = p;
    float *gw = grad, *gb = grad + (size_t)width * width;
    memset(grad, 0, LAB22_LAYER(width) * sizeof *grad);
    for (int r = 0; r < batch; r++) {
        const float *xr = x + (size_t)r * width, *gr = g + (size_t)r * width;
        for (int i = 0; i < width; i++)
            for (int j = 0; j < width; j++)
                gw[(size_t)i * width + j] += xr[i] * gr[j];
        for (int j = 0; j < width; j++)
            gb[j] += gr[j];
    }
    if (!gin)
        return;
    for (int r = 0; r < batch; r++) {
        const float *xr = x + (size_t)r * width, *gr = g + (size_t)r * width;
        for (int i = 0; i < width; i++) {
            float s = 0;
            for (int j = 0; j < width; j++)
                s += gr[j] * w[(size_t)i * width + j];
            float d = 1 - (xr[i] < 0 ? -xr[i] : xr[i]); /* softsign'(z) = (1 - |y|)^2 */
            gin[(size_t)r * width + i] = s * d * d;
        }
    }
}

void lab22_sgd(float *p, float *m, const float *g, size_t n, float lr, float momentum)
{
    for (size_t i = 0; i < n; i++) {
        m[i] = momentum * m[i] + g[i];
        p[i] -= lr * m[i];
    }
}

void lab22_scale(float *v, size_t n, float s)
{
    for (size_t i = 0; i < n; i++)
        v[i] *= s;
}
