/* check.c: filling buffers with inputs and counting wrong outputs, on every backend.
 *
 * "cpu" buffers are host memory: the harness reads them directly. "gpu"
 * buffers go through a host copy. "sim" buffers hold descriptions
 * (sim/sim_data.h), checked without materialising the data. The values are
 * those of data.h, so every backend checks the same bits.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "data.h"
#include "p2p_sim.h"
#include "run.h"

enum { HOST, DEVICE, SIMULATED };

static int where(const cl_comm *c)
{
    const char *b = cl_comm_backend(c);
    return strcmp(b, "sim") == 0 ? SIMULATED : strcmp(b, "gpu") == 0 ? DEVICE : HOST;
}

cl_result cl_fresh_seed(cl_run *run, cl_comm *comm, uint64_t *seed)
{
    uint64_t mine;
    if (run->o.seed_given) {
        mine = cl_data_hash(run->o.seed + 0x9e37 * ++run->draws);
    } else if (getrandom(&mine, sizeof mine, 0) != (ssize_t)sizeof mine) {
        cl_set_error("no random numbers from the kernel");
        return CL_ERR_IO;
    }
    int64_t v = (int64_t)(mine >> 2); /* agree on a positive value */
    CL_CHECK(cl_agree(comm, CL_MAX, &v, 1));
    *seed = (uint64_t)v;
    return CL_OK;
}

/* A host copy of a device buffer's range, or the range itself on "cpu". */
static cl_result host_view(cl_comm *c, const void *buf, size_t bytes, void **view, int *copied)
{
    *copied = 0;
    if (where(c) == HOST) {
        *view = (void *)buf;
        return CL_OK;
    }
    *view = malloc(bytes ? bytes : 1);
    if (!*view)
        return CL_ERR_NOMEM;
    *copied = 1;
    return cl_mem_download(c, *view, buf, bytes);
}

cl_result cl_fill(cl_comm *c, void *buf, size_t count, cl_dtype t, cl_op op, uint64_t seed,
                  int owner, size_t first)
{
    size_t es = cl_dtype_size(t);
    if (where(c) == SIMULATED)
        return cl_sim_fill(c, buf, count, (int)t, op, seed, owner, (int64_t)first);
    if (where(c) == HOST)
        return cl_data_fill(buf, first, count, t, op, owner, seed);
    void *h = malloc(count * es + 1);
    if (!h)
        return CL_ERR_NOMEM;
    cl_result rc = cl_data_fill(h, first, count, t, op, owner, seed);
    if (rc == CL_OK)
        rc = cl_mem_upload(c, buf, h, count * es);
    free(h);
    return rc;
}

cl_result cl_fill_bytes(cl_comm *c, void *buf, size_t bytes, uint64_t seed, int owner, size_t first)
{
    if (where(c) == SIMULATED)
        return cl_sim_fill(c, buf, bytes, -1, CL_SUM, seed, owner, (int64_t)first);
    unsigned char *h = where(c) == HOST ? buf : malloc(bytes + 1);
    if (!h)
        return CL_ERR_NOMEM;
    for (size_t i = 0; i < bytes; i++)
        h[i] = cl_data_raw_byte(seed, owner, first + i);
    if (where(c) == HOST)
        return CL_OK;
    cl_result rc = cl_mem_upload(c, buf, h, bytes);
    free(h);
    return rc;
}

cl_result cl_poison(cl_comm *c, void *buf, size_t bytes, cl_dtype t)
{
    if (where(c) == SIMULATED)
        return cl_sim_poison(c, buf, bytes);
    size_t es = cl_dtype_size(t), n = es ? bytes / es : 0;
    unsigned char *h = where(c) == HOST ? buf : malloc(bytes + 1);
    if (!h)
        return CL_ERR_NOMEM;
    memset(h, 0xab, bytes);
    cl_result rc = es ? cl_data_poison(h, n, t) : CL_OK;
    if (rc == CL_OK && where(c) != HOST)
        rc = cl_mem_upload(c, buf, h, bytes);
    if (where(c) != HOST)
        free(h);
    return rc;
}

cl_result cl_count_wrong(cl_comm *c, const void *buf, size_t count, cl_dtype t, cl_op op,
                         uint64_t seed, int lo, int hi, size_t first, size_t *wrong)
{
    *wrong = 0;
    if (where(c) == SIMULATED)
        return cl_sim_wrong(c, buf, count, (int)t, op, seed, lo, hi, (int64_t)first, wrong);
    size_t es = cl_dtype_size(t);
    void *h;
    int copied;
    CL_CHECK(host_view(c, buf, count * es, &h, &copied));
    unsigned char want[8];
    for (size_t k = 0; k < count; k++) {
        double v = cl_data_value(seed, op, lo, first + k);
        for (int r = lo + 1; r < hi; r++)
            v = cl_data_combine(v, cl_data_value(seed, op, r, first + k), op);
        cl_data_store(want, 0, t, v);
        if (memcmp((char *)h + k * es, want, es) != 0)
            (*wrong)++;
    }
    if (copied)
        free(h);
    return CL_OK;
}

