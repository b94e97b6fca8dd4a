/* dtype.h: element types and reduction operators, and the host reduction. */
#ifndef COMMLAB_DTYPE_H
#define COMMLAB_DTYPE_H

#include <stddef.h>

#include "result.h"

typedef enum cl_dtype { CL_INT32, CL_INT64, CL_FLOAT32, CL_FLOAT64, CL_DTYPE_COUNT } cl_dtype;
typedef enum cl_op { CL_SUM, CL_PROD, CL_MAX, CL_MIN, CL_OP_COUNT } cl_op;

/* Size of one element in bytes; 0 for an unknown type. */
size_t cl_dtype_size(cl_dtype t);

/* "int32", "float", ... as nccl-tests names them; "?" if unknown. */
const char *cl_dtype_name(cl_dtype t);
const char *cl_op_name(cl_op op);

/* Parse the names above; CL_ERR_INVALID if unknown. */
cl_result cl_dtype_parse(const char *name, cl_dtype *out);
cl_result cl_op_parse(const char *name, cl_op *out);

/* inout[i] = inout[i] (op) in[i] for i < count, on host memory. */
cl_result cl_reduce_host(void *inout, const void *in, size_t count, cl_dtype t, cl_op op);

#endif /* COMMLAB_DTYPE_H */
