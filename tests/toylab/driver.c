/* driver.c: the toy lab's plug-in. Everything else (main(), the options, the
 * student's process, the ranks on every backend, the timing, the table and the
 * JSON) is the harness's. */
#include "harness/harness.h"
#include "toylab.h"

typedef struct scale_args {
    double x, k, out;
} scale_args;

typedef struct shift_args {
    void *in, *out;
    size_t bytes;
    int hops;
} shift_args;

#ifdef CL_STUDENT_SIDE

static cl_result scale(cl_comm *c, void *args)
{
    (void)c;
    scale_args *a = args;
    return toy_scale(a->x, a->k, &a->out);
}

static cl_result shift(cl_comm *c, void *args)
{
    shift_args *a = args;
    return toy_shift(c, a->in, a->out, a->bytes, a->hops);
}

CL_STUDENT_ENTRIES({"scale", scale}, {"shift", shift});

#else

static cl_result scale_case(cl_case *c)
{
    scale_args a = {0};
    CL_CHECK(cl_case_num(c, "x", &a.x));
    CL_CHECK(cl_case_num(c, "k", &a.k));
    cl_result rc = cl_case_call(c, "scale", &a, sizeof a);
    cl_col_num(cl_case_row(c), "out", a.out, "%g");
    return rc;
}

/* Fresh inputs, a poisoned output, the student's call timed by the harness,
 * and every byte checked against the previous rank's inputs. */
static cl_result shift_mode(cl_run *run, cl_comm *c)
{
    size_t bytes = cl_run_opts(run)->bytes;
    int rank = cl_comm_rank(c), n = cl_comm_size(c);
    shift_args a = {.bytes = bytes};
    uint64_t seed;
    cl_call_result res;
    size_t wrong = 0;
    cl_result rc = CL_OK;
    CL_CHECK(cl_opt_int(run, "hops", 1, n - 1, &a.hops));
    CL_TRY(cl_mem_alloc(c, bytes, &a.in));
    CL_TRY(cl_mem_alloc(c, bytes, &a.out));
    CL_TRY(cl_fresh_seed(run, c, &seed));
    CL_TRY(cl_fill_bytes(c, a.in, bytes, seed, rank, 0));
    CL_TRY(cl_poison(c, a.out, bytes, CL_INT32));
    CL_TRY(cl_student_run(c, "shift", &a, sizeof a, CL_ALLOW_P2P, &res));
    if (res.status == CL_OK)
        CL_TRY(cl_count_wrong_bytes(c, a.out, bytes, seed, (rank + n - a.hops) % n, 0, &wrong));
    double v[2] = {(double)wrong, res.seconds};
    CL_TRY(cl_agree_sum(c, v, 1));
    CL_TRY(cl_agree_max(c, v + 1, 1));
    cl_row *row = cl_row_begin(run, c);
    cl_col_int(row, "bytes", (long long)bytes);
    cl_col_int(row, "wrong", (long long)v[0]);
    cl_col_num(row, "time_us", v[1] * 1e6, "%.2f");
    cl_col_call(row, &res);
    cl_row_end(row);
done:
    cl_mem_free(c, a.out);
    cl_mem_free(c, a.in);
    return rc;
}

const cl_lab cl_lab_def = {
    .name = "toylab",
    .title = "The smallest lab: one case function, one ranks function",
    .modes = (const cl_mode[]){{.name = "scale", .help = "your x * k: x= k=", .cases = scale_case},
                               {.name = "shift",
                                .help = "every rank's --bytes to rank + --hops, checked",
                                .ranks = shift_mode,
                                .min_ranks = 2},
                               {0}},
    .options =
        (const cl_option[]){{"hops", "N  shift: the distance to the receiving rank", "1"}, {0}},
};

#endif
