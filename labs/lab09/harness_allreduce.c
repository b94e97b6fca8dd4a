/* harness_allreduce.c: lab 09's allreduce mode: the student's AllReduce on the rings, every
 * type and reduction, checked element by element.
 */
#include <stdio.h>

#include "lab09_harness.h"

cl_result allreduce_mode(cl_run *run, cl_comm *c)
{
    static const size_t counts[] = {0, 1, 3, 7, 1000, 12345, 100003};
    int p = cl_comm_size(c), r = cl_comm_rank(c);
    uint64_t nslots = opt_u64(run, "nslots", 4), chunk = opt_u64(run, "chunk", 4104);
    if (p > 64) {
        cl_set_error("at most 64 ranks");
        return CL_ERR_INVALID;
    }
    CL_CHECK(rings_open(c, p, lab09_ring_bytes(nslots ? nslots : 1, chunk ? chunk : 1), nslots,
                        chunk, UINT64_MAX - 11));
    size_t maxc = counts[sizeof counts / sizeof counts[0] - 1];
    allreduce_args a = {.L = rings, .scratch_bytes = (maxc / (size_t)p + 1) * 8};
    CL_CHECK(cl_mem_alloc(c, maxc * 8, &a.buf));
    CL_CHECK(cl_mem_alloc(c, a.scratch_bytes, &a.scratch));
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        for (int ti = 0; ti < CL_DTYPE_COUNT; ti++)
            for (int oi = 0; oi < CL_OP_COUNT; oi++) {
                if (counts[i] < 1000 && oi != (int)(i % CL_OP_COUNT))
                    continue; /* the short vectors once each, the long ones every way */
                uint64_t seed;
                size_t wrong = 0;
                cl_call_result res;
                a.count = counts[i], a.t = (cl_dtype)ti, a.op = (cl_op)oi;
                CL_CHECK(cl_fresh_seed(run, c, &seed));
                CL_CHECK(cl_fill(c, a.buf, a.count, a.t, a.op, seed, r, 0));
                CL_CHECK(cl_barrier(c));
                CL_CHECK(cl_student_run(c, "allreduce", &a, sizeof a, CL_ALLOW_LOCAL, &res));
                if (res.status == CL_OK)
                    CL_CHECK(cl_count_wrong(c, a.buf, a.count, a.t, a.op, seed, 0, p, 0, &wrong));
                int64_t v[2] = {(int64_t)wrong, res.status != CL_OK};
                CL_CHECK(cl_agree(c, CL_SUM, v, 2));
                if (v[1] && res.status == CL_OK) {
                    res.status = CL_ERR_INVALID;
                    snprintf(res.error, sizeof res.error, "failed on another rank");
                }
                cl_row *row = cl_row_begin(run, c);
                cl_col_int(row, "count", (long long)a.count);
                cl_col_str(row, "type", cl_dtype_name(a.t));
                cl_col_str(row, "redop", cl_op_name(a.op));
                cl_col_int(row, "#wrong", v[0]);
                cl_col_call(row, &res);
                cl_row_end(row);
            }
    CL_CHECK(cl_mem_free(c, a.buf));
    return cl_mem_free(c, a.scratch);
}
