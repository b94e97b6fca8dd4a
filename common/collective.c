/* collective.c: the collective labs' harness: verify, time and report a collective. */
#include "collective.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>
#ifdef CL_HAVE_CUDA
#include <nccl.h>
#endif

#include "data.h"
#include "json.h"
#include "stats.h"
#include "timing.h"

#define GUARD_ELEMS 64          /* poisoned elements after every output */
#define SAMPLE_TARGET_S 0.02    /* a timed sample lasts about this long */
#define MAX_ITERS 1000

/* --- forbidden-call guard ---------------------------------------------------------- */

static int guard_depth;
static char guard_first[48];

void cl_coll_guard_enter(void) { guard_depth++; }
void cl_coll_guard_leave(void) { guard_depth--; }
const char *cl_coll_guard_hit(void) { return guard_first[0] ? guard_first : NULL; }
void cl_coll_guard_reset(void) { guard_first[0] = '\0'; }

void cl_coll_guard_note(const char *name)
{
    if (guard_depth > 0 && !guard_first[0])
        snprintf(guard_first, sizeof guard_first, "%s", name);
}

/* MPI's collectives: Open MPI defines MPI_X as a weak alias of PMPI_X, so these
 * definitions are the ones the program's calls reach. */
int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    cl_coll_guard_note("MPI_Allreduce");
    return PMPI_Allreduce(s, r, n, t, op, c);
}

int MPI_Iallreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                   MPI_Request *q)
{
    cl_coll_guard_note("MPI_Iallreduce");
    return PMPI_Iallreduce(s, r, n, t, op, c, q);
}

int MPI_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c)
{
    cl_coll_guard_note("MPI_Reduce");
    return PMPI_Reduce(s, r, n, t, op, root, c);
}

int MPI_Reduce_scatter(const void *s, void *r, const int counts[], MPI_Datatype t, MPI_Op op,
                       MPI_Comm c)
{
    cl_coll_guard_note("MPI_Reduce_scatter");
    return PMPI_Reduce_scatter(s, r, counts, t, op, c);
}

int MPI_Reduce_scatter_block(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op,
                             MPI_Comm c)
{
    cl_coll_guard_note("MPI_Reduce_scatter_block");
    return PMPI_Reduce_scatter_block(s, r, n, t, op, c);
}

int MPI_Allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                  MPI_Comm c)
{
    cl_coll_guard_note("MPI_Allgather");
    return PMPI_Allgather(s, sn, st, r, rn, rt, c);
}

int MPI_Allgatherv(const void *s, int sn, MPI_Datatype st, void *r, const int rn[],
                   const int displs[], MPI_Datatype rt, MPI_Comm c)
{
    cl_coll_guard_note("MPI_Allgatherv");
    return PMPI_Allgatherv(s, sn, st, r, rn, displs, rt, c);
}

int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c)
{
    cl_coll_guard_note("MPI_Bcast");
    return PMPI_Bcast(b, n, t, root, c);
}

int MPI_Ibcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request *q)
{
    cl_coll_guard_note("MPI_Ibcast");
    return PMPI_Ibcast(b, n, t, root, c, q);
}

#ifdef CL_HAVE_CUDA
/* NCCL's collectives: ncclX is a weak alias of pncclX in libnccl. */
ncclResult_t ncclAllReduce(const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op,
                           ncclComm_t c, cudaStream_t st)
{
    cl_coll_guard_note("ncclAllReduce");
    return pncclAllReduce(s, r, n, t, op, c, st);
}

ncclResult_t ncclReduceScatter(const void *s, void *r, size_t n, ncclDataType_t t,
                               ncclRedOp_t op, ncclComm_t c, cudaStream_t st)
{
    cl_coll_guard_note("ncclReduceScatter");
    return pncclReduceScatter(s, r, n, t, op, c, st);
}

ncclResult_t ncclAllGather(const void *s, void *r, size_t n, ncclDataType_t t, ncclComm_t c,
                           cudaStream_t st)
{
    cl_coll_guard_note("ncclAllGather");
    return pncclAllGather(s, r, n, t, c, st);
}

ncclResult_t ncclBroadcast(const void *s, void *r, size_t n, ncclDataType_t t, int root,
                           ncclComm_t c, cudaStream_t st)
{
    cl_coll_guard_note("ncclBroadcast");
    return pncclBroadcast(s, r, n, t, root, c, st);
}

ncclResult_t ncclBcast(void *b, size_t n, ncclDataType_t t, int root, ncclComm_t c,
                       cudaStream_t st)
{
    cl_coll_guard_note("ncclBcast");
    return pncclBcast(b, n, t, root, c, st);
}

ncclResult_t ncclReduce(const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op,
                        int root, ncclComm_t c, cudaStream_t st)
{
    cl_coll_guard_note("ncclReduce");
    return pncclReduce(s, r, n, t, op, root, c, st);
}
#endif

/* --- small pure helpers --------------------------------------------------------------- */

void cl_coll_block(size_t count, int p, int i, size_t *off, size_t *len)
{
    size_t base = count / (size_t)p, extra = count % (size_t)p, k = (size_t)i;
    *off = k * base + (k < extra ? k : extra);
    *len = base + (k < extra ? 1 : 0);
}

