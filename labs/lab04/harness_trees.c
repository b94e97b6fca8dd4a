/* harness_trees.c: lab 04's trees mode: the student's double binary tree over n ranks (in
 * the order given, or 0..n-1), each tree's parents and children reported as columns.
 */
#include <stdio.h>
#include <string.h>

#include "lab04_harness.h"

static void tree_cols(cl_row *row, const char *name, const lab04_tree *t, int n)
{
    char key[32];
    int d0[LAB04_MAX_TREE], d1[LAB04_MAX_TREE];
    for (int i = 0; i < n; i++)
        d0[i] = t->down[i][0], d1[i] = t->down[i][1];
    snprintf(key, sizeof key, "%s_up", name);
    col_list(row, key, t->up, n, n);
    snprintf(key, sizeof key, "%s_down0", name);
    col_list(row, key, d0, n, n);
    snprintf(key, sizeof key, "%s_down1", name);
    col_list(row, key, d1, n, n);
}

cl_result trees_case(cl_case *c)
{
    static trees_args a;
    long long n;
    CL_CHECK(cl_case_int(c, "n", &n));
    if (n < 1 || n > LAB04_MAX_TREE) {
        cl_set_error("n=%lld: 1 to %d ranks", n, LAB04_MAX_TREE);
        return CL_ERR_INVALID;
    }
    memset(&a, 0xff, sizeof a);
    a.n = (int)n;
    for (int i = 0; i < a.n; i++)
        a.order[i] = i;
    const char *order;
    if (cl_case_str(c, "order", &order) == CL_OK &&
        parse_list(order, a.order, LAB04_MAX_TREE) != a.n) {
        cl_set_error("order=%s: expected %d ranks", order, a.n);
        return CL_ERR_INVALID;
    }
    cl_clear_error();
    cl_result rc = cl_case_call(c, "trees", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "n", a.n);
    if (rc == CL_OK) {
        tree_cols(row, "tree0", &a.t0, a.n);
        tree_cols(row, "tree1", &a.t1, a.n);
    }
    return rc;
}
