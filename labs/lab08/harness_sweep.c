/* harness_sweep.c: lab 08's sweep mode: the library's AllReduce at each size, nccl-tests' way
 * (time per call, algbw and busbw, every output checked), under the NCCL_ALGO and
 * NCCL_PROTO of the environment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab08_harness.h"

/* --- ranks: the library's AllReduce, nccl-tests' way ------------------------------------------ */

#define MAX_SIZES 40

static cl_result sizes_of(cl_run *run, size_t *sizes, int *n)
{
    const cl_opts *o = cl_run_opts(run);
    const char *list = cl_opt(run, "sizes");
    *n = 0;
    if (list && *list) {
        char buf[512], *save = NULL;
        snprintf(buf, sizeof buf, "%s", list);
        for (char *t = strtok_r(buf, ",", &save); t && *n < MAX_SIZES;
             t = strtok_r(NULL, ",", &save))
            CL_CHECK(cl_parse_size(t, &sizes[(*n)++]));
    } else {
        for (size_t b = o->min_bytes; b <= o->max_bytes && *n < MAX_SIZES; b *= (size_t)o->factor)
            sizes[(*n)++] = b;
    }
    for (int i = 0; i < *n; i++)
        if (sizes[i] < sizeof(float)) {
            cl_set_error("size %zu: an AllReduce of floats needs at least 4 bytes", sizes[i]);
            return CL_ERR_INVALID;
        }
    return CL_OK;
}

/* Calls per sample: about 16 MiB of traffic, 5 to 200 calls. */
static int calls_for(size_t bytes)
{
    size_t k = ((size_t)16 << 20) / bytes;
    return k < 5 ? 5 : k > 200 ? 200 : (int)k;
}

cl_result sweep(cl_run *run, cl_comm *c)
{
    const cl_opts *o = cl_run_opts(run);
    size_t sizes[MAX_SIZES], biggest = 0;
    int n, p = cl_comm_size(c);
    CL_CHECK(sizes_of(run, sizes, &n));
    for (int i = 0; i < n; i++)
        biggest = sizes[i] > biggest ? sizes[i] : biggest;
    const char *algo = getenv("NCCL_ALGO"), *proto = getenv("NCCL_PROTO");
    cl_report_str(run, "NCCL_ALGO", algo ? algo : "");
    cl_report_str(run, "NCCL_PROTO", proto ? proto : "");
    cl_report_str(run, "units", "size in bytes per rank, time in us per call, GB/s");
    void *send = NULL, *recv = NULL;
    cl_result rc = CL_OK;
    CL_TRY(cl_mem_alloc(c, biggest, &send));
    CL_TRY(cl_mem_alloc(c, biggest, &recv));
    for (int i = 0; i < n; i++) {
        size_t count = sizes[i] / sizeof(float), wrong = 0;
        uint64_t seed;
        cl_coll_args a = {.sendbuf = send,
                          .recvbuf = recv,
                          .count = count,
                          .dtype = CL_FLOAT32,
                          .op = CL_SUM,
                          .root = 0};
        CL_TRY(cl_fresh_seed(run, c, &seed));
        CL_TRY(cl_fill(c, send, count, CL_FLOAT32, CL_SUM, seed, cl_comm_rank(c), 0));
        cl_result first = cl_library_coll(c, CL_COLL_ALLREDUCE, &a);
        if (first != CL_OK && i == 0 && (algo || proto)) {
            /* NCCL refuses a forced setting the machine cannot run (NVLS
             * without NVSwitch) instead of falling back. */
            cl_set_error("NCCL_ALGO=%s NCCL_PROTO=%s does not run here: %s", algo ? algo : "",
                         proto ? proto : "", cl_last_error());
            rc = CL_ERR_UNSUPPORTED;
            goto done;
        }
        CL_TRY(first);
        CL_TRY(cl_count_wrong(c, recv, count, CL_FLOAT32, CL_SUM, seed, 0, p, 0, &wrong));
        double t[64];
        int calls = calls_for(sizes[i]), reps = o->repeats > 64 ? 64 : o->repeats;
        for (int r = 0; r < reps; r++) {
            CL_TRY(cl_barrier(c));
            double t0 = cl_comm_time(c);
            for (int k = 0; k < calls; k++)
                CL_TRY(cl_library_coll(c, CL_COLL_ALLREDUCE, &a));
            t[r] = (cl_comm_time(c) - t0) / calls * 1e6;
            CL_TRY(cl_agree_max(c, &t[r], 1));
        }
        double w = (double)wrong;
        CL_TRY(cl_agree_sum(c, &w, 1));
        double us = cl_median(t, (size_t)reps), algbw = us > 0 ? sizes[i] / us / 1e3 : 0;
        cl_row *row = cl_row_begin(run, c);
        cl_col_int(row, "size", (long long)sizes[i]);
        cl_col_int(row, "count", (long long)count);
        cl_col_nums(row, "time_us", t, (size_t)reps, "%.2f");
        cl_col_num(row, "algbw", algbw, "%.2f");
        cl_col_num(row, "busbw", algbw * cl_coll_busbw_factor(CL_COLL_ALLREDUCE, p), "%.2f");
        cl_col_int(row, "#wrong", (long long)w);
        cl_row_end(row);
    }
done:
    if (send)
        cl_mem_free(c, send);
    if (recv)
        cl_mem_free(c, recv);
    return rc;
}
