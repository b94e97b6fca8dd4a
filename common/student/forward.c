/* forward.c: the student program's backend: every call of p2p.h becomes a record for the harness.
 *
 * The harness checks each operation, records it, performs it and answers.
 * Only what touches nothing but the rank's own memory stays here: copies
 * between host memory and buffers that are host memory ("cpu"), and the clock.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "timing.h"

static st_rank *running(void)
{
    st_rank *r = cl_rt_current();
    if (!r)
        abort(); /* an interface call outside a function the harness called */
    return r;
}

static int comm_id(cl_comm *c) { return ((st_comm *)c)->id; }

/* Send w and wait for the answer; a failure's reason comes back in the text slot. */
static cl_result ask(cl_wire *w, const cl_wire **answer)
{
    st_rank *r = running();
    w->kind = CL_W_OP;
    w->rank = r->local;
    cl_rt_emit(w, 0);
    const cl_wire *a = cl_rt_wait(r);
    if (a->status != CL_OK) {
        char *text = CL_SLOT_TEXT_OF(r->local);
        text[CL_SLOT_TEXT - 1] = '\0';
        cl_set_error("%s", text);
    }
    if (answer)
        *answer = a;
    return (cl_result)a->status;
}

/* A post travels with the rank's next call that waits for an answer: a
 * transfer progresses while the rank is inside the interface, as MPI's do
 * without a progress thread (p2p.h). */
static void post(cl_comm *c, cl_wire *w)
{
    (void)c;
    st_rank *r = running();
    w->kind = CL_W_OP;
    w->rank = r->local;
    cl_rt_emit(w, 0);
}

static int new_request(void)
{
    st_rank *r = running();
    if (++r->next_req <= 0)
        r->next_req = 1;
    return r->next_req;
}

static cl_result fw_isend(cl_comm *c, const void *buf, size_t bytes, int peer, int *req)
{
    *req = new_request();
    cl_wire w = {.op = CL_WOP_ISEND,
                 .comm = comm_id(c),
                 .peer = peer,
                 .addr = (uintptr_t)buf,
                 .bytes = bytes,
                 .arg = *req};
    post(c, &w);
    return CL_OK;
}

static cl_result fw_irecv(cl_comm *c, void *buf, size_t bytes, int peer, int *req)
{
    *req = new_request();
    cl_wire w = {.op = CL_WOP_IRECV,
                 .comm = comm_id(c),
                 .peer = peer,
                 .addr = (uintptr_t)buf,
                 .bytes = bytes,
                 .arg = *req};
    post(c, &w);
    return CL_OK;
}

static cl_result fw_wait(cl_comm *c, int n, const int *reqs)
{
    int32_t *ids = (int32_t *)CL_SLOT_STAGE_OF(running()->local);
    const int per = CL_SLOT_STAGE / (int)sizeof *ids;
    for (int done = 0; done < n; done += per) {
        int k = n - done < per ? n - done : per;
        for (int i = 0; i < k; i++)
            ids[i] = reqs[done + i];
        cl_wire w = {.op = CL_WOP_WAIT, .comm = comm_id(c), .arg = k};
        CL_CHECK(ask(&w, NULL));
    }
    return CL_OK;
}

static cl_result fw_test(cl_comm *c, int req, int *done)
{
    const cl_wire *a;
    cl_wire w = {.op = CL_WOP_TEST, .comm = comm_id(c), .arg = req};
    CL_CHECK(ask(&w, &a));
    *done = a->aux != 0;
    return CL_OK;
}

static cl_result fw_barrier(cl_comm *c)
{
    cl_wire w = {.op = CL_WOP_BARRIER, .comm = comm_id(c)};
    return ask(&w, NULL);
}

static cl_result fw_split(cl_comm *c, int color, int key, cl_comm **out)
{
    const cl_wire *a;
    cl_wire w = {.op = CL_WOP_SPLIT, .comm = comm_id(c), .peer = color, .arg = key};
    CL_CHECK(ask(&w, &a));
    if (a->arg == 0)
        return CL_OK; /* a negative color: no communicator */
    st_comm *n = calloc(1, sizeof *n);
    if (!n)
        return CL_ERR_NOMEM;
    cl_comm_init(&n->base, c->ops, a->aux, (int)a->bytes, c->world_rank);
    n->id = (int)a->arg;
    n->local = ((st_comm *)c)->local;
    *out = &n->base;
    return CL_OK;
}

static cl_result fw_comm_free(cl_comm *c)
{
    st_comm *s = (st_comm *)c;
    if (s->id == 0) {
        cl_set_error("cl_comm_free: the world communicator cannot be freed");
        return CL_ERR_INVALID;
    }
    cl_wire w = {.op = CL_WOP_COMM_FREE, .comm = s->id};
    post(c, &w);
    cl_comm_fini(c);
    free(s);
    return CL_OK;
}

static cl_result fw_agree(cl_comm *c, cl_op op, int64_t *values, int n)
{
    int64_t *stage = (int64_t *)CL_SLOT_STAGE_OF(running()->local);
    memcpy(stage, values, (size_t)n * sizeof *values);
    cl_wire w = {.op = CL_WOP_AGREE, .comm = comm_id(c), .peer = op, .arg = n};
    CL_CHECK(ask(&w, NULL));
    memcpy(values, stage, (size_t)n * sizeof *values);
    return CL_OK;
}

