/* harness_lists.c: lab 04's lists of GPUs and ranks as the cases write them: "3,1,0,2" read
 * into numbers, and numbers written back as a column in the same form (rows separated by
 * ';', as xml= takes them).
 */
#include <stdio.h>
#include <stdlib.h>

#include "lab04_harness.h"

/* "3,1,0,2" into v (at most max); the count, or -1 for anything else. */
int parse_list(const char *s, int *v, int max)
{
    double x[LAB04_MAX_CHANNELS * LAB04_MAX_GPUS];
    int n;
    if (max > (int)(sizeof x / sizeof *x) || cl_parse_numbers(s, x, max, &n) != CL_OK)
        return -1;
    for (int i = 0; i < n; i++) {
        if (!(x[i] > -1e9 && x[i] < 1e9) || x[i] != (int)x[i])
            return -1; /* GPUs and ranks are whole numbers */
        v[i] = (int)x[i];
    }
    return n;
}

/* v[0..n) as "3,1,0,2", rows of `per` separated by ';': readable, and what xml= takes. */
void col_list(cl_row *r, const char *key, const int *v, int n, int per)
{
    char text[LAB04_MAX_CHANNELS * LAB04_MAX_GPUS * 4 + 1] = "";
    size_t len = 0;
    for (int i = 0; i < n && len + 8 < sizeof text; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%s%d",
                                i == 0    ? ""
                                : i % per ? ","
                                          : ";",
                                v[i]);
    cl_col_str(r, key, text);
}
