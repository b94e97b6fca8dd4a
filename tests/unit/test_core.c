/* test_core.c: the library's small modules: result, stats, data, json, dtype. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "commlab.h"
#include "harness/harness.h"

static void test_result_strings_and_status(void **state)
{
    (void)state;
    assert_string_equal(cl_result_str(CL_OK), "success");
    assert_string_equal(cl_result_str(CL_ERR_NOT_IMPLEMENTED), "not implemented (TODO)");
    assert_int_equal(cl_exit_status(CL_OK), 0);
    assert_int_equal(cl_exit_status(CL_ERR_PARSE), 2);
    assert_int_equal(cl_exit_status(CL_ERR_BACKEND), 1);
    cl_set_error("%s:%d: %s", "f.txt", 3, "bad");
    assert_string_equal(cl_last_error(), "f.txt:3: bad");
    cl_clear_error();
    assert_string_equal(cl_last_error(), "");
}

static void test_stats_median_quartiles(void **state)
{
    (void)state;
    double odd[] = {5, 1, 3}, even[] = {4, 1, 3, 2};
    cl_summary s;
    assert_int_equal(cl_summarize(odd, 3, &s), CL_OK);
    assert_true(s.median == 3 && s.min == 1 && s.max == 5 && s.mean == 3);
    assert_int_equal(cl_summarize(even, 4, &s), CL_OK);
    assert_true(s.median == 2.5 && s.q1 == 1.75 && s.q3 == 3.25);
    assert_true(odd[0] == 5); /* the input is not reordered */
    assert_int_equal(cl_summarize(odd, 0, &s), CL_ERR_INVALID);
    assert_true(isnan(cl_median(odd, 0)));
}

static void test_stats_fit_line(void **state)
{
    (void)state;
    double x[] = {8, 1024, 1048576}, y[3], a, b;
    for (int i = 0; i < 3; i++)
        y[i] = 2e-6 + x[i] / 25e9;
    assert_int_equal(cl_fit_line(x, y, 3, &a, &b), CL_OK);
    assert_true(fabs(a - 2e-6) < 1e-15 && fabs(b - 1 / 25e9) < 1e-20);
    double same[] = {4, 4};
    assert_int_equal(cl_fit_line(same, y, 2, &a, &b), CL_ERR_INVALID);
}

/* Any reduction order over the generated inputs gives the expected bits. */
static void test_data_exact_in_any_order(void **state)
{
    (void)state;
    enum { N = 1000, P = 7 };
    for (int t = 0; t < CL_DTYPE_COUNT; t++)
        for (int op = 0; op < CL_OP_COUNT; op++) {
            size_t es = cl_dtype_size((cl_dtype)t);
            unsigned char *in[P], *fwd = malloc(N * es), *rev = malloc(N * es);
            for (int r = 0; r < P; r++) {
                in[r] = malloc(N * es);
                assert_int_equal(cl_data_fill(in[r], 100, N, (cl_dtype)t, (cl_op)op, r, 42), CL_OK);
            }
            memcpy(fwd, in[0], N * es);
            memcpy(rev, in[P - 1], N * es);
            for (int r = 1; r < P; r++) {
                cl_reduce_host(fwd, in[r], N, (cl_dtype)t, (cl_op)op);
                cl_reduce_host(rev, in[P - 1 - r], N, (cl_dtype)t, (cl_op)op);
            }
            size_t wrong = 99;
            assert_int_equal(cl_data_check(fwd, 100, N, (cl_dtype)t, (cl_op)op, P, 42, &wrong),
                             CL_OK);
            assert_int_equal(wrong, 0);
            assert_int_equal(cl_data_check(rev, 100, N, (cl_dtype)t, (cl_op)op, P, 42, &wrong),
                             CL_OK);
            assert_int_equal(wrong, 0);
            /* a missing rank is caught */
            assert_int_equal(cl_data_check(fwd, 100, N, (cl_dtype)t, (cl_op)op, P - 1, 42, &wrong),
                             CL_OK);
            assert_true(wrong > 0);
            cl_data_poison(fwd, N, (cl_dtype)t);
            cl_data_check(fwd, 100, N, (cl_dtype)t, (cl_op)op, P, 42, &wrong);
            assert_int_equal(wrong, N);
            for (int r = 0; r < P; r++)
                free(in[r]);
            free(fwd);
            free(rev);
        }
}