double cl_coll_busbw_factor(cl_coll_kind kind, int p)
{
    switch (kind) {
    case CL_COLL_ALLREDUCE: return 2.0 * (p - 1) / p;
    case CL_COLL_REDUCE_SCATTER:
    case CL_COLL_ALLGATHER: return (double)(p - 1) / p;
    default: return 1.0;
    }
}

const char *cl_coll_kind_name(cl_coll_kind kind)
{
    static const char *const names[CL_COLL_KIND_COUNT] = {"allreduce", "reducescatter",
                                                          "allgather", "broadcast", "reduce"};
    return (unsigned)kind < CL_COLL_KIND_COUNT ? names[kind] : "?";
}

size_t cl_coll_bytes(size_t count, cl_dtype t) { return count * cl_dtype_size(t); }

cl_result cl_coll_baseline_allreduce(cl_comm *comm, const cl_coll_args *a)
{
    return cl_baseline_allreduce(comm, a->sendbuf, a->recvbuf, a->count, a->dtype, a->op);
}

size_t cl_coll_pipeline_chunk(size_t bytes)
{
    size_t c = bytes / 32;
    return c < ((size_t)64 << 10) ? (size_t)64 << 10 : c > ((size_t)4 << 20) ? (size_t)4 << 20 : c;
}

/* The chain broadcast the sim baseline runs: chunks of cl_coll_pipeline_chunk(),
 * each forwarded while the next one arrives. */
static cl_result chain_broadcast(cl_comm *c, const cl_coll_args *a)
{
    int p = cl_comm_size(c), r = cl_comm_rank(c), pos = (r - a->root + p) % p;
    size_t es = cl_dtype_size(a->dtype), n = a->count;
    size_t chunk = cl_coll_pipeline_chunk(n * es) / es, nchunks = (n + chunk - 1) / chunk;
    char *out = a->recvbuf;
    if (pos == 0)
        CL_CHECK(cl_copy_local(c, out, a->sendbuf, n * es));
    for (size_t k = 0; k <= nchunks; k++) {
        CL_CHECK(cl_group_start(c));
        if (k > 0 && pos < p - 1) {
            size_t o = (k - 1) * chunk;
            CL_CHECK(cl_send(c, out + o * es, (n - o < chunk ? n - o : chunk) * es, (r + 1) % p));
        }
        if (k < nchunks && pos > 0) {
            size_t o = k * chunk;
            CL_CHECK(cl_recv(c, out + o * es, (n - o < chunk ? n - o : chunk) * es,
                             (r - 1 + p) % p));
        }
        CL_CHECK(cl_group_end(c));
    }
    return CL_OK;
}

static cl_result mpi_type(cl_dtype t, MPI_Datatype *mt)
{
    switch (t) {
    case CL_INT32: *mt = MPI_INT32_T; return CL_OK;
    case CL_INT64: *mt = MPI_INT64_T; return CL_OK;
    case CL_FLOAT32: *mt = MPI_FLOAT; return CL_OK;
    case CL_FLOAT64: *mt = MPI_DOUBLE; return CL_OK;
    default: cl_set_error("bad data type %d", (int)t); return CL_ERR_INVALID;
    }
}

cl_result cl_coll_baseline_broadcast(cl_comm *comm, const cl_coll_args *a)
{
    const char *backend = cl_comm_backend(comm);
    if (strcmp(backend, "sim") == 0)
        return chain_broadcast(comm, a);
    if (strcmp(backend, "cpu") != 0) {
        cl_set_error("no baseline broadcast on the %s backend", backend);
        return CL_ERR_UNSUPPORTED;
    }
    /* The cpu backend's communicator is a duplicate of MPI_COMM_WORLD: same ranks. */
    MPI_Datatype mt;
    CL_CHECK(mpi_type(a->dtype, &mt));
    size_t es = cl_dtype_size(a->dtype);
    if (a->count > (size_t)2147483647) {
        cl_set_error("broadcast of %zu elements exceeds MPI's int count", a->count);
        return CL_ERR_UNSUPPORTED;
    }
    if (cl_comm_rank(comm) == a->root)
        memcpy(a->recvbuf, a->sendbuf, a->count * es);
    int err = PMPI_Bcast(a->recvbuf, (int)a->count, mt, a->root, MPI_COMM_WORLD);
    if (err != MPI_SUCCESS) {
        cl_set_error("MPI_Bcast failed (%d)", err);
        return CL_ERR_BACKEND;
    }
    return CL_OK;
}

/* --- agreement between ranks: small vectors combined on rank 0 and sent back ------- */

enum { AGREE_MAX, AGREE_SUM };

static int is_sim(cl_comm *c) { return strcmp(cl_comm_backend(c), "sim") == 0; }

/* Simulated ranks share this process (and may run timing-only, where messages
 * carry no data): they agree through memory, between two barriers that cost
 * no virtual time. */
