/* smoke.c: every entry point of the "gpu" backend on one rank, each checked against the host.
 *
 *   build/tests/gpu_smoke [--json FILE] [--deadline SEC]
 *
 * One process, one GPU, no launcher: what a machine with a single GPU can
 * prove about the backend before any lab runs on it. Each step prints one
 * row (ok, FAIL or skip, with the reason) and the JSON has the same rows.
 * Exit status: 0 every step passed, 1 a step failed, 3 the deadline passed,
 * 4 no GPU backend or no GPU here (nothing ran).
 *
 * The steps: buffers and host copies; the reduce kernel for every type and
 * reduction at a count that wraps its grid-stride loop; copies with memmove
 * semantics; transfers to the rank itself, grouped, nested, non-blocking and
 * tested; many upload-then-send rounds (an upload must be in the buffer
 * before the send reads it); NCCL's collectives in and out of place; a split
 * communicator; agreement, barrier and clock; refusals of bad arguments.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef CL_HAVE_CUDA
#include <cuda_runtime.h>
#include <nccl.h>
#endif

#include "buffers.h"
#include "deadline.h"
#include "json.h"
#include "launch.h"
#include "p2p.h"

#define MIB ((size_t)1 << 20)
/* The reduce kernel runs at most 1024 blocks of 256 threads: this count wraps
 * its grid-stride loop twice, and leaves a ragged end. */
#define WRAP_COUNT ((size_t)1024 * 256 * 2 + 3)
#define ROUNDS     200

typedef struct step {
    char name[48];
    int ok; /* 1 ok, 0 failed */
    char detail[240];
} step;

static step steps[64];
static int nsteps;
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static void record(const char *name, cl_result rc, const char *detail)
{
    if (nsteps == (int)(sizeof steps / sizeof steps[0]))
        return;
    step *s = &steps[nsteps++];
    snprintf(s->name, sizeof s->name, "%s", name);
    s->ok = rc == CL_OK;
    if (rc == CL_OK)
        snprintf(s->detail, sizeof s->detail, "%s", detail ? detail : "");
    else
        snprintf(s->detail, sizeof s->detail, "%s: %s", cl_result_str(rc), cl_last_error());
    printf("  %-26s %-4s %s\n", s->name, s->ok ? "ok" : "FAIL", s->detail);
    fflush(stdout);
}

/* A mismatch is a failure with the first differing byte. */
static cl_result same(const void *got, const void *want, size_t bytes, const char *what)
{
    const unsigned char *a = got, *b = want;
    for (size_t i = 0; i < bytes; i++)
        if (a[i] != b[i]) {
            cl_set_error("%s: byte %zu of %zu is %#x, expected %#x", what, i, bytes, a[i], b[i]);
            return CL_ERR_MISMATCH;
        }
    return CL_OK;
}

static void random_bytes(void *p, size_t n)
{
    unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)next();
}

/* Values whose sums, products, maxima and minima are exact in every type. */
static void random_values(void *p, size_t count, cl_dtype t)
{
    for (size_t i = 0; i < count; i++) {
        long v = (long)(next() % 7) - 3; /* -3..3: products of two stay small */
        switch (t) {
        case CL_INT32: ((int32_t *)p)[i] = (int32_t)(v * 1000 + (long)(next() % 1000)); break;
        case CL_INT64: ((int64_t *)p)[i] = (int64_t)v * 1000003 + (int64_t)(next() % 1000); break;
        case CL_FLOAT32: ((float *)p)[i] = (float)v * 0.5f; break;
        default: ((double *)p)[i] = (double)v * 0.25; break;
        }
    }
}

typedef struct ctx {
    cl_comm *c;
    void *a, *b, *big; /* device buffers: 4 MiB + 12, 4 MiB + 12, WRAP_COUNT doubles x 2 */
    unsigned char *h1, *h2, *h3;
    size_t n;
} ctx;

/* --- the steps ------------------------------------------------------------------------------ */

static cl_result buffers_and_copies(ctx *x)
{
    void *empty = NULL;
    CL_CHECK(cl_mem_alloc(x->c, 0, &empty));
    CL_CHECK(cl_mem_free(x->c, empty));
    random_bytes(x->h1, x->n);
    CL_CHECK(cl_mem_upload(x->c, x->a, x->h1, x->n));
    memset(x->h2, 0, x->n);
    CL_CHECK(cl_mem_download(x->c, x->h2, x->a, x->n));
    CL_CHECK(same(x->h2, x->h1, x->n, "whole buffer"));
    /* a range in the middle, at an odd offset */
    random_bytes(x->h3, 4097);
    CL_CHECK(cl_mem_upload(x->c, (char *)x->a + 12345, x->h3, 4097));
    memcpy(x->h1 + 12345, x->h3, 4097);
    CL_CHECK(cl_mem_download(x->c, x->h2, x->a, x->n));
    return same(x->h2, x->h1, x->n, "after a partial upload");
}

