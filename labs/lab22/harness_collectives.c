/* harness_collectives.c: lab 22's collectives mode: the student's ring ReduceScatter and
 * AllGather on fresh data, checked exactly, with the bytes each rank sent from the trace. */
#include "deadline.h"
#include "lab22_harness.h"

static cl_result one_coll(cl_run *run, cl_comm *c, int gather, size_t k)
{
    int nr = cl_comm_size(c), r = cl_comm_rank(c);
    size_t n = k * (size_t)nr, wrong = 0;
    float *buf = NULL, *shard = NULL;
    uint64_t seed;
    cl_call_result res = {0};
    cl_result rc = CL_OK;
    CL_TRY(cl_fresh_seed(run, c, &seed));
    CL_TRY(cl_mem_alloc(c, n * sizeof(float), (void **)&buf));
    CL_TRY(cl_mem_alloc(c, k * sizeof(float), (void **)&shard));
    if (gather) {
        CL_TRY(cl_fill(c, shard, k, CL_FLOAT32, CL_SUM, seed, r, (size_t)r * k));
        CL_TRY(cl_poison(c, buf, n * sizeof(float), CL_FLOAT32));
    } else {
        CL_TRY(cl_fill(c, buf, n, CL_FLOAT32, CL_SUM, seed, r, 0));
        CL_TRY(cl_poison(c, shard, k * sizeof(float), CL_FLOAT32));
    }
    coll_args a = {.gather = gather, .buf = buf, .shard = shard, .n = n};
    cl_deadline_doing(gather ? "lab22_all_gather" : "lab22_reduce_scatter");
    CL_TRY(cl_student_run(c, "coll", &a, sizeof a, ALLOW, &res));
    if (res.status == CL_OK) {
        if (gather) {
            for (int i = 0; i < nr; i++) {
                size_t w;
                CL_TRY(cl_count_wrong(c, buf + (size_t)i * k, k, CL_FLOAT32, CL_SUM, seed, i, i + 1,
                                      (size_t)i * k, &w));
                wrong += w;
            }
        } else {
            CL_TRY(cl_count_wrong(c, shard, k, CL_FLOAT32, CL_SUM, seed, 0, nr, (size_t)r * k,
                                  &wrong));
        }
    }
    int64_t v[3] = {res.status != CL_OK, (int64_t)wrong, (int64_t)cl_student_sent_bytes(c, NULL)};
    int64_t lo = v[2];
    CL_TRY(cl_agree(c, CL_MIN, &lo, 1));
    CL_TRY(cl_agree(c, CL_MAX, v, 3));
    int64_t sum_wrong = (int64_t)wrong;
    CL_TRY(cl_agree(c, CL_SUM, &sum_wrong, 1));
    cl_row *row = cl_row_begin(run, c);
    cl_col_str(row, "coll", gather ? "allgather" : "reducescatter");
    cl_col_int(row, "ranks", nr);
    cl_col_int(row, "count", (long long)n);
    cl_col_call(row, &res);
    cl_col_int(row, "failed_ranks", v[0]);
    cl_col_int(row, "wrong", sum_wrong);
    cl_col_int(row, "sent_min", lo);
    cl_col_int(row, "sent_max", v[2]);
    cl_col_int(row, "sent_expected", (long long)((size_t)(nr - 1) * k * sizeof(float)));
    cl_row_end(row);
done:
    if (shard)
        cl_mem_free(c, shard);
    if (buf)
        cl_mem_free(c, buf);
    return rc;
}

cl_result collectives_mode(cl_run *run, cl_comm *c)
{
    static const size_t sizes[] = {1, 37, 1040, 16384};
    for (int g = 0; g < 2; g++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            CL_CHECK(one_coll(run, c, g, sizes[i]));
    return CL_OK;
}
