/* test_sim_data.c: described buffer contents: fills, copies, reductions, checks, downloads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "data.h"
#include "sim/sim_data.h"

#define SEED 0x1234abcdULL

/* A correct ring reduce-scatter of p ranks' fills, done on descriptions only. */
static void ring_reduce_scatter(cl_sim_data *buf, cl_sim_data *tmp, int p, size_t count)
{
    size_t blk = count / (size_t)p, es = 4;
    /* every rank r holds its own fill; simulate rank 0's view: partial sums arrive
     * from the left, each a copy of the left neighbour's partial, then ours is added */
    for (int r = 0; r < p; r++)
        assert_int_equal(cl_sim_data_fill(&buf[r], 0, count, CL_FLOAT32, CL_SUM, SEED, r, 0),
                         CL_OK);
    for (int s = 0; s < p - 1; s++) {
        for (int r = 0; r < p; r++) { /* rank r receives block (r - s - 1) from r - 1 */
            int left = (r - 1 + p) % p, b = ((r - s - 1) % p + p) % p;
            assert_int_equal(cl_sim_data_copy(&tmp[r], 0, &buf[left], b * blk * es, blk * es),
                             CL_OK);
        }
        for (int r = 0; r < p; r++) {
            int b = ((r - s - 1) % p + p) % p;
            assert_int_equal(
                cl_sim_data_reduce(&buf[r], b * blk * es, &tmp[r], 0, blk, CL_FLOAT32, CL_SUM),
                CL_OK);
        }
    }
}

static void test_ring_reduce_scatter_is_exact(void **state)
{
    (void)state;
    enum { P = 6, COUNT = P * 1000 };
    cl_sim_data buf[P], tmp[P];
    for (int r = 0; r < P; r++) {
        cl_sim_data_init(&buf[r], COUNT * 4);
        cl_sim_data_init(&tmp[r], COUNT / P * 4);
    }
    ring_reduce_scatter(buf, tmp, P, COUNT);
    /* rank r's block (r + 1) mod p... after p-1 steps each rank holds the full sum of
     * block (r - (p - 1)) mod p = (r + 1) mod p */
    for (int r = 0; r < P; r++) {
        size_t b = (size_t)((r + 1) % P), wrong;
        assert_int_equal(cl_sim_data_wrong(&buf[r], b * (COUNT / P) * 4, COUNT / P, CL_FLOAT32,
                                           CL_SUM, SEED, 0, P, (int64_t)(b * (COUNT / P)), &wrong),
                         CL_OK);
        assert_int_equal(wrong, 0);
        assert_true(buf[r].n <= P + 2); /* a few segments per block, not per element */
    }
    /* and the download is the real sum, element for element */
    float got[COUNT / P], want[COUNT / P];
    size_t b = 1;
    assert_int_equal(cl_sim_data_read(&buf[0], b * (COUNT / P) * 4, got, sizeof got), CL_OK);
    cl_data_expected(want, b * (COUNT / P), COUNT / P, CL_FLOAT32, CL_SUM, P, SEED);
    assert_memory_equal(got, want, sizeof got);
    for (int r = 0; r < P; r++) {
        cl_sim_data_free(&buf[r]);
        cl_sim_data_free(&tmp[r]);
    }
}

/* Adding a contribution twice, or the wrong block, or another fill, is wrong. */
static void test_wrong_reductions_are_caught(void **state)
{
    (void)state;
    cl_sim_data a, b;
    size_t wrong;
    cl_sim_data_init(&a, 400);
    cl_sim_data_init(&b, 400);
    cl_sim_data_fill(&a, 0, 100, CL_INT32, CL_SUM, SEED, 0, 0);
    cl_sim_data_fill(&b, 0, 100, CL_INT32, CL_SUM, SEED, 1, 0);
    cl_sim_data_reduce(&a, 0, &b, 0, 100, CL_INT32, CL_SUM);
    cl_sim_data_wrong(&a, 0, 100, CL_INT32, CL_SUM, SEED, 0, 2, 0, &wrong);
    assert_int_equal(wrong, 0);
    cl_sim_data_reduce(&a, 0, &b, 0, 50, CL_INT32, CL_SUM); /* rank 1 counted twice */
    cl_sim_data_wrong(&a, 0, 100, CL_INT32, CL_SUM, SEED, 0, 2, 0, &wrong);
    assert_int_equal(wrong, 50);
    /* misaligned: element k of a with element k+1 of b */
    cl_sim_data_fill(&a, 0, 100, CL_INT32, CL_SUM, SEED, 0, 0);
    cl_sim_data_reduce(&a, 0, &b, 4, 99, CL_INT32, CL_SUM);
    cl_sim_data_wrong(&a, 0, 100, CL_INT32, CL_SUM, SEED, 0, 2, 0, &wrong);
    assert_int_equal(wrong, 100); /* 99 mixed, and the last one misses rank 1 */
    /* another fill (a stale input from an earlier call) */
    cl_sim_data_fill(&a, 0, 100, CL_INT32, CL_SUM, SEED + 1, 0, 0);
    cl_sim_data_reduce(&a, 0, &b, 0, 100, CL_INT32, CL_SUM);
    cl_sim_data_wrong(&a, 0, 100, CL_INT32, CL_SUM, SEED, 0, 2, 0, &wrong);
    assert_int_equal(wrong, 100);
    /* max is idempotent: counting a rank twice is still right */
    cl_sim_data_fill(&a, 0, 100, CL_INT32, CL_MAX, SEED, 0, 0);
    cl_sim_data_fill(&b, 0, 100, CL_INT32, CL_MAX, SEED, 1, 0);
    cl_sim_data_reduce(&a, 0, &b, 0, 100, CL_INT32, CL_MAX);
    cl_sim_data_reduce(&a, 0, &b, 0, 100, CL_INT32, CL_MAX);
    cl_sim_data_wrong(&a, 0, 100, CL_INT32, CL_MAX, SEED, 0, 2, 0, &wrong);
    assert_int_equal(wrong, 0);
    /* the wrong reduction operator */
    cl_sim_data_fill(&a, 0, 100, CL_INT32, CL_MAX, SEED, 0, 0);
    cl_sim_data_reduce(&a, 0, &b, 0, 100, CL_INT32, CL_SUM);
    cl_sim_data_wrong(&a, 0, 100, CL_INT32, CL_MAX, SEED, 0, 2, 0, &wrong);
    assert_int_equal(wrong, 100);
    cl_sim_data_free(&a);
    cl_sim_data_free(&b);
}