static cl_result reduce_one(ctx *x, cl_dtype t, cl_op op)
{
    size_t es = cl_dtype_size(t), bytes = WRAP_COUNT * es;
    unsigned char *in = x->h1, *io = x->h2, *want = x->h3;
    random_values(io, WRAP_COUNT, t);
    random_values(in, WRAP_COUNT, t);
    memcpy(want, io, bytes);
    CL_CHECK(cl_reduce_host(want, in, WRAP_COUNT, t, op));
    void *dio = x->big, *din = (char *)x->big + 8 * WRAP_COUNT;
    CL_CHECK(cl_mem_upload(x->c, dio, io, bytes));
    CL_CHECK(cl_mem_upload(x->c, din, in, bytes));
    CL_CHECK(cl_reduce_local(x->c, dio, din, WRAP_COUNT, t, op));
    CL_CHECK(cl_mem_download(x->c, io, dio, bytes));
    char what[64];
    snprintf(what, sizeof what, "%s %s", cl_dtype_name(t), cl_op_name(op));
    return same(io, want, bytes, what);
}

static cl_result copy_local(ctx *x)
{
    size_t n = x->n, len = n / 2;
    random_bytes(x->h1, n);
    CL_CHECK(cl_mem_upload(x->c, x->a, x->h1, n));
    CL_CHECK(cl_copy_local(x->c, x->b, x->a, n)); /* apart */
    CL_CHECK(cl_mem_download(x->c, x->h2, x->b, n));
    CL_CHECK(same(x->h2, x->h1, n, "copy between buffers"));
    /* overlapping, forwards and backwards: memmove's result */
    CL_CHECK(cl_copy_local(x->c, (char *)x->a + 1000, x->a, len));
    memmove(x->h1 + 1000, x->h1, len);
    CL_CHECK(cl_copy_local(x->c, x->a, (char *)x->a + 777, len));
    memmove(x->h1, x->h1 + 777, len);
    CL_CHECK(cl_mem_download(x->c, x->h2, x->a, n));
    return same(x->h2, x->h1, n, "overlapping copies (memmove)");
}

/* a -> b through the rank itself, in the way `how` says. */
static cl_result self_transfer(ctx *x, int how, size_t bytes)
{
    cl_comm *c = x->c;
    int me = cl_comm_rank(c);
    random_bytes(x->h1, bytes);
    CL_CHECK(cl_mem_upload(c, x->a, x->h1, bytes));
    memset(x->h2, 0x5a, bytes);
    CL_CHECK(cl_mem_upload(c, x->b, x->h2, bytes));
    if (how == 0) { /* a group */
        CL_CHECK(cl_group_start(c));
        CL_CHECK(cl_send(c, x->a, bytes, me));
        CL_CHECK(cl_recv(c, x->b, bytes, me));
        CL_CHECK(cl_group_end(c));
    } else if (how == 1) { /* nested groups, receive first */
        CL_CHECK(cl_group_start(c));
        CL_CHECK(cl_group_start(c));
        CL_CHECK(cl_recv(c, x->b, bytes / 2, me));
        CL_CHECK(cl_group_end(c));
        CL_CHECK(cl_send(c, x->a, bytes / 2, me));
        CL_CHECK(cl_group_start(c));
        CL_CHECK(cl_send(c, (char *)x->a + bytes / 2, bytes - bytes / 2, me));
        CL_CHECK(cl_recv(c, (char *)x->b + bytes / 2, bytes - bytes / 2, me));
        CL_CHECK(cl_group_end(c));
        CL_CHECK(cl_group_end(c));
    } else if (how == 2) { /* non-blocking, waited for together */
        cl_request r[2];
        CL_CHECK(cl_irecv(c, x->b, bytes, me, &r[0]));
        CL_CHECK(cl_isend(c, x->a, bytes, me, &r[1]));
        CL_CHECK(cl_waitall(c, 2, r));
    } else if (how == 3) { /* non-blocking, tested until done */
        cl_request s, r;
        int done_s = 0, done_r = 0;
        CL_CHECK(cl_isend(c, x->a, bytes, me, &s));
        CL_CHECK(cl_irecv(c, x->b, bytes, me, &r));
        while (!(done_s && done_r)) {
            CL_CHECK(cl_test(c, &r, &done_r));
            CL_CHECK(cl_test(c, &s, &done_s));
            if (cl_deadline_left() <= 0) {
                cl_set_error("cl_test never reported completion");
                return CL_ERR_TIMEOUT;
            }
        }
    } else { /* cl_sendrecv */
        CL_CHECK(cl_sendrecv(c, x->a, bytes, me, x->b, bytes, me));
    }
    CL_CHECK(cl_mem_download(c, x->h2, x->b, bytes));
    return same(x->h2, x->h1, bytes, "received bytes");
}

