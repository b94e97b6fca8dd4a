/* test_collective.c: the collective harness: partitions, factors, guard, verification on sim. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "collective.h"

static void test_block_partition(void **state)
{
    (void)state;
    for (int p = 1; p <= 9; p++)
        for (size_t count = 0; count < 40; count++) {
            size_t next = 0, minlen = (size_t)-1, maxlen = 0;
            for (int i = 0; i < p; i++) {
                size_t off, len;
                cl_coll_block(count, p, i, &off, &len);
                assert_int_equal(off, next); /* contiguous, in rank order */
                next = off + len;
                minlen = len < minlen ? len : minlen;
                maxlen = len > maxlen ? len : maxlen;
            }
            assert_int_equal(next, count);
            assert_true(maxlen - minlen <= 1);
        }
    size_t off, len;
    cl_coll_block(10, 4, 1, &off, &len);
    assert_int_equal(off, 3);
    assert_int_equal(len, 3);
    cl_coll_block(10, 4, 3, &off, &len);
    assert_int_equal(off, 8);
    assert_int_equal(len, 2);
}

static void test_factors_and_names(void **state)
{
    (void)state;
    assert_true(cl_coll_busbw_factor(CL_COLL_ALLREDUCE, 4) == 1.5);
    assert_true(cl_coll_busbw_factor(CL_COLL_REDUCE_SCATTER, 4) == 0.75);
    assert_true(cl_coll_busbw_factor(CL_COLL_ALLGATHER, 8) == 0.875);
    assert_true(cl_coll_busbw_factor(CL_COLL_BROADCAST, 8) == 1.0);
    assert_true(cl_coll_busbw_factor(CL_COLL_ALLREDUCE, 1) == 0.0);
    assert_string_equal(cl_coll_kind_name(CL_COLL_REDUCE_SCATTER), "reducescatter");
    assert_string_equal(cl_coll_kind_name(CL_COLL_KIND_COUNT), "?");
    assert_int_equal(cl_coll_bytes(10, CL_FLOAT64), 80);
    assert_int_equal(cl_coll_pipeline_chunk(1000), 64 << 10);
    assert_int_equal(cl_coll_pipeline_chunk((size_t)32 << 20), 1 << 20);
    assert_int_equal(cl_coll_pipeline_chunk((size_t)1 << 30), 4 << 20);
}

static void test_guard(void **state)
{
    (void)state;
    cl_coll_guard_reset();
    cl_coll_guard_note("MPI_Allreduce"); /* outside a window: not recorded */
    assert_null(cl_coll_guard_hit());
    cl_coll_guard_enter();
    cl_coll_guard_enter();
    cl_coll_guard_leave();
    cl_coll_guard_note("MPI_Bcast");
    cl_coll_guard_note("MPI_Allreduce"); /* the first one is kept */
    cl_coll_guard_leave();
    assert_string_equal(cl_coll_guard_hit(), "MPI_Bcast");
    cl_coll_guard_note("ncclAllReduce");
    assert_string_equal(cl_coll_guard_hit(), "MPI_Bcast");
    cl_coll_guard_reset();
    assert_null(cl_coll_guard_hit());
}

/* Allreduce by gathering everything on rank 0 (correct, slow), with injectable faults. */
enum { OK, SKIP_LAST, OVERRUN, CLOBBER_INPUT, NOT_DONE, FORBIDDEN };
static int fault;

static cl_result naive_allreduce(cl_comm *c, const cl_coll_args *a)
{
    int p = cl_comm_size(c), r = cl_comm_rank(c);
    size_t es = cl_dtype_size(a->dtype), bytes = a->count * es;
    if (fault == NOT_DONE)
        return CL_ERR_NOT_IMPLEMENTED;
    if (fault == FORBIDDEN)
        cl_coll_guard_note("MPI_Allreduce");
    CL_CHECK(cl_copy_local(c, a->recvbuf, a->sendbuf, bytes));
    if (r == 0) {
        for (int i = 1; i < p; i++) {
            CL_CHECK(cl_recv(c, a->scratch, bytes, i));
            CL_CHECK(cl_reduce_local(c, a->recvbuf, a->scratch, a->count, a->dtype, a->op));
        }
        for (int i = 1; i < p; i++)
            CL_CHECK(cl_send(c, a->recvbuf, bytes, i));
    } else {
        CL_CHECK(cl_send(c, a->sendbuf, bytes, 0));
        CL_CHECK(cl_recv(c, a->recvbuf, bytes, 0));
    }
    char *out = a->recvbuf;
    if (fault == SKIP_LAST && r == p - 1)
        memset(out + bytes - es, 0x7f, es);
    if (fault == OVERRUN)
        memset(out + bytes, 0, es);
    if (fault == CLOBBER_INPUT && r == 1)
        memset((void *)a->sendbuf, 0, es);
    return CL_OK;
}

static const cl_coll_entry naive = {.name = "naive", .kind = CL_COLL_ALLREDUCE,
                                    .fn = naive_allreduce,
                                    .baseline = cl_coll_baseline_allreduce};
static cl_coll_result result;

static cl_result run_body(cl_comm *c, void *arg)
{
    cl_coll_test t = {.entry = &naive, .count = 1001, .dtype = *(cl_dtype *)arg, .op = CL_MAX,
                      .repeats = 3, .iters = 1, .verify = 1, .with_baseline = 1, .seed = 42};
    cl_coll_result r;
    CL_CHECK(cl_coll_run(c, &t, &r));
    if (cl_comm_rank(c) == 0)
        result = r;
    return CL_OK;
}

static void run_sim(int f, cl_dtype t)
{
    fault = f;
    cl_launch_opts o = {.backend = "sim", .nranks = 3, .system = "dgx-a100"};
    assert_int_equal(cl_launch(&o, run_body, &t), CL_OK);
}

static void test_run_correct(void **state)
{
    (void)state;
    for (int t = 0; t < CL_DTYPE_COUNT; t++) {
        run_sim(OK, (cl_dtype)t);
        assert_int_equal(result.status, CL_OK);
        assert_int_equal(result.samples, 3);
        assert_int_equal(result.wrong + result.overrun + result.input_changed, 0);
        assert_string_equal(result.forbidden, "");
        assert_true(result.time_s[0] > 0 && result.base_time_s[0] > 0);
        /* gathering on one rank is slower than the simulator's ring */
        assert_true(result.time_s[0] > result.base_time_s[0]);
    }
}

static void test_run_counts_faults(void **state)
{
    (void)state;
    run_sim(SKIP_LAST, CL_INT32);
    assert_int_equal(result.wrong, 3); /* one element on one rank, in each of 3 samples */
    run_sim(OVERRUN, CL_INT64);
    assert_int_equal(result.overrun, 3 * 3);
    assert_int_equal(result.wrong, 0);
    run_sim(CLOBBER_INPUT, CL_FLOAT64);
    assert_true(result.input_changed >= 1);
    run_sim(NOT_DONE, CL_FLOAT32);
    assert_int_equal(result.status, CL_ERR_NOT_IMPLEMENTED);
    assert_int_equal(result.samples, 0);
    run_sim(FORBIDDEN, CL_FLOAT32);
    assert_string_equal(result.forbidden, "MPI_Allreduce");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_partition),
        cmocka_unit_test(test_factors_and_names),
        cmocka_unit_test(test_guard),
        cmocka_unit_test(test_run_correct),
        cmocka_unit_test(test_run_counts_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
