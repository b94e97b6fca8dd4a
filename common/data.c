/* data.c: deterministic inputs and exact expected values for reductions. */
#include "data.h"

#include <stdlib.h>
#include <string.h>

uint64_t cl_data_hash(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t cl_data_hash_bytes(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 14695981039346656037ULL; /* FNV-1a's offset basis and prime */
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

/* The input of rank for global element index i, as an exact small integer. */
double cl_data_value(uint64_t seed, cl_op op, int rank, size_t i)
{
    uint64_t h = cl_data_hash(seed ^ cl_data_hash(((uint64_t)rank << 40) ^ (uint64_t)i));
    switch (op) {
    case CL_SUM: return (double)(int)(h % 33) - 16.0;
    case CL_PROD:
        if ((int)(cl_data_hash(seed ^ i) % 32) == rank)
            return 2.0;
        return (h & 1) ? -1.0 : 1.0;
    case CL_MAX:
    case CL_MIN:
    default: return (double)(int64_t)(h % (2u << 20)) - (double)(1 << 20);
    }
}

unsigned char cl_data_raw_byte(uint64_t seed, int rank, size_t i)
{
    return (unsigned char)cl_data_hash(seed ^ ((uint64_t)rank << 48) ^ (uint64_t)i);
}

double cl_data_combine(double a, double b, cl_op op)
{
    switch (op) {
    case CL_SUM: return a + b;
    case CL_PROD: return a * b;
    case CL_MAX: return a > b ? a : b;
    case CL_MIN:
    default: return a < b ? a : b;
    }
}

void cl_data_store(void *buf, size_t k, cl_dtype t, double v)
{
    switch (t) {
    case CL_INT32: ((int32_t *)buf)[k] = (int32_t)v; break;
    case CL_INT64: ((int64_t *)buf)[k] = (int64_t)v; break;
    case CL_FLOAT32: ((float *)buf)[k] = (float)v; break;
    case CL_FLOAT64: ((double *)buf)[k] = v; break;
    default: break;
    }
}

static cl_result check_args(cl_dtype t, cl_op op, int nranks)
{
    if (cl_dtype_size(t) == 0 || (unsigned)op >= CL_OP_COUNT) {
        cl_set_error("bad data type %d or reduction %d", (int)t, (int)op);
        return CL_ERR_INVALID;
    }
    if (nranks < 1 || nranks > CL_DATA_MAX_RANKS) {
        cl_set_error("rank count %d outside 1..%d", nranks, CL_DATA_MAX_RANKS);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

cl_result cl_data_fill(void *buf, size_t first, size_t count, cl_dtype t, cl_op op, int rank,
                       uint64_t seed)
{
    CL_CHECK(check_args(t, op, rank + 1));
    for (size_t k = 0; k < count; k++)
        cl_data_store(buf, k, t, cl_data_value(seed, op, rank, first + k));
    return CL_OK;
}

cl_result cl_data_expected(void *buf, size_t first, size_t count, cl_dtype t, cl_op op, int nranks,
                           uint64_t seed)
{
    CL_CHECK(check_args(t, op, nranks));
    for (size_t k = 0; k < count; k++) {
        double v = cl_data_value(seed, op, 0, first + k);
        for (int r = 1; r < nranks; r++)
            v = cl_data_combine(v, cl_data_value(seed, op, r, first + k), op);
        cl_data_store(buf, k, t, v);
    }
    return CL_OK;
}

cl_result cl_data_check(const void *buf, size_t first, size_t count, cl_dtype t, cl_op op,
                        int nranks, uint64_t seed, size_t *nwrong)
{
    enum { BLOCK = 4096 };
    size_t esize = cl_dtype_size(t);
    CL_CHECK(check_args(t, op, nranks));
    unsigned char *expect = malloc(BLOCK * esize);
    if (!expect)
        return CL_ERR_NOMEM;
    *nwrong = 0;
    for (size_t done = 0; done < count; done += BLOCK) {
        size_t n = count - done < BLOCK ? count - done : BLOCK;
        cl_data_expected(expect, first + done, n, t, op, nranks, seed);
        const unsigned char *got = (const unsigned char *)buf + done * esize;
        for (size_t k = 0; k < n; k++)
            if (memcmp(got + k * esize, expect + k * esize, esize) != 0)
                (*nwrong)++;
    }
    free(expect);
    return CL_OK;
}

cl_result cl_data_poison(void *buf, size_t count, cl_dtype t)
{
    if (cl_dtype_size(t) == 0) {
        cl_set_error("bad data type %d", (int)t);
        return CL_ERR_INVALID;
    }
    /* 2^30 + 7 is outside every range the generator can reduce to. */
    for (size_t k = 0; k < count; k++)
        cl_data_store(buf, k, t, 1073741831.0);
    return CL_OK;
}
