/* harness_columns.c: lab 15's columns of what the student's program wrote: a field
 * bounded before it is read, and a list of items (GIDs, ports, TCs, findings) written as a
 * column of lines, cut to the column's size.
 */
#include "lab15_harness.h"

/* A bounded copy of a field the student's program wrote. */
const char *field(char *s, size_t n)
{
    s[n - 1] = '\0';
    return s;
}

/* The column key: a line for each of the first n items (n clamped to 0..max), in at most
 * cap bytes; the lines that do not fit are cut. */
void col_lines(cl_row *r, const char *key, size_t cap, int n, int max, line_fn line, void *items)
{
    static char list[LAB15_MAX_FINDINGS * 360]; /* the largest cap */
    if (CL_NEVER(cap > sizeof list))
        cap = sizeof list;
    n = n < 0 ? 0 : n > max ? max : n;
    size_t used = 0;
    list[0] = '\0';
    for (int i = 0; i < n && used < cap; i++)
        used += (size_t)line(list + used, cap - used, items, i);
    cl_col_str(r, key, list);
}
