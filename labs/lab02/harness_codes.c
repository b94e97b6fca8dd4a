/* harness_codes.c: lab 02's codes and split modes: the student's classification of one
 * legend code, and the student's split of one row of a topology table (the case's text
 * percent-encoded, decoded here).
 */
#include <stdio.h>
#include <string.h>

#include "lab02_harness.h"

/* --- reading what the cases name --------------------------------------------------------- */

/* "%09NV1%20SYS" -> "\tNV1 SYS" into out (n bytes); a reason for bad escapes. */
static cl_result percent_decode(const char *in, char *out, size_t n)
{
    size_t k = 0;
    for (const char *p = in; *p; p++) {
        int ch = (unsigned char)*p;
        if (ch == '%') {
            unsigned v;
            if (sscanf(p + 1, "%2x", &v) != 1 || !p[1] || !p[2]) {
                cl_set_error("text: bad escape at '%s'", p);
                return CL_ERR_INVALID;
            }
            ch = (int)v;
            p += 2;
        }
        if (k + 1 >= n || ch == 0) {
            cl_set_error("text: longer than %zu bytes, or a NUL", n - 1);
            return CL_ERR_INVALID;
        }
        out[k++] = (char)ch;
    }
    out[k] = '\0';
    return CL_OK;
}

/* --- 1 and 2: codes and rows --------------------------------------------------------------- */

cl_result codes_case(cl_case *c)
{
    const char *text;
    CL_CHECK(cl_case_str(c, "code", &text));
    code_args a;
    memset(&a, 0, sizeof a);
    snprintf(a.code, sizeof a.code, "%s", text);
    cl_row *row = cl_case_row(c);
    cl_col_str(row, "code", a.code);
    cl_result rc = cl_case_call(c, "code", &a, sizeof a);
    a.out.code[sizeof a.out.code - 1] = '\0';
    int ok = rc == CL_OK;
    cl_col_str(row, "kind", ok ? cl_link_kind_name(a.out.kind) : "");
    cl_col_int(row, "nvlinks", ok ? a.out.nvlinks : 0);
    cl_col_str(row, "stored", ok ? a.out.code : "");
    return rc;
}

cl_result split_case(cl_case *c)
{
    const char *text;
    long long want;
    split_args a;
    memset(&a, 0, sizeof a);
    CL_CHECK(cl_case_str(c, "text", &text));
    CL_CHECK(cl_case_int(c, "want", &want));
    CL_CHECK(percent_decode(text, a.text, sizeof a.text));
    if (want < 0 || want > LAB02_MAX_CELLS) {
        cl_set_error("want must be 0..%d", LAB02_MAX_CELLS);
        return CL_ERR_INVALID;
    }
    a.want = (int)want;
    cl_result rc = cl_case_call(c, "split", &a, sizeof a);
    char joined[LAB02_MAX_CELLS * 9] = "";
    for (int i = 0; rc == CL_OK && i < a.count && i < a.want; i++) {
        a.codes[i][7] = '\0';
        strcat(joined, i ? " " : "");
        strcat(joined, a.codes[i]);
    }
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "count", a.count);
    cl_col_str(row, "codes", joined);
    cl_col_int(row, "rest", a.count >= 0 ? a.rest : -1);
    return rc;
}
