/* harness_data.c: lab 20's buffers, fresh inputs and checks, and the calls of both sides. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab20_harness.h"
#include "sim/sim_system.h"

cl_result lab20_local(cl_run *run, cl_comm *c, int *local)
{
    const char *s = cl_opt(run, "local");
    char *end;
    long v = strtol(s ? s : "0", &end, 10);
    if (!s || *end || v < 0 || v > 4096) {
        cl_set_error("--local wants a whole number of ranks per node, not '%s'", s ? s : "");
        return CL_ERR_INVALID;
    }
    if (v == 0 && cl_comm_on_sim(c)) {
        cl_sim_system sys;
        CL_CHECK(cl_sim_system_load(cl_run_opts(run)->system, &sys));
        v = sys.gpus_per_node;
    }
    *local = v > 0 ? (int)v : 1;
    if (cl_comm_size(c) % *local) {
        cl_set_error("%d ranks are not whole nodes of %d (--local)", cl_comm_size(c), *local);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

static cl_result alloc_all(cl_comm *c, a2a *b)
{
    size_t es = cl_dtype_size(b->t),
           big = b->send_elems > b->recv_elems ? b->send_elems : b->recv_elems;
    b->scratch_bytes = 2 * big * es < 4096 ? 4096 : 2 * big * es;
    CL_CHECK(cl_mem_alloc(c, b->send_elems * es + 1, &b->send));
    CL_CHECK(cl_mem_alloc(c, (b->recv_elems + LAB20_GUARD) * es, &b->recv));
    return cl_mem_alloc(c, b->scratch_bytes, &b->scratch);
}

cl_result lab20_a2a_open(cl_comm *c, a2a *b, size_t count, cl_dtype t)
{
    memset(b, 0, sizeof *b);
    b->count = b->send_elems = b->recv_elems = count;
    b->t = t;
    return alloc_all(c, b);
}

cl_result lab20_a2av_open(cl_comm *c, a2a *b, const size_t *v, cl_dtype t,
                          const size_t *(*counts_of)(int rank, void *ctx), void *ctx)
{
    int p = cl_comm_size(c);
    memset(b, 0, sizeof *b);
    b->t = t;
    b->v = v;
    b->counts_of = counts_of;
    b->ctx = ctx;
    for (int j = 0; j < p; j++) {
        b->send_elems += v[j];
        b->recv_elems += v[2 * p + j];
    }
    return alloc_all(c, b);
}

void lab20_a2a_close(cl_comm *c, a2a *b)
{
    if (b->send)
        cl_mem_free(c, b->send);
    if (b->recv)
        cl_mem_free(c, b->recv);
    if (b->scratch)
        cl_mem_free(c, b->scratch);
    b->send = b->recv = b->scratch = NULL;
}

/* Data that is only moved: max/min inputs spread widely, so a misplaced element shows. */
#define DATA_OP CL_MAX

cl_result lab20_a2a_fill(cl_run *run, cl_comm *c, a2a *b)
{
    size_t es = cl_dtype_size(b->t);
    CL_CHECK(cl_fresh_seed(run, c, &b->seed));
    CL_CHECK(cl_fill(c, b->send, b->send_elems, b->t, DATA_OP, b->seed, cl_comm_rank(c), 0));
    return cl_poison(c, b->recv, (b->recv_elems + LAB20_GUARD) * es, b->t);
}

cl_result lab20_a2a_check(cl_comm *c, const a2a *b, int64_t bad[3])
{
    int p = cl_comm_size(c), r = cl_comm_rank(c);
    size_t es = cl_dtype_size(b->t), n, wrong = 0;
    const char *out = b->recv;
    for (int i = 0; i < p; i++) {
        size_t len, at, first;
        if (b->v) { /* rank i's block for r starts where its sendcounts before r end */
            const size_t *sc = b->counts_of(i, b->ctx);
            first = 0;
            for (int k = 0; k < r; k++)
                first += sc[k];
            len = b->v[2 * p + i];
            at = b->v[3 * p + i];
        } else {
            len = b->count / (size_t)p;
            at = (size_t)i * len;
            first = (size_t)r * len;
        }
        CL_CHECK(
            cl_count_wrong(c, out + at * es, len, b->t, DATA_OP, b->seed, i, i + 1, first, &n));
        wrong += n;
    }
    bad[0] = (int64_t)wrong;
    CL_CHECK(cl_count_unpoisoned(c, out + b->recv_elems * es, LAB20_GUARD, b->t, &n));
    bad[1] = (int64_t)n;
    CL_CHECK(cl_count_wrong(c, b->send, b->send_elems, b->t, DATA_OP, b->seed, r, r + 1, 0, &n));
    bad[2] = (int64_t)n;
    return cl_agree(c, CL_SUM, bad, 3);
}

void lab20_coll_args(const a2a *b, cl_coll_args *a)
{
    *a = (cl_coll_args){.sendbuf = b->send,
                        .recvbuf = b->recv,
                        .count = b->count,
                        .dtype = b->t,
                        .op = CL_SUM,
                        .scratch = b->scratch,
                        .scratch_bytes = b->scratch_bytes};
}

static char first_error[400], first_forbidden[48];

cl_result lab20_call(cl_comm *c, const char *entry, void *args, size_t bytes, unsigned allow,
                     call_out *out)
{
    cl_call_result res;
    memset(out, 0, sizeof *out);
    first_error[0] = first_forbidden[0] = '\0';
    CL_CHECK(cl_barrier(c));
    CL_CHECK(cl_student_run(c, entry, args, bytes, allow, &res));
    if (res.status != CL_OK && !first_error[0])
        snprintf(first_error, sizeof first_error, "rank %d: %s", cl_comm_rank(c), res.error);
    if (res.forbidden[0] && !first_forbidden[0])
        snprintf(first_forbidden, sizeof first_forbidden, "%s", res.forbidden);
    int64_t v[2] = {res.status, res.forbidden[0] != 0};
    double t = res.seconds;
    CL_CHECK(cl_agree(c, CL_MAX, v, 2));
    CL_CHECK(cl_agree_max(c, &t, 1));
    out->status = (cl_result)v[0];
    out->seconds = t;
    if (v[0])
        snprintf(out->error, sizeof out->error, "%s",
                 first_error[0] ? first_error : "failed on another rank");
    if (v[1])
        snprintf(out->forbidden, sizeof out->forbidden, "%s",
                 first_forbidden[0] ? first_forbidden : "(on another rank)");
    return CL_OK;
}

cl_result lab20_library(cl_comm *c, const a2a *b, double *seconds)
{
    cl_coll_args a;
    lab20_coll_args(b, &a);
    int p = cl_comm_size(c);
    if (b->v) {
        a.sendcounts = b->v;
        a.sdispls = b->v + p;
        a.recvcounts = b->v + 2 * p;
        a.rdispls = b->v + 3 * p;
    }
    CL_CHECK(cl_barrier(c));
    double t0 = cl_comm_time(c);
    CL_CHECK(cl_library_coll(c, b->v ? CL_COLL_ALLTOALLV : CL_COLL_ALLTOALL, &a));
    *seconds = cl_comm_time(c) - t0;
    return cl_agree_max(c, seconds, 1);
}
