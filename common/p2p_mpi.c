/* p2p_mpi.c: the "cpu" backend: one MPI process per rank, host memory.
 *
 * Transfers are MPI_Isend/MPI_Irecv of bytes on one tag, so matching is in
 * posting order per peer pair, and every wait is an MPI_Waitall. Buffers come
 * from the arena the student's program shares (boundary/arena.h), so that the
 * student's code and MPI see the same memory. The library's collectives are
 * MPI's own (MPI_Allreduce, ...): the baselines of the collective labs.
 */
#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "boundary/arena.h"
#include "buffers.h"
#include "launch.h"
#include "mpi_ranks.h"
#include "p2p_backend.h"

#define TAG 7

typedef struct mpi_comm {
    cl_comm base; /* first: the public part */
    MPI_Comm comm;
} mpi_comm;

static const cl_backend_ops mpi_ops;

/* Requests of this process, by id - 1, and the bytes each receive expects
 * (-1 for a send): this interface, unlike MPI, wants them all. */
static MPI_Request *reqs;
static int *expect;
static int nreqs, capreqs;

static cl_result mpi_error(const char *what, int err)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(err, text, &len);
    cl_set_error("%s: %s", what, text);
    return CL_ERR_BACKEND;
}

/* The one mapping of CommLab's types and reductions to MPI's. */
static cl_result mpi_types(cl_dtype t, cl_op op, MPI_Datatype *mt, MPI_Op *mo)
{
    static const MPI_Op ops[CL_OP_COUNT] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN};
    switch (t) {
    case CL_INT32: *mt = MPI_INT32_T; break;
    case CL_INT64: *mt = MPI_INT64_T; break;
    case CL_FLOAT32: *mt = MPI_FLOAT; break;
    case CL_FLOAT64: *mt = MPI_DOUBLE; break;
    default: cl_set_error("bad data type %d", (int)t); return CL_ERR_INVALID;
    }
    if (mo) {
        if ((unsigned)op >= CL_OP_COUNT) {
            cl_set_error("bad reduction %d", (int)op);
            return CL_ERR_INVALID;
        }
        *mo = ops[op];
    }
    return CL_OK;
}

static cl_result fits_int(size_t n, const char *what)
{
    if (n > INT_MAX) {
        cl_set_error("%s of %zu exceeds MPI's int count", what, n);
        return CL_ERR_UNSUPPORTED;
    }
    return CL_OK;
}

static cl_result new_request(int *id)
{
    for (int i = 0; i < nreqs; i++)
        if (reqs[i] == MPI_REQUEST_NULL) {
            *id = i + 1;
            return CL_OK;
        }
    if (nreqs == capreqs) {
        int cap = capreqs ? 2 * capreqs : 64;
        MPI_Request *q = realloc(reqs, (size_t)cap * sizeof *q);
        if (q)
            reqs = q;
        int *e = realloc(expect, (size_t)cap * sizeof *e);
        if (e)
            expect = e;
        if (!q || !e)
            return CL_ERR_NOMEM;
        capreqs = cap;
    }
    reqs[nreqs] = MPI_REQUEST_NULL;
    *id = ++nreqs;
    return CL_OK;
}

static cl_result post(cl_comm *c, int is_send, void *buf, size_t bytes, int peer, int *req)
{
    CL_CHECK(fits_int(bytes, "a message"));
    int id;
    CL_CHECK(new_request(&id));
    MPI_Comm comm = ((mpi_comm *)c)->comm;
    int err = is_send ? MPI_Isend(buf, (int)bytes, MPI_BYTE, peer, TAG, comm, &reqs[id - 1])
                      : MPI_Irecv(buf, (int)bytes, MPI_BYTE, peer, TAG, comm, &reqs[id - 1]);
    if (err != MPI_SUCCESS)
        return mpi_error(is_send ? "MPI_Isend" : "MPI_Irecv", err);
    expect[id - 1] = is_send ? -1 : (int)bytes;
    *req = id;
    return CL_OK;
}