static cl_result agree_sim(cl_comm *c, double *v, int n, int how)
{
    static double *slots;
    static size_t cap;
    int p = cl_comm_size(c), rank = cl_comm_rank(c);
    size_t need = (size_t)p * (size_t)n;
    if (need > cap) {
        double *q = realloc(slots, need * sizeof *q);
        if (!q)
            return CL_ERR_NOMEM;
        slots = q;
        cap = need;
    }
    memcpy(slots + (size_t)rank * n, v, (size_t)n * sizeof *v);
    CL_CHECK(cl_barrier(c));
    for (int k = 0; k < n; k++) {
        double acc = slots[k];
        for (int r = 1; r < p; r++) {
            double x = slots[(size_t)r * n + k];
            acc = how == AGREE_SUM ? acc + x : fmax(acc, x);
        }
        v[k] = acc;
    }
    return cl_barrier(c);
}

static cl_result agree(cl_comm *c, double *v, int n, int how)
{
    int p = cl_comm_size(c), rank = cl_comm_rank(c);
    size_t bytes = (size_t)n * sizeof *v;
    if (p == 1)
        return CL_OK;
    if (is_sim(c))
        return agree_sim(c, v, n, how);
    void *dev;
    double *mine = malloc(bytes);
    if (!mine)
        return CL_ERR_NOMEM;
    CL_CHECK(cl_mem_alloc(c, bytes, &dev));
    if (rank == 0) {
        for (int r = 1; r < p; r++) {
            CL_CHECK(cl_recv(c, dev, bytes, r));
            CL_CHECK(cl_mem_download(c, mine, dev, bytes));
            for (int k = 0; k < n; k++)
                v[k] = how == AGREE_SUM ? v[k] + mine[k] : fmax(v[k], mine[k]);
        }
        CL_CHECK(cl_mem_upload(c, dev, v, bytes));
        for (int r = 1; r < p; r++)
            CL_CHECK(cl_send(c, dev, bytes, r));
    } else {
        CL_CHECK(cl_mem_upload(c, dev, v, bytes));
        CL_CHECK(cl_send(c, dev, bytes, 0));
        CL_CHECK(cl_recv(c, dev, bytes, 0));
        CL_CHECK(cl_mem_download(c, v, dev, bytes));
    }
    CL_CHECK(cl_mem_free(c, dev));
    free(mine);
    return CL_OK;
}

cl_result cl_coll_agree_max(cl_comm *comm, double *v, int n)
{
    return agree(comm, v, n, AGREE_MAX);
}

/* --- one test -------------------------------------------------------------------------- */

typedef struct bufs {
    size_t es, send_elems, recv_elems, off, len;
    void *send, *recv, *scratch;          /* device-capable */
    unsigned char *hsend, *hrecv, *hexp;  /* host */
    size_t scratch_bytes;
} bufs;

static int reducing(cl_coll_kind k)
{
    return k == CL_COLL_ALLREDUCE || k == CL_COLL_REDUCE_SCATTER || k == CL_COLL_REDUCE;
}

static cl_result bufs_open(cl_comm *c, const cl_coll_test *t, bufs *b, int light)
{
    int p = cl_comm_size(c), rank = cl_comm_rank(c);
    memset(b, 0, sizeof *b);
    b->es = cl_dtype_size(t->dtype);
    if (b->es == 0) {
        cl_set_error("unknown data type %d", (int)t->dtype);
        return CL_ERR_INVALID;
    }
    cl_coll_block(t->count, p, rank, &b->off, &b->len);
    cl_coll_kind k = t->entry->kind;
    b->send_elems = k == CL_COLL_ALLGATHER ? b->len : t->count;
    b->recv_elems = k == CL_COLL_REDUCE_SCATTER ? b->len : t->count;
    size_t sb = b->send_elems * b->es, rb = (b->recv_elems + GUARD_ELEMS) * b->es;
    size_t dev_sb = sb, dev_rb = rb;
    size_t two_blocks = 2 * (t->count / (size_t)p + 1);
    b->scratch_bytes = (t->count > two_blocks ? t->count : two_blocks) * b->es;
    if (b->scratch_bytes < 4096)
        b->scratch_bytes = 4096;
    size_t eb = (t->count + GUARD_ELEMS) * b->es;
    if (light) /* nothing is filled or checked: keep the address space small */
        sb = rb = eb = 1;
    b->hsend = malloc(sb ? sb : 1);
    b->hrecv = malloc(rb > sb ? rb : sb ? sb : 1);
    b->hexp = malloc(eb);
    if (!b->hsend || !b->hrecv || !b->hexp)
        return CL_ERR_NOMEM;
    if (!light) {
        cl_pretouch(b->hsend, sb);
        cl_pretouch(b->hrecv, rb > sb ? rb : sb);
        cl_pretouch(b->hexp, eb);
    }
    CL_CHECK(cl_mem_alloc(c, dev_sb, &b->send));
    CL_CHECK(cl_mem_alloc(c, dev_rb, &b->recv));
    CL_CHECK(cl_mem_alloc(c, b->scratch_bytes, &b->scratch));
    return CL_OK;
}

static void bufs_close(cl_comm *c, bufs *b)
{
    cl_mem_free(c, b->send);
    cl_mem_free(c, b->recv);
    cl_mem_free(c, b->scratch);
    free(b->hsend);
    free(b->hrecv);
    free(b->hexp);
}

/* The generator's op for the data of a kind: reductions use their own op's
 * exact data; moves use the max/min data, whose values are spread widely. */
static cl_op data_op(const cl_coll_test *t)
{
    return reducing(t->entry->kind) ? t->op : CL_MAX;
}