static cl_result upload_then_send(ctx *x)
{
    cl_comm *c = x->c;
    size_t bytes = MIB;
    for (int k = 0; k < ROUNDS; k++) {
        memset(x->h1, (unsigned char)(k * 37 + 1), bytes);
        x->h1[k] = (unsigned char)k;
        CL_CHECK(cl_mem_upload(c, x->a, x->h1, bytes));
        CL_CHECK(cl_sendrecv(c, x->a, bytes, 0, x->b, bytes, 0));
        CL_CHECK(cl_mem_download(c, x->h2, x->b, bytes));
        char what[48];
        snprintf(what, sizeof what, "round %d", k);
        CL_CHECK(same(x->h2, x->h1, bytes, what));
    }
    return CL_OK;
}

/* One rank: every collective leaves the input as it was, in place or not. */
static cl_result library(ctx *x, cl_comm *c, cl_coll_kind kind, cl_dtype t, int in_place)
{
    size_t count = MIB / 4 + 1, es = cl_dtype_size(t), bytes = count * es;
    random_values(x->h1, count, t);
    CL_CHECK(cl_mem_upload(c, x->a, x->h1, bytes));
    if (!in_place) {
        memset(x->h2, 0x77, bytes);
        CL_CHECK(cl_mem_upload(c, x->b, x->h2, bytes));
    }
    size_t one = count, zero = 0;
    cl_coll_args a = {.sendbuf = x->a,
                      .recvbuf = in_place ? x->a : x->b,
                      .count = count,
                      .dtype = t,
                      .op = CL_SUM,
                      .root = 0,
                      .sendcounts = &one,
                      .sdispls = &zero,
                      .recvcounts = &one,
                      .rdispls = &zero};
    CL_CHECK(cl_library_coll(c, kind, &a));
    CL_CHECK(cl_mem_download(c, x->h2, a.recvbuf, bytes));
    char what[64];
    snprintf(what, sizeof what, "%s %s%s", cl_coll_name(kind), cl_dtype_name(t),
             in_place ? " in place" : "");
    return same(x->h2, x->h1, bytes, what);
}

static cl_result collectives(ctx *x)
{
    for (int t = 0; t < CL_DTYPE_COUNT; t++)
        for (int ip = 0; ip < 2; ip++)
            CL_CHECK(library(x, x->c, CL_COLL_ALLREDUCE, (cl_dtype)t, ip));
    static const cl_coll_kind others[] = {CL_COLL_REDUCESCATTER, CL_COLL_ALLGATHER,
                                          CL_COLL_BROADCAST,     CL_COLL_REDUCE,
                                          CL_COLL_ALLTOALL,      CL_COLL_ALLTOALLV};
    for (size_t k = 0; k < sizeof others / sizeof others[0]; k++)
        CL_CHECK(library(x, x->c, others[k], CL_FLOAT32, 0));
    return CL_OK;
}

static cl_result split(ctx *x)
{
    cl_comm *none = NULL, *sub = NULL;
    CL_CHECK(cl_comm_split(x->c, -1, 0, &none));
    if (none) {
        cl_set_error("a negative color gave a communicator");
        return CL_ERR_MISMATCH;
    }
    CL_CHECK(cl_comm_split(x->c, 3, 0, &sub));
    cl_result rc = CL_OK;
    if (!sub || cl_comm_size(sub) != 1 || cl_comm_rank(sub) != 0) {
        cl_set_error("the split gave %s", sub ? "a communicator of the wrong size" : "none");
        rc = CL_ERR_MISMATCH;
    }
    if (rc == CL_OK)
        rc = library(x, sub, CL_COLL_ALLREDUCE, CL_INT64, 0);
    if (rc == CL_OK) { /* a transfer on the split communicator */
        random_bytes(x->h1, 65536);
        rc = cl_mem_upload(sub, x->a, x->h1, 65536);
        if (rc == CL_OK)
            rc = cl_sendrecv(sub, x->a, 65536, 0, x->b, 65536, 0);
        if (rc == CL_OK)
            rc = cl_mem_download(sub, x->h2, x->b, 65536);
        if (rc == CL_OK)
            rc = same(x->h2, x->h1, 65536, "transfer on the split");
    }
    cl_result fr = cl_comm_free(sub);
    return rc != CL_OK ? rc : fr;
}