static cl_result mpi_isend(cl_comm *c, const void *buf, size_t bytes, int peer, int *req)
{
    return post(c, 1, (void *)buf, bytes, peer, req);
}

static cl_result mpi_irecv(cl_comm *c, void *buf, size_t bytes, int peer, int *req)
{
    return post(c, 0, buf, bytes, peer, req);
}

static cl_result check_id(int id)
{
    if (id < 1 || id > nreqs) {
        cl_set_error("request %d is not in flight", id);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

/* A receive that got fewer bytes than posted: MPI allows it, this interface does not. */
static cl_result check_count(const MPI_Status *st, int want)
{
    int got = 0;
    MPI_Get_count(st, MPI_BYTE, &got);
    if (want >= 0 && got != want) {
        cl_set_error("received %d bytes from rank %d, expected %d", got, st->MPI_SOURCE, want);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

static cl_result mpi_wait(cl_comm *c, int n, const int *ids)
{
    (void)c;
    for (int i = 0; i < n; i++) {
        CL_CHECK(check_id(ids[i]));
        MPI_Status st;
        int err = MPI_Wait(&reqs[ids[i] - 1], &st);
        if (err != MPI_SUCCESS)
            return mpi_error("MPI_Wait", err);
        CL_CHECK(check_count(&st, expect[ids[i] - 1]));
    }
    return CL_OK;
}

static cl_result mpi_test(cl_comm *c, int id, int *done)
{
    (void)c;
    CL_CHECK(check_id(id));
    MPI_Status st;
    int err = MPI_Test(&reqs[id - 1], done, &st);
    if (err != MPI_SUCCESS)
        return mpi_error("MPI_Test", err);
    return *done ? check_count(&st, expect[id - 1]) : CL_OK;
}

static cl_result mpi_barrier(cl_comm *c)
{
    int err = MPI_Barrier(((mpi_comm *)c)->comm);
    return err == MPI_SUCCESS ? CL_OK : mpi_error("MPI_Barrier", err);
}

cl_result cl_mpi_world_ranks(MPI_Comm comm, int **world)
{
    int size;
    MPI_Comm_size(comm, &size);
    int *mine = malloc((size_t)size * sizeof *mine);
    *world = malloc((size_t)size * sizeof **world);
    if (!mine || !*world) {
        free(mine), free(*world);
        *world = NULL;
        return CL_ERR_NOMEM;
    }
    for (int i = 0; i < size; i++)
        mine[i] = i;
    MPI_Group g, wg;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int err = MPI_Group_translate_ranks(g, size, mine, wg, *world);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    free(mine);
    if (err != MPI_SUCCESS) {
        free(*world);
        *world = NULL;
        return mpi_error("MPI_Group_translate_ranks", err);
    }
    return CL_OK;
}

static cl_result mpi_split(cl_comm *c, int color, int key, cl_comm **out)
{
    MPI_Comm nc;
    int err = MPI_Comm_split(((mpi_comm *)c)->comm, color < 0 ? MPI_UNDEFINED : color, key, &nc);
    if (err != MPI_SUCCESS)
        return mpi_error("MPI_Comm_split", err);
    if (nc == MPI_COMM_NULL)
        return CL_OK;
    mpi_comm *m = calloc(1, sizeof *m);
    int rank, size, *world = NULL;
    MPI_Comm_rank(nc, &rank);
    MPI_Comm_size(nc, &size);
    cl_result rc = m ? cl_mpi_world_ranks(nc, &world) : CL_ERR_NOMEM;
    if (rc != CL_OK) {
        free(m);
        MPI_Comm_free(&nc);
        return rc;
    }
    MPI_Comm_set_errhandler(nc, MPI_ERRORS_RETURN);
    cl_comm_init(&m->base, &mpi_ops, rank, size, c->world_rank);
    m->base.world_of = world;
    m->comm = nc;
    *out = &m->base;
    return CL_OK;
}

static cl_result mpi_comm_free(cl_comm *c)
{
    mpi_comm *m = (mpi_comm *)c;
    if (!c->world_of) {
        cl_set_error("cl_comm_free: the world communicator cannot be freed");
        return CL_ERR_INVALID;
    }
    MPI_Comm_free(&m->comm);
    cl_comm_fini(c);
    free(m);
    return CL_OK;
}

static cl_result mpi_agree(cl_comm *c, cl_op op, int64_t *v, int n)
{
    MPI_Op mo = op == CL_SUM ? MPI_SUM : op == CL_MAX ? MPI_MAX : MPI_MIN;
    int err = MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT64_T, mo, ((mpi_comm *)c)->comm);
    return err == MPI_SUCCESS ? CL_OK : mpi_error("MPI_Allreduce", err);
}

static cl_result mpi_mem_alloc(cl_comm *c, size_t bytes, void **out)
{
    CL_CHECK(cl_host_alloc(bytes, out));
    cl_result rc = cl_buffers_add((uintptr_t)*out, bytes, c->world_rank, NULL);
    if (rc != CL_OK) {
        cl_host_free(*out);
        *out = NULL;
    }
    return rc;
}

static cl_result mpi_mem_free(cl_comm *c, void *p)
{
    (void)c;
    CL_CHECK(cl_buffers_remove((uintptr_t)p, NULL));
    cl_host_free(p);
    return CL_OK;
}

static cl_result mpi_copy(cl_comm *c, void *dst, const void *src, size_t bytes)
{
    (void)c;
    memmove(dst, src, bytes);
    return CL_OK;
}

static cl_result mpi_reduce_local(cl_comm *c, void *inout, const void *in, size_t count, cl_dtype t,
                                  cl_op op)
{
    (void)c;
    return cl_reduce_host(inout, in, count, t, op);
}

static double mpi_time(cl_comm *c)
{
    (void)c;
    return MPI_Wtime();
}

/* --- MPI's collectives: the baselines ---------------------------------------------------- */

static cl_result int_counts(int p, size_t count, const size_t *in, int *out, int *displs)
{
    size_t at = 0;
    for (int i = 0; i < p; i++) {
        size_t off, len;
        if (in)
            len = in[i], off = at;
        else
            cl_coll_block(count, p, i, &off, &len);
        CL_CHECK(fits_int(len, "a block"));
        CL_CHECK(fits_int(off + len, "an offset"));
        out[i] = (int)len;
        if (displs)
            displs[i] = (int)off;
        at += len;
    }
    return CL_OK;
}

cl_result cl_mpi_library(cl_comm *c, cl_coll_kind kind, const cl_coll_args *a)
{
    MPI_Comm comm = ((mpi_comm *)c)->comm;
    int p = c->size, r = c->rank, err = MPI_SUCCESS;
    MPI_Datatype mt;
    MPI_Op mo = MPI_SUM;
    CL_CHECK(mpi_types(a->dtype, cl_coll_reduces(kind) ? a->op : CL_SUM, &mt,
                       cl_coll_reduces(kind) ? &mo : NULL));
    CL_CHECK(fits_int(a->count, "a count"));
    int n = (int)a->count;
    int *cnt = malloc((size_t)p * 4 * sizeof *cnt);
    if (!cnt)
        return CL_ERR_NOMEM;
    int *dsp = cnt + p, *rcnt = cnt + 2 * p, *rdsp = cnt + 3 * p;
    cl_result rc = CL_OK;
    void *sb = (void *)a->sendbuf;
    switch (kind) {
    case CL_COLL_ALLREDUCE: err = MPI_Allreduce(sb, a->recvbuf, n, mt, mo, comm); break;
    case CL_COLL_REDUCESCATTER:
        rc = int_counts(p, a->count, NULL, cnt, NULL);
        if (rc == CL_OK)
            err = MPI_Reduce_scatter(sb, a->recvbuf, cnt, mt, mo, comm);
        break;
    case CL_COLL_ALLGATHER:
        rc = int_counts(p, a->count, NULL, cnt, dsp);
        if (rc == CL_OK)
            err = MPI_Allgatherv(sb, cnt[r], mt, a->recvbuf, cnt, dsp, mt, comm);
        break;
    case CL_COLL_BROADCAST:
        if (r == a->root)
            memcpy(a->recvbuf, a->sendbuf, a->count * cl_dtype_size(a->dtype));
        err = MPI_Bcast(a->recvbuf, n, mt, a->root, comm);
        break;
    case CL_COLL_REDUCE: err = MPI_Reduce(sb, a->recvbuf, n, mt, mo, a->root, comm); break;
    case CL_COLL_ALLTOALL: err = MPI_Alltoall(sb, n / p, mt, a->recvbuf, n / p, mt, comm); break;
    case CL_COLL_ALLTOALLV:
        rc = int_counts(p, 0, a->sendcounts, cnt, dsp);
        if (rc == CL_OK)
            rc = int_counts(p, 0, a->recvcounts, rcnt, rdsp);
        for (int i = 0; rc == CL_OK && i < p; i++) {
            dsp[i] = (int)a->sdispls[i];
            rdsp[i] = (int)a->rdispls[i];
        }
        if (rc == CL_OK)
            err = MPI_Alltoallv(sb, cnt, dsp, mt, a->recvbuf, rcnt, rdsp, mt, comm);
        break;
    default: cl_set_error("no MPI collective for kind %d", (int)kind); rc = CL_ERR_INVALID;
    }
    free(cnt);
    if (rc == CL_OK && err != MPI_SUCCESS)
        rc = mpi_error(cl_coll_name(kind), err);
    return rc;
}

/* --- launch ----------------------------------------------------------------------------- */

static void release_host(const cl_buffer *b) { cl_host_free((void *)b->base); }

cl_result cl_mpi_launch(const cl_launch_opts *opts, cl_rank_body body, void *arg)
{
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized && MPI_Init(opts->argc, opts->argv) != MPI_SUCCESS) {
        cl_set_error("MPI_Init failed");
        return CL_ERR_BACKEND;
    }
    mpi_comm *m = calloc(1, sizeof *m);
    if (!m)
        return CL_ERR_NOMEM;
    int rank, size;
    MPI_Comm_dup(MPI_COMM_WORLD, &m->comm);
    MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(m->comm, &rank);
    MPI_Comm_size(m->comm, &size);
    cl_comm_init(&m->base, &mpi_ops, rank, size, rank);

    cl_result rc = body(&m->base, arg);
    if (rc != CL_OK && size > 1) {
        /* Peers may be blocked waiting for this rank: stop them all now rather
         * than leave the job to its time limit. */
        cl_report_failure(__FILE__, __LINE__, "rank body", rc);
        MPI_Abort(MPI_COMM_WORLD, cl_exit_status(rc));
    }
    cl_buffers_release_all(-1, release_host); /* what the rank did not free */
    MPI_Comm_free(&m->comm);
    cl_comm_fini(&m->base);
    free(m);
    free(reqs);
    free(expect);
    reqs = NULL;
    expect = NULL;
    nreqs = capreqs = 0;
    MPI_Finalize();
    return rc;
}

static const cl_backend_ops mpi_ops = {
    .name = "cpu",
    .isend = mpi_isend,
    .irecv = mpi_irecv,
    .wait = mpi_wait,
    .test = mpi_test,
    .barrier = mpi_barrier,
    .split = mpi_split,
    .comm_free = mpi_comm_free,
    .agree = mpi_agree,
    .mem_alloc = mpi_mem_alloc,
    .mem_free = mpi_mem_free,
    .mem_upload = mpi_copy,
    .mem_download = mpi_copy,
    .reduce_local = mpi_reduce_local,
    .copy_local = mpi_copy,
    .time = mpi_time,
};