static cl_result fill_inputs(cl_comm *c, const cl_coll_test *t, bufs *b, uint64_t seed)
{
    int rank = cl_comm_rank(c);
    cl_coll_kind k = t->entry->kind;
    if (k == CL_COLL_ALLGATHER)
        CL_CHECK(cl_data_fill(b->hsend, b->off, b->len, t->dtype, data_op(t), rank, seed));
    else if (k == CL_COLL_BROADCAST && rank != t->root)
        CL_CHECK(cl_data_poison(b->hsend, b->send_elems, t->dtype));
    else
        CL_CHECK(cl_data_fill(b->hsend, 0, b->send_elems, t->dtype, data_op(t),
                              k == CL_COLL_BROADCAST ? t->root : rank, seed));
    return cl_mem_upload(c, b->send, b->hsend, b->send_elems * b->es);
}

static cl_result poison_output(cl_comm *c, const cl_coll_test *t, bufs *b)
{
    size_t n = b->recv_elems + GUARD_ELEMS;
    CL_CHECK(cl_data_poison(b->hrecv, n, t->dtype));
    return cl_mem_upload(c, b->recv, b->hrecv, n * b->es);
}

static size_t count_diff(const unsigned char *a, const unsigned char *e, size_t n, size_t es)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += memcmp(a + i * es, e + i * es, es) != 0;
    return bad;
}

/* Count wrong output elements, writes past the end, and changes to the input. */
static cl_result check_output(cl_comm *c, const cl_coll_test *t, bufs *b, uint64_t seed,
                              double *wrong, double *overrun, double *changed)
{
    int p = cl_comm_size(c), rank = cl_comm_rank(c);
    cl_coll_kind k = t->entry->kind;
    size_t n = b->recv_elems, es = b->es, bad = 0;
    CL_CHECK(cl_mem_download(c, b->hrecv, b->recv, (n + GUARD_ELEMS) * es));
    if (k == CL_COLL_ALLREDUCE || (k == CL_COLL_REDUCE && rank == t->root)) {
        CL_CHECK(cl_data_check(b->hrecv, 0, n, t->dtype, t->op, p, seed, &bad));
    } else if (k == CL_COLL_REDUCE_SCATTER) {
        CL_CHECK(cl_data_check(b->hrecv, b->off, n, t->dtype, t->op, p, seed, &bad));
    } else if (k == CL_COLL_ALLGATHER) {
        for (int i = 0; i < p; i++) {
            size_t off, len;
            cl_coll_block(t->count, p, i, &off, &len);
            CL_CHECK(cl_data_fill(b->hexp + off * es, off, len, t->dtype, data_op(t), i, seed));
        }
        bad = count_diff(b->hrecv, b->hexp, n, es);
    } else if (k == CL_COLL_BROADCAST) {
        CL_CHECK(cl_data_fill(b->hexp, 0, n, t->dtype, data_op(t), t->root, seed));
        bad = count_diff(b->hrecv, b->hexp, n, es);
    }
    *wrong += (double)bad;
    CL_CHECK(cl_data_poison(b->hexp, GUARD_ELEMS, t->dtype));
    *overrun += (double)count_diff(b->hrecv + n * es, b->hexp, GUARD_ELEMS, es);
    /* The input must come back unchanged (hrecv is free for it now). */
    CL_CHECK(cl_mem_download(c, b->hrecv, b->send, b->send_elems * es));
    *changed += (double)count_diff(b->hrecv, b->hsend, b->send_elems, es);
    return CL_OK;
}

/* Time `iters` calls of fn; *status gets the first failure. Returns the
 * seconds per call on this rank (0 after a failure). */
static double timed_calls(cl_comm *c, cl_coll_fn fn, const cl_coll_args *a, int iters,
                          int guarded, cl_result *status)
{
    double t0 = cl_comm_time(c);
    for (int i = 0; i < iters; i++) {
        if (guarded)
            cl_coll_guard_enter();
        cl_result rc = fn(c, a);
        if (guarded)
            cl_coll_guard_leave();
        if (rc != CL_OK) {
            *status = rc;
            return 0.0;
        }
    }
    return (cl_comm_time(c) - t0) / iters;
}

/* Agree on what happened in one step. v: [status, time, wrong, overrun, changed, forbidden] */
enum { V_STATUS, V_TIME, V_WRONG, V_OVERRUN, V_CHANGED, V_FORBIDDEN, V_N };

static cl_result agree_step(cl_comm *c, double v[V_N], cl_coll_result *out)
{
    double mx[V_N] = {v[V_STATUS], v[V_TIME], 0, 0, 0, v[V_FORBIDDEN]};
    double sum[V_N] = {0, 0, v[V_WRONG], v[V_OVERRUN], v[V_CHANGED], 0};
    if (cl_comm_rank(c) == 0 && v[V_STATUS] != 0 && !out->error[0])
        snprintf(out->error, sizeof out->error, "%s", cl_last_error());
    CL_CHECK(agree(c, mx, V_N, AGREE_MAX));
    CL_CHECK(agree(c, sum, V_N, AGREE_SUM));
    v[V_STATUS] = mx[V_STATUS];
    v[V_TIME] = mx[V_TIME];
    v[V_FORBIDDEN] = mx[V_FORBIDDEN];
    out->wrong += (size_t)sum[V_WRONG];
    out->overrun += (size_t)sum[V_OVERRUN];
    out->input_changed += (size_t)sum[V_CHANGED];
    if (v[V_STATUS] != 0 && out->status == CL_OK)
        out->status = (cl_result)(int)v[V_STATUS];
    if (v[V_FORBIDDEN] != 0 && !out->forbidden[0]) {
        const char *hit = cl_coll_guard_hit();
        snprintf(out->forbidden, sizeof out->forbidden, "%s", hit ? hit : "(on another rank)");
    }
    return CL_OK;
}

