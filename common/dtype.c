/* dtype.c: element sizes, names and the host reduction kernel. */
#include "dtype.h"

#include <stdint.h>
#include <string.h>

static const char *const dtype_names[CL_DTYPE_COUNT] = {"int32", "int64", "float", "double"};
static const char *const op_names[CL_OP_COUNT] = {"sum", "prod", "max", "min"};

size_t cl_dtype_size(cl_dtype t)
{
    switch (t) {
    case CL_INT32: return sizeof(int32_t);
    case CL_INT64: return sizeof(int64_t);
    case CL_FLOAT32: return sizeof(float);
    case CL_FLOAT64: return sizeof(double);
    default: return 0;
    }
}

const char *cl_dtype_name(cl_dtype t)
{
    return (unsigned)t < CL_DTYPE_COUNT ? dtype_names[t] : "?";
}

const char *cl_op_name(cl_op op) { return (unsigned)op < CL_OP_COUNT ? op_names[op] : "?"; }

cl_result cl_dtype_parse(const char *name, cl_dtype *out)
{
    for (int t = 0; t < CL_DTYPE_COUNT; t++) {
        if (strcmp(name, dtype_names[t]) == 0) {
            *out = (cl_dtype)t;
            return CL_OK;
        }
    }
    cl_set_error("unknown data type '%s' (int32, int64, float, double)", name);
    return CL_ERR_INVALID;
}

cl_result cl_op_parse(const char *name, cl_op *out)
{
    for (int op = 0; op < CL_OP_COUNT; op++) {
        if (strcmp(name, op_names[op]) == 0) {
            *out = (cl_op)op;
            return CL_OK;
        }
    }
    cl_set_error("unknown reduction '%s' (sum, prod, max, min)", name);
    return CL_ERR_INVALID;
}

/* One loop per (type, op); the macro keeps the eight loops identical. Integer
 * sums and products are computed in the unsigned type W, so that overflow wraps
 * (as MPI and NCCL do in practice) instead of being undefined behaviour. */
#define REDUCE_LOOP(T, EXPR)                                                                       \
    do {                                                                                           \
        T *a = inout;                                                                              \
        const T *b = in;                                                                           \
        for (size_t i = 0; i < count; i++) {                                                       \
            T x = a[i], y = b[i];                                                                  \
            a[i] = (EXPR);                                                                         \
        }                                                                                          \
    } while (0)

#define REDUCE_TYPE(T, W)                                                                          \
    switch (op) {                                                                                  \
    case CL_SUM: REDUCE_LOOP(T, (T)((W)x + (W)y)); return CL_OK;                                   \
    case CL_PROD: REDUCE_LOOP(T, (T)((W)x * (W)y)); return CL_OK;                                  \
    case CL_MAX: REDUCE_LOOP(T, x > y ? x : y); return CL_OK;                                      \
    case CL_MIN: REDUCE_LOOP(T, x < y ? x : y); return CL_OK;                                      \
    default: break;                                                                                \
    }

cl_result cl_reduce_host(void *inout, const void *in, size_t count, cl_dtype t, cl_op op)
{
    switch (t) {
    case CL_INT32: REDUCE_TYPE(int32_t, uint32_t); break;
    case CL_INT64: REDUCE_TYPE(int64_t, uint64_t); break;
    case CL_FLOAT32: REDUCE_TYPE(float, float); break;
    case CL_FLOAT64: REDUCE_TYPE(double, double); break;
    default: break;
    }
    cl_set_error("bad data type %d or reduction %d", (int)t, (int)op);
    return CL_ERR_INVALID;
}
