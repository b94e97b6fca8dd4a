/* kernels.c: lab 23's given code: the arithmetic of the MLP block on host memory.
 *
 * What a GPU's kernels do in Megatron-LM (fused LayerNorm, GEMMs, bias-GeLU,
 * bias-dropout-add), written plainly. Buffers of the cpu backend are host
 * memory, so these read and write them directly.
 */
#include <math.h>
#include <string.h>

#include "lab23.h"

#define LN_EPS 1e-5f

void lab23_layernorm(const float *x, const float *gamma, const float *beta, int rows, int h,
                     float *z)
{
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * h;
        float *zr = z + (size_t)r * h;
        double mean = 0, var = 0;
        for (int j = 0; j < h; j++)
            mean += xr[j];
        mean /= h;
        for (int j = 0; j < h; j++)
            var += (xr[j] - mean) * (xr[j] - mean);
        float rstd = (float)(1.0 / sqrt(var / h + LN_EPS));
        for (int j = 0; j < h; j++)
            zr[j] = (float)(xr[j] - mean) * rstd * gamma[j] + beta[j];
    }
}

void lab23_layernorm_backward(const float *x, const float *gamma, const float *dz, int rows, int h,
                              float *dx, float *dgamma, float *dbeta)
{
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * h, *dzr = dz + (size_t)r * h;
        float *dxr = dx + (size_t)r * h;
        double mean = 0, var = 0;
        for (int j = 0; j < h; j++)
            mean += xr[j];
        mean /= h;
        for (int j = 0; j < h; j++)
            var += (xr[j] - mean) * (xr[j] - mean);
        double rstd = 1.0 / sqrt(var / h + LN_EPS);
        /* dxhat = dz * gamma; dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)) */
        double m1 = 0, m2 = 0;
        for (int j = 0; j < h; j++) {
            double xhat = (xr[j] - mean) * rstd, dxhat = (double)dzr[j] * gamma[j];
            m1 += dxhat;
            m2 += dxhat * xhat;
            dgamma[j] += (float)(dzr[j] * xhat);
            dbeta[j] += dzr[j];
        }
        m1 /= h, m2 /= h;
        for (int j = 0; j < h; j++) {
            double xhat = (xr[j] - mean) * rstd, dxhat = (double)dzr[j] * gamma[j];
            dxr[j] += (float)(rstd * (dxhat - m1 - xhat * m2));
        }
    }
}

/* The harness reports each call's count beside TP's: recomputation shows as more. */
static double matmul_macs;

double lab23_matmul_macs(void) { return matmul_macs; }

void lab23_matmul(int m, int n, int k, const float *a, int ta, const float *b, int tb, float *c,
                  int accumulate)
{
    matmul_macs += (double)m * n * k;
    if (!accumulate)
        memset(c, 0, (size_t)m * n * sizeof *c);
    for (int i = 0; i < m; i++) {
        float *ci = c + (size_t)i * n;
        for (int p = 0; p < k; p++) {
            float aip = ta ? a[(size_t)p * m + i] : a[(size_t)i * k + p];
            if (tb)
                for (int j = 0; j < n; j++)
                    ci[j] += aip * b[(size_t)j * k + p];
            else {
                const float *bp = b + (size_t)p * n;
                for (int j = 0; j < n; j++)
                    ci[j] += aip * bp[j];
            }
        }
    }
}

#define GELU_C 0.7978845608028654 /* sqrt(2 / pi) */

void lab23_gelu(const float *u, float *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double x = u[i];
        v[i] = (float)(0.5 * x * (1 + tanh(GELU_C * (x + 0.044715 * x * x * x))));
    }
}

void lab23_gelu_backward(const float *u, const float *dv, float *du, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double x = u[i], th = tanh(GELU_C * (x + 0.044715 * x * x * x));
        double d = 0.5 * (1 + th) + 0.5 * x * (1 - th * th) * GELU_C * (1 + 3 * 0.044715 * x * x);
        du[i] = (float)(dv[i] * d);
    }
}

void lab23_dropout_add(const float *o, const float *x, float *y, int rows, int h, long first_row,
                       float p, uint64_t seed)
{
    float scale = 1.0f / (1.0f - p);
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < h; j++) {
            size_t i = (size_t)r * h + j;
            y[i] = x[i] + (lab23_keep(seed, first_row + r, j, h, p) ? o[i] * scale : 0.0f);
        }
}

void lab23_dropout_backward(const float *dy, float *d_o, int rows, int h, long first_row, float p,
                            uint64_t seed)
{
    float scale = 1.0f / (1.0f - p);
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < h; j++) {
            size_t i = (size_t)r * h + j;
            d_o[i] = lab23_keep(seed, first_row + r, j, h, p) ? dy[i] * scale : 0.0f;
        }
}