/* Half an element copied corrupts exactly the elements it cuts. */
static void test_partial_elements(void **state)
{
    (void)state;
    cl_sim_data a, b;
    size_t wrong;
    cl_sim_data_init(&a, 800);
    cl_sim_data_init(&b, 400);
    assert_int_equal(cl_sim_data_fill(&a, 0, 100, CL_FLOAT64, CL_SUM, SEED, 3, 0), CL_OK);
    assert_int_equal(cl_sim_data_fill(&b, 0, 50, CL_FLOAT64, CL_SUM, SEED, 4, 0), CL_OK);
    cl_sim_data_copy(&a, 12, &b, 0, 8); /* 8 bytes over elements 1 and 2 */
    cl_sim_data_wrong(&a, 0, 50, CL_FLOAT64, CL_SUM, SEED, 3, 4, 0, &wrong);
    assert_int_equal(wrong, 2);
    cl_sim_data_free(&a);
    cl_sim_data_free(&b);
}

/* Poison stays until written; uploads are compared by value; raw bytes round-trip. */
static void test_unset_bytes_and_raw(void **state)
{
    (void)state;
    cl_sim_data a;
    size_t n, wrong;
    cl_sim_data_init(&a, 64);
    cl_sim_data_touched(&a, 0, 64, &n);
    assert_int_equal(n, 0);
    int32_t want[16];
    cl_data_expected(want, 0, 16, CL_INT32, CL_SUM, 3, SEED);
    cl_sim_data_write(&a, 0, want, sizeof want); /* the right values, uploaded */
    cl_sim_data_wrong(&a, 0, 16, CL_INT32, CL_SUM, SEED, 0, 3, 0, &wrong);
    assert_int_equal(wrong, 0);
    cl_sim_data_touched(&a, 0, 64, &n);
    assert_int_equal(n, 64);
    cl_sim_data_unset(&a, 8, 8);
    cl_sim_data_wrong(&a, 0, 16, CL_INT32, CL_SUM, SEED, 0, 3, 0, &wrong);
    assert_int_equal(wrong, 2);
    cl_sim_data_fill_raw(&a, 0, 64, SEED, 5, 100);
    unsigned char got[64];
    cl_sim_data_read(&a, 0, got, sizeof got);
    for (int i = 0; i < 64; i++)
        assert_int_equal(got[i], cl_data_raw_byte(SEED, 5, 100 + (size_t)i));
    cl_sim_data_wrong(&a, 0, 64, -1, CL_SUM, SEED, 5, 6, 100, &wrong);
    assert_int_equal(wrong, 0);
    cl_sim_data_wrong(&a, 0, 64, -1, CL_SUM, SEED, 6, 7, 100, &wrong); /* another owner */
    assert_int_equal(wrong, 64);
    cl_sim_data_free(&a);
}

static void test_ranges_checked(void **state)
{
    (void)state;
    cl_sim_data a, b;
    cl_sim_data_init(&a, 64);
    cl_sim_data_init(&b, 16);
    assert_int_equal(cl_sim_data_copy(&b, 8, &a, 0, 16), CL_ERR_INVALID);
    assert_int_equal(cl_sim_data_reduce(&a, 60, &a, 0, 2, CL_INT32, CL_SUM), CL_ERR_INVALID);
    cl_sim_data_free(&a);
    cl_sim_data_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_reduce_scatter_is_exact),
        cmocka_unit_test(test_wrong_reductions_are_caught),
        cmocka_unit_test(test_partial_elements),
        cmocka_unit_test(test_unset_bytes_and_raw),
        cmocka_unit_test(test_ranges_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