static void test_dtype_names_and_wrapping(void **state)
{
    (void)state;
    cl_dtype t;
    cl_op op;
    assert_int_equal(cl_dtype_parse("double", &t), CL_OK);
    assert_int_equal(t, CL_FLOAT64);
    assert_int_equal(cl_op_parse("max", &op), CL_OK);
    assert_int_equal(cl_dtype_parse("half", &t), CL_ERR_INVALID);
    int32_t a[1] = {INT32_MAX}, b[1] = {1};
    assert_int_equal(cl_reduce_host(a, b, 1, CL_INT32, CL_SUM), CL_OK);
    assert_int_equal(a[0], INT32_MIN); /* wraps, no undefined behaviour */
}

static void test_json_writer(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cl_json j;
    cl_json_begin(&j, f);
    cl_json_object_start(&j, NULL);
    cl_json_string(&j, "s", "a\"b\\c\n");
    cl_json_number(&j, "nan", NAN);
    double v[] = {1, 2.5};
    cl_json_number_array(&j, "v", v, 2);
    cl_json_object_end(&j);
    assert_int_equal(cl_json_end(&j), CL_OK);
    fclose(f);
    assert_string_equal(text, "{\"s\":\"a\\\"b\\\\c\\n\",\"nan\":null,\"v\":[1,2.5]}\n");
    free(text);

    f = open_memstream(&text, &len);
    cl_json_begin(&j, f);
    cl_json_array_start(&j, NULL);
    cl_json_int(&j, "key in array", 1);
    assert_int_equal(cl_json_end(&j), CL_ERR_INVALID);
    fclose(f);
    free(text);
}

/* FNV-1a's published test vectors (isthe.com/chongo/tech/comp/fnv). */
static void test_data_hash_bytes_fnv1a(void **state)
{
    (void)state;
    assert_true(cl_data_hash_bytes("", 0) == 0xcbf29ce484222325ULL);
    assert_true(cl_data_hash_bytes("a", 1) == 0xaf63dc4c8601ec8cULL);
    assert_true(cl_data_hash_bytes("foobar", 6) == 0x85944171f73967e8ULL);
}

/* Lists as cases and options write them: "3,1,0,2". */
static void test_parse_numbers(void **state)
{
    (void)state;
    double v[4];
    int n = -1;
    assert_int_equal(cl_parse_numbers("3,1.5,-2,1e3", v, 4, &n), CL_OK);
    assert_int_equal(n, 4);
    assert_true(v[0] == 3 && v[1] == 1.5 && v[2] == -2 && v[3] == 1000);
    assert_int_equal(cl_parse_numbers("", v, 4, &n), CL_OK);
    assert_int_equal(n, 0);
    const char *bad[] = {"1,,2", "1,", ",1", "1;2", "one", "1,2,3,4,5"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(cl_parse_numbers(bad[i], v, 4, &n), CL_ERR_INVALID);
        assert_true(strlen(cl_last_error()) > 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_result_strings_and_status),
        cmocka_unit_test(test_data_hash_bytes_fnv1a),
        cmocka_unit_test(test_parse_numbers),
        cmocka_unit_test(test_stats_median_quartiles),
        cmocka_unit_test(test_stats_fit_line),
        cmocka_unit_test(test_data_exact_in_any_order),
        cmocka_unit_test(test_dtype_names_and_wrapping),
        cmocka_unit_test(test_json_writer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