static int pick_iters(double per_call)
{
    if (per_call <= 0)
        return 1;
    double n = ceil(SAMPLE_TARGET_S / per_call);
    return n < 1 ? 1 : n > MAX_ITERS ? MAX_ITERS : (int)n;
}

cl_result cl_coll_run(cl_comm *c, const cl_coll_test *t, cl_coll_result *out)
{
    memset(out, 0, sizeof *out);
    if (t->repeats < 1 || t->repeats > CL_COLL_MAX_SAMPLES || !t->entry || !t->entry->fn) {
        cl_set_error("bad test: %d repeats", t->repeats);
        return CL_ERR_INVALID;
    }
    bufs b;
    /* Simulated timing-only runs move no data: leave the host buffers untouched. */
    const char *to = getenv("COMMLAB_SIM_TIMING_ONLY");
    int light = is_sim(c) && to && *to && strcmp(to, "0") != 0;
    cl_result rc = bufs_open(c, t, &b, light);
    if (rc != CL_OK) {
        bufs_close(c, &b);
        return rc;
    }
    cl_coll_args a = {.sendbuf = b.send, .recvbuf = b.recv, .count = t->count,
                      .dtype = t->dtype, .op = t->op, .root = t->root,
                      .scratch = b.scratch, .scratch_bytes = b.scratch_bytes};
    int base = t->with_baseline && t->entry->baseline;
    cl_coll_guard_reset();
    if (!t->verify && !light)
        rc = fill_inputs(c, t, &b, t->seed);
    /* Warm-up (also sizes the samples): one call of each, the entry guarded. */
    double v[V_N] = {0};
    cl_result st = CL_OK;
    if (rc == CL_OK && base) {
        (void)timed_calls(c, t->entry->baseline, &a, 1, 0, &st);
        if (st == CL_ERR_UNSUPPORTED) /* e.g. no broadcast baseline on gpu: time fn alone */
            base = 0;
        else if (st != CL_OK)
            rc = st;
        st = CL_OK;
    }
    if (rc == CL_OK)
        rc = cl_barrier(c);
    if (rc == CL_OK)
        v[V_TIME] = timed_calls(c, t->entry->fn, &a, 1, 1, &st);
    v[V_STATUS] = st;
    v[V_FORBIDDEN] = cl_coll_guard_hit() != NULL;
    if (rc == CL_OK)
        rc = agree_step(c, v, out);
    out->iters = t->iters > 0 ? t->iters : is_sim(c) ? 1 : pick_iters(v[V_TIME]);
    for (int s = 0; rc == CL_OK && out->status == CL_OK && s < t->repeats; s++) {
        uint64_t seed = cl_data_hash(t->seed ^ ((uint64_t)s + 1) * 0x9e3779b97f4a7c15ULL);
        double bt = 0;
        st = CL_OK;
        memset(v, 0, sizeof v);
        if (t->verify && !light)
            rc = fill_inputs(c, t, &b, seed);
        if (rc == CL_OK && base) {
            rc = cl_barrier(c);
            if (rc == CL_OK)
                bt = timed_calls(c, t->entry->baseline, &a, out->iters, 0, &st);
            if (st != CL_OK) { /* the library's own collective failed: a harness error */
                rc = st;
                break;
            }
            double bv[1] = {bt};
            rc = agree(c, bv, 1, AGREE_MAX);
            out->base_time_s[s] = bv[0];
        }
        if (rc == CL_OK && t->verify && !light)
            rc = poison_output(c, t, &b);
        if (rc == CL_OK)
            rc = cl_barrier(c);
        if (rc == CL_OK)
            v[V_TIME] = timed_calls(c, t->entry->fn, &a, out->iters, 1, &st);
        v[V_STATUS] = st;
        v[V_FORBIDDEN] = cl_coll_guard_hit() != NULL;
        if (rc == CL_OK && st == CL_OK && t->verify && !light)
            rc = check_output(c, t, &b, seed, &v[V_WRONG], &v[V_OVERRUN], &v[V_CHANGED]);
        if (rc == CL_OK)
            rc = agree_step(c, v, out);
        out->time_s[s] = v[V_TIME];
        out->samples = s + 1;
    }
    bufs_close(c, &b);
    return rc;
}

/* --- main: options, modes, JSON ---------------------------------------------------- */

typedef struct options {
    const cl_coll_suite *suite;
    const char *mode, *json_path, *colls;
    cl_launch_opts launch;
    cl_dtype dtype;
    cl_op op;
    int repeats, factor, timing_only, iters;
    size_t bytes, min_bytes, max_bytes;
} options;

