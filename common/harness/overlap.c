/* overlap.c: the modelled GPU and the measurements of an overlapped step (overlap.h). */
#include "overlap.h"

#include <math.h>
#include <sched.h>
#include <string.h>

#ifdef CL_HAVE_MPI
#include <mpi.h>
#endif

#include "p2p_sim.h"

int cl_overlap_repeats(const cl_run *run)
{
    int r = cl_run_opts(run)->repeats;
    return r > CL_OVERLAP_MAX_SAMPLES ? CL_OVERLAP_MAX_SAMPLES : r;
}

cl_result cl_overlap_alloc(cl_comm *c, cl_overlap *o, size_t count)
{
    o->count = count;
    CL_CHECK(cl_mem_alloc(c, count * sizeof(float), (void **)&o->grads));
    return cl_mem_alloc(c, 2 * count * sizeof(float), (void **)&o->result);
}

void cl_overlap_free(cl_comm *c, cl_overlap *o)
{
    if (o->result)
        cl_mem_free(c, o->result);
    if (o->grads)
        cl_mem_free(c, o->grads);
    o->result = o->grads = NULL;
}

cl_result cl_overlap_busy_until(cl_comm *c, double end)
{
    if (cl_comm_on_sim(c))
        return cl_sim_compute(c, fmax(0, end - cl_comm_time(c)));
    while (cl_comm_time(c) < end) {
#ifdef CL_HAVE_MPI
        int flag; /* MPI moves the posted transfers meanwhile */
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
#endif
        sched_yield(); /* the modelled kernel runs on the GPU, not on this core */
    }
    return CL_OK;
}

cl_result cl_overlap_allreduce(cl_comm *c, const cl_overlap *o, double *seconds)
{
    cl_coll_args a = {.sendbuf = o->grads,
                      .recvbuf = o->result,
                      .count = o->count,
                      .dtype = CL_FLOAT32,
                      .op = CL_SUM,
                      .scratch = o->result + o->count,
                      .scratch_bytes = o->count * sizeof(float)};
    return cl_library_coll_timed(c, CL_COLL_ALLREDUCE, &a, seconds);
}

cl_result cl_overlap_alone(cl_comm *c, const cl_overlap *o, cl_overlap_sample *s)
{
    cl_call_result res;
    CL_CHECK(cl_barrier(c));
    CL_CHECK(cl_student_run(c, "kernels", o->args, o->args_bytes, CL_ALLOW_LAB, &res));
    if (res.status != CL_OK)
        return res.status;
    s->kernels_s = res.seconds;
    CL_CHECK(cl_agree_max(c, &s->kernels_s, 1));
    return cl_overlap_allreduce(c, o, &s->allreduce_s);
}

cl_result cl_overlap_step(cl_comm *c, const cl_overlap *o, uint64_t seed, double *start,
                          double *seconds, size_t *wrong)
{
    cl_call_result res;
    CL_CHECK(cl_barrier(c));
    *start = cl_comm_time(c);
    CL_CHECK(cl_student_run(c, "step", o->args, o->args_bytes,
                            CL_ALLOW_P2P | CL_ALLOW_LOCAL | CL_ALLOW_LAB, &res));
    if (res.status != CL_OK)
        return res.status;
    *seconds = res.seconds;
    *wrong = 0;
    return cl_count_wrong(c, o->grads, o->count, CL_FLOAT32, CL_SUM, seed, 0, cl_comm_size(c), 0,
                          wrong);
}

cl_row *cl_overlap_row(cl_run *run, const cl_comm *c, const cl_overlap_sample *s, int n)
{
    double k[CL_OVERLAP_MAX_SAMPLES], l[CL_OVERLAP_MAX_SAMPLES], st[CL_OVERLAP_MAX_SAMPLES];
    for (int i = 0; i < n; i++)
        k[i] = s[i].kernels_s, l[i] = s[i].allreduce_s, st[i] = s[i].step_s;
    cl_row *row = cl_row_begin(run, c);
    cl_col_nums(row, "kernels_s", k, (size_t)n, "%.6f");
    cl_col_nums(row, "allreduce_s", l, (size_t)n, "%.6f");
    cl_col_nums(row, "step_s", st, (size_t)n, "%.6f");
    return row;
}

long long cl_overlap_wrong(const cl_overlap_sample *s, int n)
{
    double wrong = 0;
    for (int i = 0; i < n; i++)
        wrong += s[i].wrong;
    return (long long)wrong;
}

void cl_overlap_gpu_row(cl_run *run, const cl_comm *c, const cl_overlap_sample *s, int n)
{
    cl_row *row = cl_overlap_row(run, c, s, n);
    cl_col_int(row, "wrong", cl_overlap_wrong(s, n));
    cl_row_end(row);
}
