/* test_coll.c: the collective vocabulary: blocks, bus-bandwidth factors, names, chunks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "coll.h"
#include "launch.h" /* cl_pipeline_chunk: the harness side's */

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

/* nccl-tests' factors (its src/all_reduce.cu and the others), the same at every rank count
 * including 1. */
static void test_busbw_factors(void **state)
{
    (void)state;
    assert_true(cl_coll_busbw_factor(CL_COLL_ALLREDUCE, 4) == 1.5);
    assert_true(cl_coll_busbw_factor(CL_COLL_REDUCESCATTER, 4) == 0.75);
    assert_true(cl_coll_busbw_factor(CL_COLL_ALLGATHER, 8) == 0.875);
    assert_true(cl_coll_busbw_factor(CL_COLL_ALLTOALL, 8) == 0.875);
    assert_true(cl_coll_busbw_factor(CL_COLL_ALLTOALLV, 2) == 0.5);
    assert_true(cl_coll_busbw_factor(CL_COLL_BROADCAST, 8) == 1.0);
    assert_true(cl_coll_busbw_factor(CL_COLL_REDUCE, 1) == 1.0);
    assert_true(cl_coll_busbw_factor(CL_COLL_ALLREDUCE, 1) == 0.0);
    assert_true(cl_coll_busbw_factor(CL_COLL_ALLGATHER, 1) == 0.0);
}

static void test_names_round_trip(void **state)
{
    (void)state;
    for (int k = 0; k < CL_COLL_KIND_COUNT; k++) {
        cl_coll_kind back;
        assert_int_equal(cl_coll_parse(cl_coll_name((cl_coll_kind)k), &back), CL_OK);
        assert_int_equal(back, k);
    }
    for (int a = 0; a < CL_ALGO_COUNT; a++) {
        cl_algo back;
        assert_int_equal(cl_algo_parse(cl_algo_name((cl_algo)a), &back), CL_OK);
        assert_int_equal(back, a);
    }
    cl_algo algo;
    assert_int_equal(cl_algo_parse("ring", &algo), CL_OK); /* NCCL_ALGO is case-insensitive */
    assert_int_equal(algo, CL_ALGO_RING);
    cl_proto proto;
    assert_int_equal(cl_proto_parse("ll128", &proto), CL_OK);
    assert_int_equal(proto, CL_PROTO_LL128);
    assert_string_equal(cl_coll_name(CL_COLL_KIND_COUNT), "?");
    cl_coll_kind k;
    assert_int_equal(cl_coll_parse("allreduc", &k), CL_ERR_INVALID);
    assert_non_null(strstr(cl_last_error(), "allreduce")); /* the list of valid names */
}

static void test_kinds_and_chunks(void **state)
{
    (void)state;
    assert_true(cl_coll_reduces(CL_COLL_REDUCESCATTER) && !cl_coll_reduces(CL_COLL_ALLTOALL));
    assert_true(cl_coll_rooted(CL_COLL_REDUCE) && !cl_coll_rooted(CL_COLL_ALLGATHER));
    assert_int_equal(cl_pipeline_chunk(1000), 64 << 10);
    assert_int_equal(cl_pipeline_chunk((size_t)32 << 20), 1 << 20);
    assert_int_equal(cl_pipeline_chunk((size_t)1 << 30), 4 << 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_partition),
        cmocka_unit_test(test_busbw_factors),
        cmocka_unit_test(test_names_round_trip),
        cmocka_unit_test(test_kinds_and_chunks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