static int selected(const options *o, const char *name)
{
    if (!o->colls)
        return 1;
    size_t n = strlen(name);
    for (const char *s = o->colls; *s;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len == n && strncmp(s, name, n) == 0)
            return 1;
        s += len + (e ? 1 : 0);
    }
    return 0;
}

static void json_result(cl_json *j, const cl_coll_result *r)
{
    cl_json_string(j, "status", cl_result_str(r->status));
    cl_json_string(j, "error", r->error);
    cl_json_int(j, "wrong", (long long)r->wrong);
    cl_json_int(j, "overrun", (long long)r->overrun);
    cl_json_int(j, "input_changed", (long long)r->input_changed);
    if (r->forbidden[0])
        cl_json_string(j, "forbidden", r->forbidden);
    else
        cl_json_null(j, "forbidden");
}

static void json_test(cl_json *j, const cl_coll_test *t, const cl_coll_result *r)
{
    cl_json_object_start(j, NULL);
    cl_json_string(j, "name", t->entry->name);
    cl_json_string(j, "kind", cl_coll_kind_name(t->entry->kind));
    cl_json_int(j, "count", (long long)t->count);
    cl_json_string(j, "dtype", cl_dtype_name(t->dtype));
    cl_json_string(j, "op", cl_op_name(t->op));
    cl_json_int(j, "root", t->root);
    json_result(j, r);
    cl_json_object_end(j);
}

/* The correctness matrix of one entry on p ranks. */
static cl_result verify_entry(cl_comm *c, const cl_coll_entry *e, cl_json *j, uint64_t seed)
{
    int p = cl_comm_size(c);
    const size_t counts[] = {1, (size_t)(2 * p - 1), (size_t)(7 * p + 1), 4099, 65537};
    int nc = sizeof counts / sizeof counts[0];
    int red = reducing(e->kind), rooted = e->kind == CL_COLL_BROADCAST || e->kind == CL_COLL_REDUCE;
    for (int ci = 0; ci < nc; ci++) {
        if (ci > 0 && counts[ci] == counts[ci - 1])
            continue;
        int all = counts[ci] == 4099;
        for (int ti = 0; ti < CL_DTYPE_COUNT; ti++)
            for (int oi = 0; oi < (red ? CL_OP_COUNT : 1); oi++) {
                cl_dtype t = (cl_dtype)ti;
                cl_op op = (cl_op)oi;
                int plain = t == CL_FLOAT32 && (op == CL_SUM || !red);
                if (!all && !plain && !(counts[ci] == 65537 && t == CL_FLOAT64 && op == CL_MAX))
                    continue;
                int roots[3] = {0, p - 1, p / 2}, nroots = rooted && all && t == CL_FLOAT32 ? 3 : 1;
                for (int ri = 0; ri < nroots; ri++) {
                    if (ri > 0 && (roots[ri] == roots[0] || roots[ri] == roots[ri - 1]))
                        continue;
                    cl_coll_test test = {.entry = e, .count = counts[ci], .dtype = t, .op = op,
                                         .root = roots[ri], .repeats = 2, .iters = 1,
                                         .verify = 1,
                                         .seed = cl_data_hash(seed + 1000003u * (uint64_t)ci +
                                                              101u * (uint64_t)ti + (uint64_t)oi)};
                    cl_coll_result r;
                    CL_CHECK(cl_coll_run(c, &test, &r));
                    if (j)
                        json_test(j, &test, &r);
                    if (r.status == CL_ERR_NOT_IMPLEMENTED)
                        return CL_OK; /* one line says it; no need for twenty */
                }
            }
    }
    return CL_OK;
}

static void json_header(cl_json *j, const options *o, cl_comm *c)
{
    cl_json_object_start(j, NULL);
    cl_json_string(j, "lab", o->suite->lab);
    cl_json_string(j, "mode", o->mode);
    cl_json_string(j, "backend", cl_comm_backend(c));
    cl_json_int(j, "ranks", cl_comm_size(c));
    cl_json_bool(j, "timing_only", o->timing_only);
    if (o->suite->describe)
        o->suite->describe(j);
}

static cl_result run_verify(cl_comm *c, const options *o)
{
    cl_json j;
    int root = cl_comm_rank(c) == 0;
    uint64_t seed = cl_data_hash((uint64_t)time(NULL));
    double sv[1] = {(double)(seed >> 12)};
    CL_CHECK(agree(c, sv, 1, AGREE_MAX)); /* clocks may differ: all ranks take the largest */
    seed = (uint64_t)sv[0];
    if (root) {
        CL_CHECK(cl_json_open(&j, o->json_path));
        json_header(&j, o, c);
        cl_json_int(&j, "seed", (long long)seed);
        cl_json_array_start(&j, "tests");
    }
    for (int i = 0; i < o->suite->nentries; i++)
        if (selected(o, o->suite->entries[i].name))
            CL_CHECK(verify_entry(c, &o->suite->entries[i], root ? &j : NULL, seed + (uint64_t)i));
    if (!root)
        return CL_OK;
    cl_json_array_end(&j);
    cl_json_object_end(&j);
    return cl_json_close(&j);
}