static cl_result agree_barrier_clock(ctx *x)
{
    int64_t v[3] = {5, -7, 11};
    CL_CHECK(cl_agree(x->c, CL_SUM, v, 3));
    if (v[0] != 5 || v[1] != -7 || v[2] != 11) {
        cl_set_error("one rank's agreement changed its values");
        return CL_ERR_MISMATCH;
    }
    CL_CHECK(cl_barrier(x->c));
    double t0 = cl_comm_time(x->c), t1 = cl_comm_time(x->c);
    if (!(t1 >= t0)) {
        cl_set_error("the clock went from %.9f to %.9f", t0, t1);
        return CL_ERR_MISMATCH;
    }
    return CL_OK;
}

/* Bad arguments come back as CL_ERR_INVALID with a reason, and nothing breaks. */
static cl_result refusals(ctx *x)
{
    struct {
        const char *what;
        cl_result rc;
    } t[4];
    t[0].what = "an upload past the end";
    t[0].rc = cl_mem_upload(x->c, (char *)x->a + x->n - 4, x->h1, 8);
    t[1].what = "a host pointer as a buffer";
    t[1].rc = cl_mem_upload(x->c, x->h2, x->h1, 8);
    cl_request r = {.id = 4242};
    t[2].what = "a request that was never made";
    t[2].rc = cl_wait(x->c, &r);
    t[3].what = "freeing a host pointer";
    t[3].rc = cl_mem_free(x->c, x->h1);
    for (int i = 0; i < 4; i++)
        if (t[i].rc != CL_ERR_INVALID) {
            cl_set_error("%s gave %s, not \"invalid argument\"", t[i].what, cl_result_str(t[i].rc));
            return CL_ERR_MISMATCH;
        }
    return self_transfer(x, 0, 4096); /* still works afterwards */
}

/* --- the run -------------------------------------------------------------------------------- */

static char device_text[400] = "";

static void describe_device(void)
{
#ifdef CL_HAVE_CUDA
    int dev = -1, nccl = 0, driver = 0;
    struct cudaDeviceProp p;
    char bus[32] = "?";
    cudaGetDevice(&dev);
    ncclGetVersion(&nccl);
    cudaDriverGetVersion(&driver);
    if (dev >= 0 && cudaGetDeviceProperties(&p, dev) == cudaSuccess) {
        cudaDeviceGetPCIBusId(bus, sizeof bus, dev);
        snprintf(device_text, sizeof device_text,
                 "GPU %d: %s (sm_%d%d, %s), CUDA driver API %d, NCCL %d", dev, p.name, p.major,
                 p.minor, bus, driver, nccl);
    }
#endif
}

