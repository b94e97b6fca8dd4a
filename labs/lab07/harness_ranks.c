/* harness_ranks.c: lab 07's split, visible and gpu modes: the student's colours and keys of
 * every rank and its CUDA_VISIBLE_DEVICES, reported per case, and (gpu) TP communicators split
 * with the student's colours, checked and timed with an AllGather on them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab07_harness.h"

/* --- split and visible ------------------------------------------------------------------------ */

cl_result split_case(cl_case *c)
{
    static split_args a;
    double v[3];
    const char *order = "tp-dp-pp";
    CL_CHECK(cl_case_num(c, "tp", &v[0]));
    CL_CHECK(cl_case_num(c, "pp", &v[1]));
    CL_CHECK(cl_case_num(c, "dp", &v[2]));
    if (cl_case_str(c, "order", &order) != CL_OK)
        order = "tp-dp-pp";
    cl_clear_error();
    memset(&a, 0xff, sizeof a);
    a.tp = (int)v[0], a.pp = (int)v[1], a.dp = (int)v[2];
    a.tp_pp_dp = strcmp(order, "tp-pp-dp") == 0;
    long long n = (long long)a.tp * a.pp * a.dp;
    a.first = 0;
    a.count = n < 1 ? 1 : n > LAB07_MAX_RANKS ? LAB07_MAX_RANKS : (int)n;
    cl_result rc = cl_case_call(c, "split", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    long long x[6][LAB07_MAX_RANKS];
    for (int i = 0; i < a.count; i++) {
        const lab07_split *s = &a.out[i];
        long long vals[6] = {s->tp_color, s->tp_key,   s->dp_color,
                             s->dp_key,   s->pp_color, s->pp_key};
        for (int k = 0; k < 6; k++)
            x[k][i] = vals[k];
    }
    static const char *names[6] = {"tp_color", "tp_key",   "dp_color",
                                   "dp_key",   "pp_color", "pp_key"};
    for (int k = 0; k < 6 && rc == CL_OK; k++)
        cl_col_ints(row, names[k], x[k], (size_t)a.count);
    return rc;
}

cl_result visible_case(cl_case *c)
{
    static visible_args a;
    double nodes, gpus;
    const char *text;
    CL_CHECK(cl_case_num(c, "nodes", &nodes));
    CL_CHECK(cl_case_num(c, "gpus", &gpus));
    CL_CHECK(cl_case_str(c, "mapping", &text));
    memset(&a, 0, sizeof a);
    a.nodes = (int)nodes, a.gpus_per_node = (int)gpus;
    int n = 0;
    for (const char *s = text; *s && n < LAB07_MAX_RANKS; n++) {
        char *end;
        a.gpu_of_rank[n] = (int)strtol(s, &end, 10);
        s = *end == ',' ? end + 1 : end;
        if (end == text) {
            cl_set_error("mapping=%s: expected GPU,GPU,...", text);
            return CL_ERR_INVALID;
        }
    }
    cl_result rc = cl_case_call(c, "visible", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    char joined[LAB07_MAX_NODES * (LAB07_VISIBLE_LEN + 1)] = "";
    size_t len = 0;
    for (int i = 0; i < a.nodes && i < LAB07_MAX_NODES && rc == CL_OK; i++) {
        a.plan.visible[i][LAB07_VISIBLE_LEN - 1] = '\0';
        len += (size_t)snprintf(joined + len, sizeof joined - len, "%s%s", i ? ";" : "",
                                a.plan.visible[i]);
    }
    cl_col_str(row, "visible", joined);
    return rc;
}

/* --- gpu: TP communicators from the student's colours, AllGather on them ---------------------- */

cl_result gpu_split(cl_run *run, cl_comm *comm)
{
    const cl_opts *o = cl_run_opts(run);
    int tp, pp, dp;
    CL_CHECK(cl_opt_int(run, "tp", 1, 1024, &tp));
    CL_CHECK(cl_opt_int(run, "pp", 1, 1024, &pp));
    CL_CHECK(cl_opt_int(run, "dp", 1, 1024, &dp));
    int order = strcmp(cl_opt(run, "order"), "tp-pp-dp") == 0;
    int rank = cl_comm_rank(comm), size = cl_comm_size(comm);
    if (tp < 1 || pp < 1 || dp < 1 || tp * pp * dp != size) {
        cl_set_error("--tp %d --pp %d --dp %d on %d ranks", tp, pp, dp, size);
        return CL_ERR_INVALID;
    }
    static split_args a;
    memset(&a, 0, sizeof a);
    a.tp = tp, a.pp = pp, a.dp = dp, a.tp_pp_dp = order, a.first = rank, a.count = 1;
    cl_call_result res;
    CL_CHECK(cl_student_run(comm, "split", &a, sizeof a, 0, &res));
    if (res.status != CL_OK)
        return res.status;
    cl_sim_train_plan p = {.tp = tp, .pp = pp, .dp = dp, .order = order};
    int t, d, s;
    cl_sim_train_coords(&p, rank, &t, &d, &s);
    cl_comm *group = NULL;
    CL_CHECK(cl_comm_split(comm, a.out[0].tp_color, a.out[0].tp_key, &group));
    /* The group must be the (d, s) TP group, in TP index order. */
    int64_t bad = !group || cl_comm_size(group) != tp || cl_comm_rank(group) != t;
    CL_CHECK(cl_agree(comm, CL_SUM, &bad, 1));
    if (bad) {
        if (group)
            CL_CHECK(cl_comm_free(group));
        cl_row *row = cl_row_begin(run, comm);
        cl_col_int(row, "bad_split_ranks", bad);
        cl_row_end(row);
        return CL_OK;
    }
    size_t count = o->bytes / sizeof(float) / (size_t)tp * (size_t)tp;
    double busbw[CL_LIBRARY_BUSBW_MAX_REPEATS], wrong;
    int reps;
    CL_CHECK(
        cl_library_coll_busbw(run, group, comm, CL_COLL_ALLGATHER, count, busbw, &reps, &wrong));
    cl_row *row = cl_row_begin(run, comm);
    cl_col_int(row, "bad_split_ranks", 0);
    cl_col_int(row, "bytes", (long long)(count * sizeof(float)));
    cl_col_nums(row, "tp_busbw", busbw, (size_t)reps, "%.2f");
    cl_col_int(row, "wrong", (long long)wrong);
    cl_row_end(row);
    return cl_comm_free(group);
}