static void json_samples(cl_json *j, const char *key, const double *t, int n, double bytes,
                         double factor, int as_busbw)
{
    double v[CL_COLL_MAX_SAMPLES];
    for (int i = 0; i < n; i++)
        v[i] = as_busbw ? (t[i] > 0 ? bytes / t[i] / 1e9 * factor : 0) : t[i];
    cl_json_number_array(j, key, v, (size_t)n);
}

static const cl_coll_entry *find_entry(const options *o, const char *name)
{
    for (int i = 0; i < o->suite->nentries; i++)
        if (strcmp(o->suite->entries[i].name, name) == 0)
            return &o->suite->entries[i];
    return NULL;
}

static cl_result run_bench(cl_comm *c, const options *o)
{
    const cl_coll_entry *e = o->colls ? find_entry(o, o->colls) : NULL;
    size_t es = cl_dtype_size(o->dtype);
    if (!e) {
        cl_set_error("bench needs --coll with one of the lab's collectives");
        return CL_ERR_INVALID;
    }
    cl_coll_test t = {.entry = e, .count = o->bytes / es, .dtype = o->dtype, .op = o->op,
                      .repeats = o->repeats, .iters = o->iters, .verify = !o->timing_only,
                      .with_baseline = 1, .seed = cl_data_hash(0x5eed)};
    cl_coll_result r;
    CL_CHECK(cl_coll_run(c, &t, &r));
    if (cl_comm_rank(c) != 0)
        return CL_OK;
    double bytes = (double)cl_coll_bytes(t.count, t.dtype);
    double f = cl_coll_busbw_factor(e->kind, cl_comm_size(c));
    cl_json j;
    CL_CHECK(cl_json_open(&j, o->json_path));
    json_header(&j, o, c);
    cl_json_string(&j, "name", e->name);
    cl_json_string(&j, "kind", cl_coll_kind_name(e->kind));
    cl_json_number(&j, "bytes", bytes);
    cl_json_int(&j, "iters", r.iters);
    json_result(&j, &r);
    json_samples(&j, "time_s", r.time_s, r.samples, bytes, f, 0);
    json_samples(&j, "busbw_gbs", r.time_s, r.samples, bytes, f, 1);
    if (e->baseline) {
        json_samples(&j, "baseline_time_s", r.base_time_s, r.samples, bytes, f, 0);
        json_samples(&j, "baseline_busbw_gbs", r.base_time_s, r.samples, bytes, f, 1);
    }
    cl_json_object_end(&j);
    return cl_json_close(&j);
}

#define MAX_SIZES 40

typedef struct series {
    const cl_coll_entry *e;
    double t[MAX_SIZES];
    double base[MAX_SIZES]; /* its baseline, when this entry is the first with it */
    int owns_base;
} series;

static cl_result run_sweep(cl_comm *c, const options *o)
{
    size_t es = cl_dtype_size(o->dtype);
    int p = cl_comm_size(c), n = 0, ns = 0;
    double sizes[MAX_SIZES];
    series *s = calloc((size_t)o->suite->nentries, sizeof *s);
    if (!s)
        return CL_ERR_NOMEM;
    for (int i = 0; i < o->suite->nentries; i++)
        if (selected(o, o->suite->entries[i].name))
            s[ns++].e = &o->suite->entries[i];
    /* Each baseline runs once per size, with the first entry that names it. */
    for (int i = 0; i < ns; i++) {
        s[i].owns_base = s[i].e->baseline != NULL;
        for (int k = 0; k < i; k++)
            if (s[k].e->baseline == s[i].e->baseline)
                s[i].owns_base = 0;
    }

    /* Worst news first: the first failure, then any forbidden call. */
    cl_coll_result worst = {0};
    size_t wrong = 0;
    for (size_t bytes = o->min_bytes; bytes <= o->max_bytes && n < MAX_SIZES;
         bytes *= (size_t)o->factor, n++) {
        size_t count = bytes / es ? bytes / es : 1;
        sizes[n] = (double)cl_coll_bytes(count, o->dtype);
        for (int i = 0; i < ns; i++) {
            cl_coll_test t = {.entry = s[i].e, .count = count, .dtype = o->dtype, .op = o->op,
                              .repeats = o->repeats, .iters = o->iters,
                              .verify = !o->timing_only, .with_baseline = s[i].owns_base,
                              .seed = cl_data_hash(bytes * 31u + (uint64_t)i)};
            cl_coll_result r;
            CL_CHECK(cl_coll_run(c, &t, &r));
            s[i].t[n] = r.samples ? cl_median(r.time_s, (size_t)r.samples) : 0;
            if (t.with_baseline)
                s[i].base[n] = r.samples ? cl_median(r.base_time_s, (size_t)r.samples) : 0;
            wrong += r.wrong + r.overrun + r.input_changed;
            if (r.status != CL_OK && worst.status == CL_OK)
                worst = r;
            if (r.forbidden[0] && !worst.forbidden[0])
                snprintf(worst.forbidden, sizeof worst.forbidden, "%s", r.forbidden);
        }
    }
    if (cl_comm_rank(c) == 0) {
        cl_json j;
        CL_CHECK(cl_json_open(&j, o->json_path));
        json_header(&j, o, c);
        cl_json_string(&j, "dtype", cl_dtype_name(o->dtype));
        cl_json_string(&j, "op", cl_op_name(o->op));
        worst.wrong = wrong;
        json_result(&j, &worst);
        cl_json_number_array(&j, "bytes", sizes, (size_t)n);
        cl_json_object_start(&j, "series");
        for (int i = 0; i < 2 * ns; i++) {
            const series *x = &s[i % ns];
            int is_base = i >= ns;
            if (is_base && !x->owns_base)
                continue;
            const double *t = is_base ? x->base : x->t;
            char key[64];
            snprintf(key, sizeof key, is_base ? "baseline_%s" : "%s",
                     is_base ? cl_coll_kind_name(x->e->kind) : x->e->name);
            double bw[MAX_SIZES];
            for (int k = 0; k < n; k++)
                bw[k] = t[k] > 0 ? sizes[k] / t[k] / 1e9 * cl_coll_busbw_factor(x->e->kind, p) : 0;
            cl_json_object_start(&j, key);
            cl_json_number_array(&j, "time_s", t, (size_t)n);
            cl_json_number_array(&j, "busbw_gbs", bw, (size_t)n);
            cl_json_object_end(&j);
        }
        cl_json_object_end(&j);
        cl_json_object_end(&j);
        CL_CHECK(cl_json_close(&j));
    }
    free(s);
    return CL_OK;
}