cl_result cl_count_wrong_bytes(cl_comm *c, const void *buf, size_t bytes, uint64_t seed, int owner,
                               size_t first, size_t *wrong)
{
    *wrong = 0;
    if (where(c) == SIMULATED)
        return cl_sim_wrong(c, buf, bytes, -1, CL_SUM, seed, owner, owner + 1, (int64_t)first,
                            wrong);
    void *h;
    int copied;
    CL_CHECK(host_view(c, buf, bytes, &h, &copied));
    for (size_t i = 0; i < bytes; i++)
        *wrong += ((unsigned char *)h)[i] != cl_data_raw_byte(seed, owner, first + i);
    if (copied)
        free(h);
    return CL_OK;
}

cl_result cl_count_unpoisoned(cl_comm *c, const void *buf, size_t count, cl_dtype t, size_t *n)
{
    size_t es = cl_dtype_size(t);
    *n = 0;
    if (where(c) == SIMULATED) {
        size_t bytes;
        CL_CHECK(cl_sim_touched(c, buf, count * es, &bytes));
        *n = (bytes + es - 1) / es;
        return CL_OK;
    }
    void *h;
    int copied;
    CL_CHECK(host_view(c, buf, count * es, &h, &copied));
    unsigned char poison[8];
    cl_data_poison(poison, 1, t);
    for (size_t k = 0; k < count; k++)
        *n += memcmp((char *)h + k * es, poison, es) != 0;
    if (copied)
        free(h);
    return CL_OK;
}

cl_result cl_count_far(cl_comm *c, const void *buf, const double *expected, size_t count,
                       cl_dtype t, double rel, double abs, size_t *far)
{
    *far = 0;
    if (t != CL_FLOAT32 && t != CL_FLOAT64) {
        cl_set_error("the tolerant check is for float and double");
        return CL_ERR_INVALID;
    }
    size_t es = cl_dtype_size(t);
    void *h;
    int copied;
    CL_CHECK(host_view(c, buf, count * es, &h, &copied));
    for (size_t k = 0; k < count; k++) {
        double got = t == CL_FLOAT32 ? ((float *)h)[k] : ((double *)h)[k];
        double tol = fmax(rel * fabs(expected[k]), abs);
        if (!(fabs(got - expected[k]) <= tol)) /* NaN counts as far */
            (*far)++;
    }
    if (copied)
        free(h);
    return CL_OK;
}

/* Agreement on doubles through cl_agree's integers: each value's bits, which
 * order like the values for the non-negative numbers the harness agrees on. */
static cl_result agree_doubles(cl_comm *comm, double *v, int n, cl_op op)
{
    for (int at = 0; at < n; at += CL_AGREE_MAX) {
        int k = n - at < CL_AGREE_MAX ? n - at : CL_AGREE_MAX;
        int64_t x[CL_AGREE_MAX];
        if (op == CL_MAX) {
            for (int i = 0; i < k; i++) {
                double d = v[at + i] > 0 ? v[at + i] : 0; /* NaN and negatives read as 0 */
                memcpy(&x[i], &d, sizeof d);
            }
        } else {
            for (int i = 0; i < k; i++)
                x[i] = (int64_t)llround(v[at + i]);
        }
        CL_CHECK(cl_agree(comm, op, x, k));
        for (int i = 0; i < k; i++) {
            if (op == CL_MAX)
                memcpy(&v[at + i], &x[i], sizeof x[i]);
            else
                v[at + i] = (double)x[i];
        }
    }
    return CL_OK;
}

cl_result cl_agree_max(cl_comm *comm, double *v, int n)
{
    return agree_doubles(comm, v, n, CL_MAX);
}

cl_result cl_agree_sum(cl_comm *comm, double *v, int n)
{
    return agree_doubles(comm, v, n, CL_SUM);
}

/* A sum in which every rank contributes only its own slot, CL_AGREE_MAX slots at a time. */
cl_result cl_agree_gather(cl_comm *comm, int64_t mine, int64_t *all)
{
    int p = cl_comm_size(comm), me = cl_comm_rank(comm);
    for (int at = 0; at < p; at += CL_AGREE_MAX) {
        int k = p - at < CL_AGREE_MAX ? p - at : CL_AGREE_MAX;
        int64_t x[CL_AGREE_MAX] = {0};
        if (me >= at && me < at + k)
            x[me - at] = mine;
        CL_CHECK(cl_agree(comm, CL_SUM, x, k));
        memcpy(all + at, x, (size_t)k * sizeof *x);
    }
    return CL_OK;
}