static cl_result fw_mem_alloc(cl_comm *c, size_t bytes, void **out)
{
    (void)c;
    const cl_wire *a;
    cl_wire w = {.op = CL_WOP_ALLOC, .bytes = bytes};
    CL_CHECK(ask(&w, &a));
    *out = (void *)(uintptr_t)a->addr;
    return CL_OK;
}

static cl_result fw_mem_free(cl_comm *c, void *p)
{
    (void)c;
    cl_wire w = {.op = CL_WOP_FREE, .addr = (uintptr_t)p};
    return ask(&w, NULL);
}

/* Copies between host memory and device-like buffers go through the stage area. */
static cl_result staged(int op, void *host, uintptr_t buf, size_t bytes)
{
    char *stage = CL_SLOT_STAGE_OF(running()->local);
    for (size_t done = 0; done < bytes; done += CL_SLOT_STAGE) {
        size_t k = bytes - done < CL_SLOT_STAGE ? bytes - done : CL_SLOT_STAGE;
        if (op == CL_WOP_UPLOAD)
            memcpy(stage, (char *)host + done, k);
        cl_wire w = {.op = (uint16_t)op, .addr = buf + done, .bytes = k};
        CL_CHECK(ask(&w, NULL));
        if (op == CL_WOP_DOWNLOAD)
            memcpy((char *)host + done, stage, k);
    }
    return CL_OK;
}

static cl_result fw_upload(cl_comm *c, void *dst, const void *src, size_t bytes)
{
    (void)c;
    if (cl_rt_host_buffers()) {
        memmove(dst, src, bytes);
        return CL_OK;
    }
    return staged(CL_WOP_UPLOAD, (void *)src, (uintptr_t)dst, bytes);
}

static cl_result fw_download(cl_comm *c, void *dst, const void *src, size_t bytes)
{
    (void)c;
    if (cl_rt_host_buffers()) {
        memmove(dst, src, bytes);
        return CL_OK;
    }
    return staged(CL_WOP_DOWNLOAD, dst, (uintptr_t)src, bytes);
}

static cl_result fw_reduce(cl_comm *c, void *inout, const void *in, size_t count, cl_dtype t,
                           cl_op op)
{
    (void)c;
    cl_wire w = {.op = CL_WOP_REDUCE,
                 .addr = (uintptr_t)inout,
                 .addr2 = (uintptr_t)in,
                 .bytes = count,
                 .arg = (int64_t)t << 8 | (int64_t)op};
    return ask(&w, NULL);
}

static cl_result fw_copy(cl_comm *c, void *dst, const void *src, size_t bytes)
{
    (void)c;
    cl_wire w = {
        .op = CL_WOP_COPY, .addr = (uintptr_t)dst, .addr2 = (uintptr_t)src, .bytes = bytes};
    return ask(&w, NULL);
}

cl_result cl_lab_call(cl_comm *c, int code, void *args, size_t bytes)
{
    if (bytes > CL_SLOT_STAGE) {
        cl_set_error("cl_lab_call: %zu bytes of arguments (at most %d)", bytes, CL_SLOT_STAGE);
        return CL_ERR_INVALID;
    }
    char *stage = CL_SLOT_STAGE_OF(running()->local);
    memcpy(stage, args, bytes);
    cl_wire w = {.op = CL_WOP_LAB, .comm = comm_id(c), .arg = code, .bytes = bytes};
    CL_CHECK(ask(&w, NULL));
    memcpy(args, stage, bytes);
    return CL_OK;
}

static double fw_time(cl_comm *c)
{
    (void)c;
    switch (cl_rt_backend()) {
    case CL_WIRE_SIM: return running()->time;
    case CL_WIRE_GPU: {
        const cl_wire *a;
        cl_wire w = {.op = CL_WOP_TIME};
        return ask(&w, &a) == CL_OK ? a->time : 0.0;
    }
    default: return cl_wtime();
    }
}

static const char *backend_name(void)
{
    static const char *const names[] = {"cpu", "gpu", "sim"};
    int b = cl_rt_backend();
    return b >= 0 && b <= CL_WIRE_SIM ? names[b] : "?";
}

const cl_backend_ops cl_forward_ops = {
    .name = "?", /* set from HELLO by cl_rt_init_world */
    .isend = fw_isend,
    .irecv = fw_irecv,
    .wait = fw_wait,
    .test = fw_test,
    .barrier = fw_barrier,
    .split = fw_split,
    .comm_free = fw_comm_free,
    .agree = fw_agree,
    .mem_alloc = fw_mem_alloc,
    .mem_free = fw_mem_free,
    .mem_upload = fw_upload,
    .mem_download = fw_download,
    .reduce_local = fw_reduce,
    .copy_local = fw_copy,
    .time = fw_time,
};

/* The backend's name must read as the harness's ("cpu", "gpu", "sim"): a copy
 * of the table with the name HELLO gave. */
static cl_backend_ops named_ops;

void cl_rt_init_world(st_rank *r, int world_rank, int world_size)
{
    if (!named_ops.isend) {
        named_ops = cl_forward_ops;
        named_ops.name = backend_name();
    }
    cl_comm_init(&r->world.base, &named_ops, world_rank, world_size, world_rank);
    r->world.id = 0;
    r->world.local = r->local;
}