static cl_result body(cl_comm *c, void *arg)
{
    const options *o = arg;
    if (o->suite->setup)
        CL_CHECK(o->suite->setup(c));
    if (strcmp(o->mode, "verify") == 0)
        return run_verify(c, o);
    if (strcmp(o->mode, "bench") == 0)
        return run_bench(c, o);
    return run_sweep(c, o);
}

static int usage(const char *lab)
{
    fprintf(stderr,
            "usage: %s verify [--coll A,B] --json FILE\n"
            "       %s bench --coll A --bytes N [--repeats R] [--iters I] --json FILE\n"
            "       %s sweep [--coll A,B] [--min-bytes N] [--max-bytes N] [--factor K]\n"
            "             [--repeats R] --json FILE\n"
            "options: --backend cpu|gpu|sim  --nranks N --system S (sim)  --dtype T  --op O\n"
            "         --timing-only (sim: move no data, verify nothing)\n",
            lab, lab, lab);
    return 2;
}

int cl_coll_main(const cl_coll_suite *suite, int argc, char **argv)
{
    options o = {.suite = suite, .dtype = CL_FLOAT32, .op = CL_SUM, .repeats = 5, .factor = 4,
                 .bytes = 1 << 20, .min_bytes = 8, .max_bytes = 16 << 20};
    o.launch = (cl_launch_opts){.backend = "cpu", .nranks = 8, .system = "dgx-a100",
                                .argc = &argc, .argv = &argv};
    if (argc < 2)
        return usage(suite->lab);
    o.mode = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1;
        if (strcmp(a, "--timing-only") == 0)
            o.timing_only = 1;
        else if (!v)
            return usage(suite->lab);
        else if (strcmp(a, "--json") == 0)
            o.json_path = v;
        else if (strcmp(a, "--coll") == 0)
            o.colls = v;
        else if (strcmp(a, "--backend") == 0)
            o.launch.backend = v;
        else if (strcmp(a, "--system") == 0)
            o.launch.system = v;
        else if (strcmp(a, "--nranks") == 0)
            o.launch.nranks = atoi(v);
        else if (strcmp(a, "--repeats") == 0)
            o.repeats = atoi(v);
        else if (strcmp(a, "--iters") == 0)
            o.iters = atoi(v);
        else if (strcmp(a, "--factor") == 0)
            o.factor = atoi(v);
        else if (strcmp(a, "--bytes") == 0)
            o.bytes = strtoull(v, NULL, 0);
        else if (strcmp(a, "--min-bytes") == 0)
            o.min_bytes = strtoull(v, NULL, 0);
        else if (strcmp(a, "--max-bytes") == 0)
            o.max_bytes = strtoull(v, NULL, 0);
        else if (strcmp(a, "--dtype") == 0)
            ok = cl_dtype_parse(v, &o.dtype) == CL_OK;
        else if (strcmp(a, "--op") == 0)
            ok = cl_op_parse(v, &o.op) == CL_OK;
        else
            ok = 0;
        if (!ok)
            return usage(suite->lab);
        if (strcmp(a, "--timing-only") != 0)
            i++;
    }
    if ((strcmp(o.mode, "verify") && strcmp(o.mode, "bench") && strcmp(o.mode, "sweep")) ||
        o.repeats < 1 || o.repeats > CL_COLL_MAX_SAMPLES || o.factor < 2 || o.iters < 0 ||
        o.min_bytes < 1 || o.bytes < 1)
        return usage(suite->lab);
    if (o.timing_only) {
        if (strcmp(o.launch.backend, "sim") != 0) {
            fprintf(stderr, "%s: --timing-only is for the sim backend\n", suite->lab);
            return 2;
        }
        setenv("COMMLAB_SIM_TIMING_ONLY", "1", 1);
    }
    cl_result rc = cl_launch(&o.launch, body, &o);
    if (rc != CL_OK)
        fprintf(stderr, "%s %s: %s%s%s\n", suite->lab, o.mode, cl_result_str(rc),
                cl_last_error()[0] ? ": " : "", cl_last_error());
    return cl_exit_status(rc);
}
