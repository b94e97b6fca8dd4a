/* harness_ref.c: lab 23's reference: the MLP block on one device, in double precision.
 *
 * Written independently of the kernels the student's program uses (kernels.c),
 * from the block's definition: Z = LayerNorm(X), O = GeLU(Z A) B,
 * Y = X + Dropout(O), and the gradients of every input and parameter for dY.
 * The harness compares each rank's results with the rows and columns of these
 * that the rank owns.
 */
#include "harness_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "lab23_mask.h"

#define LN_EPS 1e-5
#define GELU_C 0.7978845608028654 /* sqrt(2 / pi) */

/* n values uniform in [-scale, scale) from (seed, tag). */
static void draw(double *v, size_t n, uint64_t seed, uint64_t tag, double scale)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t x = cl_data_hash(seed ^ cl_data_hash(tag * 0x100000001b3ULL + i));
        v[i] = scale * ((double)(x >> 11) * 0x1.0p-52 - 1.0);
    }
}

/* c (m x n) = a (m x k) b (k x n), each optionally given transposed in memory. */
static void gemm(int m, int n, int k, const double *a, int ta, const double *b, int tb, double *c)
{
    memset(c, 0, (size_t)m * n * sizeof *c);
    for (int i = 0; i < m; i++) {
        double *ci = c + (size_t)i * n;
        for (int p = 0; p < k; p++) {
            double aip = ta ? a[(size_t)p * m + i] : a[(size_t)i * k + p];
            if (tb)
                for (int j = 0; j < n; j++)
                    ci[j] += aip * b[(size_t)j * k + p];
            else
                for (int j = 0; j < n; j++)
                    ci[j] += aip * b[(size_t)p * n + j];
        }
    }
}

static double gelu(double x) { return 0.5 * x * (1 + tanh(GELU_C * (x + 0.044715 * x * x * x))); }

static double gelu_grad(double x)
{
    double th = tanh(GELU_C * (x + 0.044715 * x * x * x));
    return 0.5 * (1 + th) + 0.5 * x * (1 - th * th) * GELU_C * (1 + 3 * 0.044715 * x * x);
}

void lab23_ref_free(lab23_ref *r)
{
    double **all[] = {&r->x, &r->gamma, &r->beta,   &r->a,     &r->b,  &r->dy,
                      &r->y, &r->dx,    &r->dgamma, &r->dbeta, &r->da, &r->db};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        free(*all[i]);
        *all[i] = NULL;
    }
}

cl_result lab23_ref_compute(lab23_ref *r, int rows, int h, int f, double p, uint64_t seed)
{
    memset(r, 0, sizeof *r);
    r->rows = rows, r->h = h, r->f = f, r->p = p;
    r->seed = cl_data_hash(seed ^ 0x6d61736bULL); /* the mask's own seed */
    size_t nx = (size_t)rows * h, nw = (size_t)h * f, nu = (size_t)rows * f;
    cl_result rc = CL_OK;
    double *z = malloc(nx * sizeof *z), *xhat = malloc(nx * sizeof *xhat),
           *rstd = malloc((size_t)rows * sizeof *rstd), *u = malloc(nu * sizeof *u),
           *v = malloc(nu * sizeof *v), *o = malloc(nx * sizeof *o),
           *d_o = malloc(nx * sizeof *d_o), *du = malloc(nu * sizeof *du),
           *dz = malloc(nx * sizeof *dz);
    r->x = malloc(nx * sizeof(double)), r->dy = malloc(nx * sizeof(double));
    r->gamma = malloc((size_t)h * sizeof(double)), r->beta = malloc((size_t)h * sizeof(double));
    r->a = malloc(nw * sizeof(double)), r->b = malloc(nw * sizeof(double));
    r->y = malloc(nx * sizeof(double)), r->dx = malloc(nx * sizeof(double));
    r->dgamma = calloc((size_t)h, sizeof(double)), r->dbeta = calloc((size_t)h, sizeof(double));
    r->da = malloc(nw * sizeof(double)), r->db = malloc(nw * sizeof(double));
    if (!z || !xhat || !rstd || !u || !v || !o || !d_o || !du || !dz || !r->x || !r->dy ||
        !r->gamma || !r->beta || !r->a || !r->b || !r->y || !r->dx || !r->dgamma || !r->dbeta ||
        !r->da || !r->db) {
        cl_set_error("no memory for the reference block");
        rc = CL_ERR_NOMEM;
        goto done;
    }
    draw(r->x, nx, seed, 1, 1.0);
    draw(r->gamma, (size_t)h, seed, 2, 0.5);
    for (int j = 0; j < h; j++)
        r->gamma[j] += 1.0;
    draw(r->beta, (size_t)h, seed, 3, 0.1);
    draw(r->a, nw, seed, 4, 1.7 / sqrt(h)); /* keeps U, and so GeLU's input, of order 1 */
    draw(r->b, nw, seed, 5, 1.7 / sqrt(f));
    draw(r->dy, nx, seed, 6, 1.0);

    /* forward */
    for (int i = 0; i < rows; i++) {
        const double *xr = r->x + (size_t)i * h;
        double mean = 0, var = 0;
        for (int j = 0; j < h; j++)
            mean += xr[j];
        mean /= h;
        for (int j = 0; j < h; j++)
            var += (xr[j] - mean) * (xr[j] - mean);
        rstd[i] = 1 / sqrt(var / h + LN_EPS);
        for (int j = 0; j < h; j++) {
            size_t k = (size_t)i * h + j;
            xhat[k] = (xr[j] - mean) * rstd[i];
            z[k] = xhat[k] * r->gamma[j] + r->beta[j];
        }
    }
    gemm(rows, f, h, z, 0, r->a, 0, u);
    for (size_t k = 0; k < nu; k++)
        v[k] = gelu(u[k]);
    gemm(rows, h, f, v, 0, r->b, 0, o);
    double scale = 1 / (1 - p);
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < h; j++) {
            size_t k = (size_t)i * h + j;
            int keep = lab23_keep(r->seed, i, j, h, (float)p);
            r->y[k] = r->x[k] + (keep ? o[k] * scale : 0);
            d_o[k] = keep ? r->dy[k] * scale : 0;
        }

    /* backward */
    gemm(f, h, rows, v, 1, d_o, 0, r->db);
    gemm(rows, f, h, d_o, 0, r->b, 1, du);
    for (size_t k = 0; k < nu; k++)
        du[k] *= gelu_grad(u[k]);
    gemm(h, f, rows, z, 1, du, 0, r->da);
    gemm(rows, h, f, du, 0, r->a, 1, dz);
    for (int i = 0; i < rows; i++) {
        double m1 = 0, m2 = 0;
        for (int j = 0; j < h; j++) {
            size_t k = (size_t)i * h + j;
            double g = dz[k] * r->gamma[j];
            m1 += g, m2 += g * xhat[k];
            r->dgamma[j] += dz[k] * xhat[k];
            r->dbeta[j] += dz[k];
        }
        m1 /= h, m2 /= h;
        for (int j = 0; j < h; j++) {
            size_t k = (size_t)i * h + j;
            r->dx[k] = r->dy[k] + rstd[i] * (dz[k] * r->gamma[j] - m1 - xhat[k] * m2);
        }
    }
done:
    free(z), free(xhat), free(rstd), free(u), free(v), free(o), free(d_o), free(du), free(dz);
    if (rc != CL_OK)
        lab23_ref_free(r);
    return rc;
}
