/* harness_choose.c: lab 30's choose and table modes: every algorithm's time at each point of
 * a case, and the student's algorithm of each point, timed.
 */
#include <math.h>
#include <stdio.h>

#include "lab30_harness.h"

static const char *const ALGO_NAMES[LAB30_NALGOS] = {"ring", "tree", "nvlstree", "nvls", "torus"};

/* The time of every algorithm at every point (0 where it does not run), and the best. */
static cl_result table_cols(cl_row *row, const choose_args *a, double *best)
{
    double t[LAB30_NALGOS][LAB30_MAX_POINTS];
    long long gpus[LAB30_MAX_POINTS];
    double bytes[LAB30_MAX_POINTS];
    for (int i = 0; i < a->n; i++) {
        gpus[i] = a->pts[i].gpus, bytes[i] = a->pts[i].bytes;
        best[i] = INFINITY;
        for (int k = 0; k < LAB30_NALGOS; k++) {
            t[k][i] = 0;
            if (!(a->f.algos & ALGO_BIT(k)))
                continue;
            CL_CHECK(time_of(k, a->pts[i].gpus, a->pts[i].bytes, &t[k][i]));
            best[i] = fmin(best[i], t[k][i]);
        }
    }
    cl_col_str(row, "fabric", a->f.name);
    cl_col_ints(row, "gpus", gpus, (size_t)a->n);
    cl_col_nums(row, "bytes", bytes, (size_t)a->n, "%.0f");
    for (int k = 0; k < LAB30_NALGOS; k++) {
        char key[32];
        snprintf(key, sizeof key, "t_%s", ALGO_NAMES[k]);
        if (a->f.algos & ALGO_BIT(k))
            cl_col_nums(row, key, t[k], (size_t)a->n, "%.6g");
    }
    cl_col_nums(row, "best_s", best, (size_t)a->n, "%.6g");
    return CL_OK;
}

cl_result table_case(cl_case *c)
{
    static choose_args a;
    double best[LAB30_MAX_POINTS];
    CL_CHECK(load_case(c, &a));
    return table_cols(cl_case_row(c), &a, best);
}

cl_result choose_case(cl_case *c)
{
    static choose_args a;
    double best[LAB30_MAX_POINTS], mine[LAB30_MAX_POINTS];
    CL_CHECK(load_case(c, &a));
    for (int i = 0; i < LAB30_MAX_POINTS; i++)
        a.algo[i] = -1;
    cl_result rc = cl_case_call(c, "choose", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "calls", current_case.calls);
    if (rc != CL_OK)
        return rc;
    CL_CHECK(table_cols(row, &a, best));
    long long algo[LAB30_MAX_POINTS];
    for (int i = 0; i < a.n; i++) {
        algo[i] = a.algo[i];
        mine[i] = 0; /* an algorithm that does not run here */
        if (a.algo[i] >= 0 && a.algo[i] < LAB30_NALGOS && (a.f.algos & ALGO_BIT(a.algo[i])))
            CL_CHECK(time_of(a.algo[i], a.pts[i].gpus, a.pts[i].bytes, &mine[i]));
    }
    cl_col_ints(row, "algo", algo, (size_t)a.n);
    cl_col_nums(row, "mine_s", mine, (size_t)a.n, "%.6g");
    return CL_OK;
}
