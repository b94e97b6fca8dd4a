/* harness_cases.c: lab 08's cases modes, fit and table: a case's BYTES:US points or fitted
 * ALPHA_US:BW_GBPS pairs parsed and handed to the student's fit or table, and the table's check
 * (whether its rows cover every size with valid configurations), which calibrate uses too.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab08_harness.h"

/* --- parsing ------------------------------------------------------------------------------ */

/* "A:B,A:B,..." into pairs; CL_ERR_INVALID naming the key for anything else. */
static cl_result parse_pairs(const char *key, const char *text, double (*out)[2], int max, int *n)
{
    *n = 0;
    for (const char *p = text; *p;) {
        char *end;
        if (*n == max) {
            cl_set_error("%s: more than %d pairs", key, max);
            return CL_ERR_INVALID;
        }
        out[*n][0] = strtod(p, &end);
        if (end == p || *end != ':') {
            cl_set_error("%s: expected A:B,A:B,... at '%.20s'", key, p);
            return CL_ERR_INVALID;
        }
        p = end + 1;
        out[*n][1] = strtod(p, &end);
        if (end == p || (*end && *end != ',')) {
            cl_set_error("%s: expected A:B,A:B,... at '%.20s'", key, p);
            return CL_ERR_INVALID;
        }
        (*n)++;
        p = *end ? end + 1 : end;
    }
    return CL_OK;
}

/* --- the table ------------------------------------------------------------------------------ */

/* Whether the rows cover 0 .. max_bytes in order with valid configurations;
 * the reason in why when not. */
int table_valid(const table_args *a, char *why, size_t len)
{
    if (a->nrows < 1 || a->nrows > LAB08_MAX_ROWS) {
        snprintf(why, len, "%d rows (1 to %d)", a->nrows, LAB08_MAX_ROWS);
        return 0;
    }
    unsigned long long expect = 0;
    for (int i = 0; i < a->nrows; i++) {
        const lab08_row *r = &a->rows[i];
        if (r->min_bytes != expect) {
            snprintf(why, len, "row %d starts at %llu, not %llu (a gap or an overlap)", i,
                     r->min_bytes, expect);
            return 0;
        }
        if (r->max_bytes < r->min_bytes || r->max_bytes > a->max_bytes) {
            snprintf(why, len, "row %d ends at %llu (from %llu, at most %llu)", i, r->max_bytes,
                     r->min_bytes, a->max_bytes);
            return 0;
        }
        if (r->config < 0 || r->config >= a->nconfigs) {
            snprintf(why, len, "row %d runs configuration %d of %d", i, r->config, a->nconfigs);
            return 0;
        }
        expect = r->max_bytes + 1;
    }
    if (a->rows[a->nrows - 1].max_bytes != a->max_bytes) {
        snprintf(why, len, "the table ends at %llu, not %llu", a->rows[a->nrows - 1].max_bytes,
                 a->max_bytes);
        return 0;
    }
    return 1;
}

/* Call the student's table and add its columns: "table" (MIN-MAX:CONFIG;...
 * with configurations by index) and "table_error" (empty when it is valid). */
static cl_result run_table(cl_case *c, table_args *a)
{
    cl_result rc = cl_case_call(c, "table", a, sizeof *a);
    cl_row *row = cl_case_row(c);
    char why[160] = "", text[LAB08_MAX_ROWS * 64] = "";
    if (rc == CL_OK && table_valid(a, why, sizeof why))
        for (int i = 0; i < a->nrows; i++)
            snprintf(text + strlen(text), sizeof text - strlen(text), "%s%llu-%llu:%d",
                     i ? ";" : "", a->rows[i].min_bytes, a->rows[i].max_bytes, a->rows[i].config);
    cl_col_str(row, "table", text);
    cl_col_str(row, "table_error", rc != CL_OK ? "no table" : why);
    return rc;
}

/* --- cases: fit and table ----------------------------------------------------------------- */

cl_result fit_case(cl_case *c)
{
    const char *text;
    double pairs[LAB08_MAX_POINTS][2];
    fit_args a = {0};
    CL_CHECK(cl_case_str(c, "points", &text));
    CL_CHECK(parse_pairs("points", text, pairs, LAB08_MAX_POINTS, &a.n));
    for (int i = 0; i < a.n; i++)
        a.points[i] = (lab08_point){pairs[i][0], pairs[i][1]};
    cl_result rc = cl_case_call(c, "fit", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    cl_col_num(row, "alpha_us", rc == CL_OK ? a.out.alpha_us : NAN, "%.6g");
    cl_col_num(row, "bw_gbps", rc == CL_OK ? a.out.bw_gbps : NAN, "%.6g");
    return rc;
}

cl_result table_case(cl_case *c)
{
    const char *text;
    double pairs[LAB08_MAX_CONFIGS + 1][2];
    long long max_bytes;
    table_args a = {0};
    CL_CHECK(cl_case_str(c, "fits", &text));
    CL_CHECK(cl_case_int(c, "max_bytes", &max_bytes));
    CL_CHECK(parse_pairs("fits", text, pairs, LAB08_MAX_CONFIGS + 1, &a.nconfigs));
    if (max_bytes < 0) {
        cl_set_error("max_bytes=%lld is negative", max_bytes);
        return CL_ERR_INVALID;
    }
    for (int i = 0; i < a.nconfigs && i < LAB08_MAX_CONFIGS; i++)
        a.fits[i] = (lab08_fit){pairs[i][0], pairs[i][1]};
    a.max_bytes = (unsigned long long)max_bytes;
    return run_table(c, &a);
}