static cl_result body(cl_comm *c, void *arg)
{
    (void)arg;
    ctx x = {.c = c, .n = 4 * MIB + 12};
    size_t host = WRAP_COUNT * 8 > x.n ? WRAP_COUNT * 8 : x.n;
    x.h1 = malloc(host), x.h2 = malloc(host), x.h3 = malloc(host);
    if (!x.h1 || !x.h2 || !x.h3) {
        free(x.h1), free(x.h2), free(x.h3);
        return CL_ERR_NOMEM;
    }
    describe_device();
    printf("# %s\n", device_text[0] ? device_text : "gpu backend");
    cl_result rc = cl_mem_alloc(c, x.n, &x.a);
    if (rc == CL_OK)
        rc = cl_mem_alloc(c, x.n, &x.b);
    if (rc == CL_OK)
        rc = cl_mem_alloc(c, 2 * 8 * WRAP_COUNT, &x.big);
    record("alloc", rc, "three buffers and an empty one");
    if (rc == CL_OK) {
        record("upload/download", buffers_and_copies(&x), "whole and partial, odd offsets");
        for (int t = 0; t < CL_DTYPE_COUNT; t++)
            for (int op = 0; op < CL_OP_COUNT; op++) {
                char name[48];
                snprintf(name, sizeof name, "reduce %s %s", cl_dtype_name((cl_dtype)t),
                         cl_op_name((cl_op)op));
                record(name, reduce_one(&x, (cl_dtype)t, (cl_op)op), "524291 elements, exact");
            }
        record("copy", copy_local(&x), "apart, and overlapping both ways");
        record("self: group", self_transfer(&x, 0, x.n), "send and receive in one group");
        record("self: nested groups", self_transfer(&x, 1, x.n), "three levels, merged");
        record("self: isend/irecv", self_transfer(&x, 2, x.n), "waited for together");
        record("self: test", self_transfer(&x, 3, x.n), "polled with cl_test");
        record("self: sendrecv", self_transfer(&x, 4, 8), "8 bytes");
        record("upload then send", upload_then_send(&x), "200 rounds of 1 MiB, each checked");
        record("NCCL collectives", collectives(&x),
               "AllReduce x 4 types in and out of place; the other six");
        record("split", split(&x), "ncclCommSplit, a collective and a transfer on it");
        record("agree/barrier/clock", agree_barrier_clock(&x), "");
        record("refusals", refusals(&x), "four bad calls refused with reasons");
    }
    cl_result fr = CL_OK;
    void *bufs[3] = {x.a, x.b, x.big};
    for (int i = 0; i < 3; i++)
        if (bufs[i] && fr == CL_OK)
            fr = cl_mem_free(c, bufs[i]);
    if (fr == CL_OK && cl_buffers_count() != 0) {
        cl_set_error("%zu buffers left after freeing all", cl_buffers_count());
        fr = CL_ERR_MISMATCH;
    }
    record("free", fr, "every buffer returned");
    free(x.h1), free(x.h2), free(x.h3);
    return CL_OK;
}

static cl_result write_json(const char *path, cl_result rc, const char *why)
{
    cl_json j;
    CL_CHECK(cl_json_open(&j, path));
    cl_json_object_start(&j, NULL);
    int failed = 0;
    for (int i = 0; i < nsteps; i++)
        failed += !steps[i].ok;
    const char *status = rc == CL_ERR_UNSUPPORTED ? "unsupported"
                         : rc == CL_ERR_TIMEOUT   ? "timeout"
                         : rc != CL_OK || failed  ? "error"
                                                  : "ok";
    cl_json_string(&j, "status", status);
    cl_json_string(&j, "error", rc == CL_OK ? "" : why);
    cl_json_string(&j, "device", device_text);
    cl_json_array_start(&j, "steps");
    for (int i = 0; i < nsteps; i++) {
        cl_json_object_start(&j, NULL);
        cl_json_string(&j, "name", steps[i].name);
        cl_json_bool(&j, "ok", steps[i].ok);
        cl_json_string(&j, "detail", steps[i].detail);
        cl_json_object_end(&j);
    }
    cl_json_array_end(&j);
    cl_json_object_end(&j);
    return cl_json_close(&j);
}

int main(int argc, char **argv)
{
    const char *json = NULL;
    double deadline = 120;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
            json = argv[++i];
        } else if (strcmp(argv[i], "--deadline") == 0 && i + 1 < argc) {
            deadline = strtod(argv[++i], NULL);
        } else {
            fprintf(stderr, "usage: %s [--json FILE] [--deadline SEC]\n", argv[0]);
            return 2;
        }
    }
    cl_deadline_start(deadline);
    cl_deadline_doing("the gpu smoke test");
    printf("gpu backend smoke test: one rank, every entry point\n");
    cl_launch_opts lo = {.backend = "gpu", .nranks = 1, .argc = &argc, .argv = &argv};
    cl_result rc = cl_launch(&lo, body, NULL);
    char why[400];
    snprintf(why, sizeof why, "%s", rc == CL_OK ? "" : cl_last_error());
    int failed = 0;
    for (int i = 0; i < nsteps; i++)
        failed += !steps[i].ok;
    if (json && write_json(json, rc, why) != CL_OK)
        fprintf(stderr, "gpu_smoke: %s\n", cl_last_error());
    if (rc != CL_OK) {
        printf("# %s: %s\n", rc == CL_ERR_UNSUPPORTED ? "skipped" : cl_result_str(rc), why);
        return cl_exit_status(rc);
    }
    printf("# %d of %d steps passed\n", nsteps - failed, nsteps);
    return failed ? 1 : 0;
}
