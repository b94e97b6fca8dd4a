/* proxy.c: run a student's function on a rank and perform, checked, every operation it asks for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffers.h"
#include "deadline.h"
#include "p2p_backend.h"
#include "session.h"

#define S cl_session

static cl_lab_handler lab_handler;

void cl_student_set_lab_handler(cl_lab_handler h) { lab_handler = h; }

/* --- the rank's communicators and posts ------------------------------------------------- */

static cl_comm *comm_of(proxy_rank *p, int id)
{
    return id >= 0 && id < p->ncomms ? p->comms[id] : NULL;
}

static cl_result add_comm(proxy_rank *p, cl_comm *c, int *id)
{
    cl_comm **q = realloc(p->comms, (size_t)(p->ncomms + 1) * sizeof *q);
    if (!q)
        return CL_ERR_NOMEM;
    p->comms = q;
    p->comms[p->ncomms] = c;
    *id = p->ncomms++;
    return CL_OK;
}

static posted *find_post(proxy_rank *p, int wid)
{
    for (int i = 0; i < p->nreqs; i++)
        if (p->reqs[i].wid == wid)
            return &p->reqs[i];
    return NULL;
}

static void drop_post(proxy_rank *p, posted *q) { *q = p->reqs[--p->nreqs]; }

static cl_result add_post(proxy_rank *p, int wid, posted **out)
{
    if (find_post(p, wid)) {
        cl_set_error("request id %d is already in flight", wid);
        return CL_ERR_INVALID;
    }
    if (p->nreqs == p->capreqs) {
        int cap = p->capreqs ? 2 * p->capreqs : 32;
        if (cap > 65536) {
            cl_set_error("more than 65536 transfers in flight on one rank");
            return CL_ERR_INVALID;
        }
        posted *q = realloc(p->reqs, (size_t)cap * sizeof *q);
        if (!q)
            return CL_ERR_NOMEM;
        p->reqs = q;
        p->capreqs = cap;
    }
    *out = &p->reqs[p->nreqs++];
    **out = (posted){.wid = wid};
    return CL_OK;
}

static void trace(proxy_rank *p, cl_comm *c, const cl_wire *w, int peer, size_t bytes)
{
    if (p->allow & CL_CALL_UNTRACED)
        return;
    if (p->ntrace == p->captrace) {
        int cap = p->captrace ? 2 * p->captrace : 64;
        cl_trace_event *q = realloc(p->trace, (size_t)cap * sizeof *q);
        if (!q)
            return; /* the trace is for grading; a missing event shows as a missing event */
        p->trace = q;
        p->captrace = cap;
    }
    p->trace[p->ntrace++] = (cl_trace_event){
        .op = w->op,
        .comm = w->comm,
        .peer = peer,
        .peer_world = c && peer >= 0 && peer < c->size ? cl_comm_world_of(c, peer) : -1,
        .bytes = bytes,
        .time = c ? cl_comm_time(c) : 0,
        .code = w->op == CL_WOP_LAB ? w->arg : 0};
}

/* --- checks ------------------------------------------------------------------------------ */

static unsigned class_of(int op)
{
    switch (op) {
    case CL_WOP_ISEND:
    case CL_WOP_IRECV:
    case CL_WOP_WAIT:
    case CL_WOP_TEST: return CL_ALLOW_P2P;
    case CL_WOP_BARRIER: return CL_ALLOW_BARRIER;
    case CL_WOP_SPLIT:
    case CL_WOP_COMM_FREE: return CL_ALLOW_SPLIT;
    case CL_WOP_AGREE: return CL_ALLOW_AGREE;
    case CL_WOP_ALLOC:
    case CL_WOP_FREE: return CL_ALLOW_MEMORY;
    case CL_WOP_UPLOAD:
    case CL_WOP_DOWNLOAD: return CL_ALLOW_HOST;
    case CL_WOP_REDUCE:
    case CL_WOP_COPY: return CL_ALLOW_LOCAL;
    case CL_WOP_LAB: return CL_ALLOW_LAB;
    default: return 0; /* the clock: always allowed */
    }
}

static cl_result allowed(proxy_rank *p, int op)
{
    unsigned k = class_of(op);
    if (!k || (p->allow & k))
        return CL_OK;
    if (!p->forbidden[0])
        snprintf(p->forbidden, sizeof p->forbidden, "%s", cl_wire_op_name(op));
    cl_set_error("%s is not allowed in %s (see the handout's rules for this function)",
                 cl_wire_op_name(op), p->entry);
    return CL_ERR_FORBIDDEN;
}

/* The rank's own buffer holding [addr, addr + bytes), or NULL with a reason. */
static const cl_buffer *own(proxy_rank *p, uint64_t addr, size_t bytes, int op)
{
    return cl_buffers_find((const void *)(uintptr_t)addr, bytes, p->world->world_rank,
                           cl_wire_op_name(op));
}

/* --- operations -------------------------------------------------------------------------- */

static cl_result post(proxy_rank *p, cl_comm *c, const cl_wire *w)
{
    posted *q;
    CL_CHECK(add_post(p, (int)w->arg, &q));
    cl_result rc = allowed(p, w->op);
    if (rc == CL_OK && !c) {
        cl_set_error("%s: unknown communicator %d", cl_wire_op_name(w->op), w->comm);
        rc = CL_ERR_INVALID;
    }
    if (rc == CL_OK && !own(p, w->addr, w->bytes, w->op))
        rc = CL_ERR_INVALID;
    if (rc == CL_OK) {
        void *buf = (void *)(uintptr_t)w->addr;
        rc = w->op == CL_WOP_ISEND ? cl_isend(c, buf, w->bytes, w->peer, &q->req)
                                   : cl_irecv(c, buf, w->bytes, w->peer, &q->req);
    }
    if (rc != CL_OK) { /* reported by the wait or test of this request */
        q->failed = rc;
        snprintf(q->why, sizeof q->why, "%s", cl_last_error());
    }
    trace(p, c, w, w->peer, w->bytes);
    return CL_OK;
}

static cl_result wait_for(proxy_rank *p, cl_comm *c, const cl_wire *w)
{
    int n = (int)w->arg;
    if (n < 0 || (size_t)n > CL_SLOT_STAGE / sizeof(int32_t)) {
        cl_set_error("cl_wait: %d requests", n);
        return CL_ERR_INVALID;
    }
    int32_t *ids = malloc((size_t)(n ? n : 1) * sizeof *ids);
    cl_request *reqs = malloc((size_t)(n ? n : 1) * sizeof *reqs);
    cl_result rc = ids && reqs ? CL_OK : CL_ERR_NOMEM, failed = CL_OK;
    char why[160] = "";
    if (rc == CL_OK)
        memcpy(ids, CL_SLOT_STAGE_OF(p - S.ranks), (size_t)n * sizeof *ids);
    int k = 0;
    for (int i = 0; rc == CL_OK && i < n; i++) {
        posted *q = find_post(p, ids[i]);
        if (!q) {
            cl_set_error("cl_wait: request %d is not in flight (waited for twice?)", ids[i]);
            rc = CL_ERR_INVALID;
            break;
        }
        if (q->failed != CL_OK && failed == CL_OK) {
            failed = q->failed;
            snprintf(why, sizeof why, "%s", q->why);
        }
        if (q->req.id)
            reqs[k++] = q->req;
        drop_post(p, q);
    }
    if (rc == CL_OK && k)
        rc = cl_waitall(c, k, reqs);
    if (rc == CL_OK && failed != CL_OK) {
        cl_set_error("%s", why);
        rc = failed;
    }
    free(ids);
    free(reqs);
    return rc;
}

static cl_result test_one(proxy_rank *p, cl_comm *c, const cl_wire *w, cl_wire *a)
{
    posted *q = find_post(p, (int)w->arg);
    if (!q) {
        cl_set_error("cl_test: request %lld is not in flight", (long long)w->arg);
        return CL_ERR_INVALID;
    }
    if (q->failed != CL_OK) {
        cl_result rc = q->failed;
        cl_set_error("%s", q->why);
        drop_post(p, q);
        return rc;
    }
    int done = 1;
    if (q->req.id)
        CL_CHECK(cl_test(c, &q->req, &done));
    a->aux = done;
    if (done)
        drop_post(p, q);
    return CL_OK;
}

static cl_result split(proxy_rank *p, cl_comm *c, const cl_wire *w, cl_wire *a)
{
    cl_comm *n = NULL;
    CL_CHECK(cl_comm_split(c, w->peer, (int)w->arg, &n));
    if (!n)
        return CL_OK;
    int id;
    CL_CHECK(add_comm(p, n, &id));
    a->arg = id;
    a->aux = cl_comm_rank(n);
    a->bytes = (uint64_t)cl_comm_size(n);
    return CL_OK;
}

static cl_result agree(int r, cl_comm *c, const cl_wire *w)
{
    int64_t v[CL_AGREE_MAX];
    int n = (int)w->arg;
    if (n < 0 || n > CL_AGREE_MAX) {
        cl_set_error("cl_agree: %d values (at most %d)", n, CL_AGREE_MAX);
        return CL_ERR_INVALID;
    }
    memcpy(v, CL_SLOT_STAGE_OF(r), (size_t)n * sizeof *v);
    CL_CHECK(cl_agree(c, (cl_op)w->peer, v, n));
    memcpy(CL_SLOT_STAGE_OF(r), v, (size_t)n * sizeof *v);
    return CL_OK;
}

static cl_result local_work(proxy_rank *p, const cl_wire *w)
{
    void *dst = (void *)(uintptr_t)w->addr, *src = (void *)(uintptr_t)w->addr2;
    if (w->op == CL_WOP_COPY) {
        if (!own(p, w->addr, w->bytes, w->op) || !own(p, w->addr2, w->bytes, w->op))
            return CL_ERR_INVALID;
        return cl_copy_local(p->world, dst, src, w->bytes);
    }
    cl_dtype t = (cl_dtype)(w->arg >> 8);
    cl_op op = (cl_op)(w->arg & 0xff);
    size_t es = cl_dtype_size(t);
    if (es == 0 || (unsigned)op >= CL_OP_COUNT || w->bytes > SIZE_MAX / es) {
        cl_set_error("cl_reduce_local: bad data type, reduction or count");
        return CL_ERR_INVALID;
    }
    if (!own(p, w->addr, w->bytes * es, w->op) || !own(p, w->addr2, w->bytes * es, w->op))
        return CL_ERR_INVALID;
    return cl_reduce_local(p->world, dst, src, w->bytes, t, op);
}

static cl_result host_copy(proxy_rank *p, int r, const cl_wire *w)
{
    if (w->bytes > CL_SLOT_STAGE) {
        cl_set_error("%s: %llu bytes in one piece", cl_wire_op_name(w->op),
                     (unsigned long long)w->bytes);
        return CL_ERR_INVALID;
    }
    if (!own(p, w->addr, w->bytes, w->op))
        return CL_ERR_INVALID;
    void *buf = (void *)(uintptr_t)w->addr;
    if (w->op == CL_WOP_UPLOAD)
        return cl_mem_upload(p->world, buf, CL_SLOT_STAGE_OF(r), w->bytes);
    return cl_mem_download(p->world, CL_SLOT_STAGE_OF(r), buf, w->bytes);
}

/* The lab's own operation, on a private copy of its arguments. */
static cl_result lab_op(int r, cl_comm *c, const cl_wire *w)
{
    if (!lab_handler) {
        cl_set_error("this lab has no operation %lld", (long long)w->arg);
        return CL_ERR_INVALID;
    }
    if (w->bytes > CL_SLOT_STAGE) {
        cl_set_error("cl_lab_call: %llu bytes of arguments", (unsigned long long)w->bytes);
        return CL_ERR_INVALID;
    }
    char *copy = malloc(w->bytes ? w->bytes : 1);
    if (!copy)
        return CL_ERR_NOMEM;
    memcpy(copy, CL_SLOT_STAGE_OF(r), w->bytes);
    cl_result rc = lab_handler(c, (int)w->arg, copy, w->bytes);
    if (rc == CL_OK)
        memcpy(CL_SLOT_STAGE_OF(r), copy, w->bytes);
    free(copy);
    return rc;
}

static cl_result remember_buffer(proxy_rank *p, uint64_t addr)
{
    if (p->nmine == p->capmine) {
        int cap = p->capmine ? 2 * p->capmine : 16;
        uint64_t *q = realloc(p->mine, (size_t)cap * sizeof *q);
        if (!q)
            return CL_ERR_NOMEM;
        p->mine = q;
        p->capmine = cap;
    }
    p->mine[p->nmine++] = addr;
    return CL_OK;
}

/* *freed: the buffer's size, which the trace records (a lab measures the rank's memory).
 * Only a buffer the student's code allocated: freeing the harness's own (its inputs, its
 * outputs) would hide memory from that measure and pull data from under its checks. */
static cl_result free_buffer(proxy_rank *p, const cl_wire *w, size_t *freed)
{
    const cl_buffer *b = own(p, w->addr, 0, w->op);
    if (!b)
        return CL_ERR_INVALID;
    int at = -1;
    for (int i = 0; i < p->nmine && at < 0; i++)
        if (p->mine[i] == w->addr)
            at = i;
    if (at < 0) {
        cl_set_error("cl_mem_free: %p was not allocated by your code (the harness's buffers "
                     "are not yours to free)",
                     (void *)(uintptr_t)w->addr);
        return CL_ERR_INVALID;
    }
    p->mine[at] = p->mine[--p->nmine];
    *freed = b->bytes;
    if (b->base != w->addr) {
        cl_set_error("cl_mem_free: %p is inside a buffer, not its start",
                     (void *)(uintptr_t)w->addr);
        return CL_ERR_INVALID;
    }
    return cl_mem_free(p->world, (void *)(uintptr_t)w->addr);
}

/* Perform one operation of local rank r and queue its answer. Returns a
 * failure only when the harness itself cannot go on. */
static cl_result perform(int r, const cl_wire *w)
{
    proxy_rank *p = &S.ranks[r];
    cl_comm *c = comm_of(p, w->comm);
    cl_wire a = {.kind = CL_W_RESUME, .rank = r};
    cl_result st;
    size_t freed = 0;
    if (w->op == CL_WOP_ISEND || w->op == CL_WOP_IRECV)
        return post(p, c, w);
    if (w->op == CL_WOP_COMM_FREE) {
        if (w->comm > 0 && c) {
            trace(p, c, w, -1, 0);
            cl_comm_free(c);
            p->comms[w->comm] = NULL;
        }
        return CL_OK;
    }
    cl_clear_error();
    st = allowed(p, w->op);
    if (st == CL_OK && !c &&
        (w->op == CL_WOP_WAIT || w->op == CL_WOP_TEST || w->op == CL_WOP_BARRIER ||
         w->op == CL_WOP_SPLIT || w->op == CL_WOP_AGREE)) {
        cl_set_error("%s: unknown communicator %d", cl_wire_op_name(w->op), w->comm);
        st = CL_ERR_INVALID;
    }
    int blocks = w->op == CL_WOP_WAIT || w->op == CL_WOP_BARRIER || w->op == CL_WOP_SPLIT ||
                 w->op == CL_WOP_AGREE;
    if (st == CL_OK && blocks) { /* for the watchdog, should the wait never end */
        char what[160];
        snprintf(what, sizeof what, "rank %d's %s() waits in %s, operation %d of the call",
                 S.first + r, p->entry ? p->entry : "?", cl_wire_op_name(w->op), p->ntrace + 1);
        cl_deadline_waiting(what);
    }
    if (st == CL_OK) {
        switch (w->op) {
        case CL_WOP_WAIT: st = wait_for(p, c, w); break;
        case CL_WOP_TEST: st = test_one(p, c, w, &a); break;
        case CL_WOP_BARRIER: st = cl_barrier(c); break;
        case CL_WOP_SPLIT: st = split(p, c, w, &a); break;
        case CL_WOP_AGREE: st = agree(r, c, w); break;
        case CL_WOP_ALLOC: {
            void *buf = NULL;
            st = cl_mem_alloc(p->world, w->bytes, &buf);
            if (st == CL_OK && (st = remember_buffer(p, (uintptr_t)buf)) != CL_OK)
                cl_mem_free(p->world, buf);
            else
                a.addr = (uintptr_t)buf;
            break;
        }
        case CL_WOP_FREE: st = free_buffer(p, w, &freed); break;
        case CL_WOP_UPLOAD:
        case CL_WOP_DOWNLOAD: st = host_copy(p, r, w); break;
        case CL_WOP_REDUCE:
        case CL_WOP_COPY: st = local_work(p, w); break;
        case CL_WOP_TIME: a.time = cl_comm_time(p->world); break;
        case CL_WOP_LAB: st = lab_op(r, c ? c : p->world, w); break;
        default: cl_set_error("unknown operation %d", w->op); st = CL_ERR_INVALID;
        }
    }
    if (blocks)
        cl_deadline_waiting(NULL);
    if (st == CL_ERR_NOMEM)
        return st;
    trace(p, c, w, w->op == CL_WOP_WAIT || w->op == CL_WOP_TEST ? -1 : w->peer,
          w->op == CL_WOP_REDUCE || w->op == CL_WOP_COPY || w->op == CL_WOP_ALLOC ||
                  w->op == CL_WOP_UPLOAD || w->op == CL_WOP_DOWNLOAD || w->op == CL_WOP_LAB
              ? w->bytes
          : w->op == CL_WOP_FREE && st == CL_OK ? freed
                                                : 0);
    if ((w->op == CL_WOP_BARRIER || w->op == CL_WOP_AGREE || w->op == CL_WOP_SPLIT ||
         w->op == CL_WOP_LAB) &&
        p->ntrace)
        p->trace[p->ntrace - 1].peer = p->trace[p->ntrace - 1].peer_world = -1;
    a.status = st;
    if (st != CL_OK)
        snprintf(CL_SLOT_TEXT_OF(r), CL_SLOT_TEXT, "%s", cl_last_error());
    if (w->op != CL_WOP_TIME)
        a.time = cl_comm_time(p->world);
    return cl_session_queue(&a);
}

/* --- calls ------------------------------------------------------------------------------- */

static cl_result attach(int r, cl_comm *comm)
{
    proxy_rank *p = &S.ranks[r];
    if (p->world == comm)
        return CL_OK;
    if (p->world) {
        cl_set_error("rank %d of the student program is attached to another communicator",
                     comm->world_rank);
        return CL_ERR_INVALID;
    }
    p->world = comm;
    int id;
    return add_comm(p, comm, &id);
}

/* Finish what the student's code left in flight when it returned. */
static void settle(proxy_rank *p, cl_call_result *res)
{
    if (p->nreqs == 0)
        return;
    if (res->status == CL_OK) {
        res->status = CL_ERR_INVALID;
        snprintf(res->error, sizeof res->error,
                 "%s returned with %d transfer(s) still in flight (every cl_isend/cl_irecv "
                 "needs its cl_wait)",
                 p->entry, p->nreqs);
    }
    for (int i = 0; i < p->nreqs; i++)
        if (p->reqs[i].req.id)
            cl_wait(p->world, &p->reqs[i].req);
    p->nreqs = 0;
}

cl_result cl_student_call(cl_comm *comm, const cl_call *call, cl_call_result *res)
{
    memset(res, 0, sizeof *res);
    int r = comm->world_rank - S.first;
    if (S.pid == 0 || !S.ranks || r < 0 || r >= S.nlocal) {
        cl_set_error("no student program runs rank %d", comm->world_rank);
        return CL_ERR_INVALID;
    }
    if (call->args_bytes > CL_SLOT_ARGS || call->out_bytes > CL_SLOT_ARGS ||
        strlen(call->entry) >= CL_SLOT_TEXT) {
        cl_set_error("call %s: argument block of %zu bytes (at most %d)", call->entry,
                     call->args_bytes, CL_SLOT_ARGS);
        return CL_ERR_INVALID;
    }
    CL_CHECK(attach(r, comm));
    proxy_rank *p = &S.ranks[r];
    if (S.dead) {
        res->status = S.death;
        snprintf(res->error, sizeof res->error, "%s", S.why);
        return S.death;
    }
    snprintf(CL_SLOT_TEXT_OF(r), CL_SLOT_TEXT, "%s", call->entry);
    memcpy(CL_SLOT_ARGS_OF(r), call->args, call->args_bytes);
    p->entry = call->entry;
    p->allow = call->allow;
    p->forbidden[0] = '\0';
    p->ntrace = 0;
    double t0 = cl_comm_time(comm);
    cl_wire w = {.kind = CL_W_CALL,
                 .rank = r,
                 .addr = (uintptr_t)CL_SLOT_ARGS_OF(r),
                 .bytes = call->args_bytes,
                 .time = t0};
    CL_CHECK(cl_session_queue(&w));
    for (;;) {
        cl_result rc = cl_session_next(r, &w);
        if (rc != CL_OK) {
            res->status = rc;
            snprintf(res->error, sizeof res->error, "%s", cl_last_error());
            return rc;
        }
        if (w.kind == CL_W_RETURN)
            break;
        CL_CHECK(perform(r, &w));
    }
    res->seconds = cl_comm_time(comm) - t0;
    res->status = (cl_result)w.status;
    if (res->status != CL_OK) {
        char *text = CL_SLOT_TEXT_OF(r);
        text[CL_SLOT_TEXT - 1] = '\0';
        if (text[0])
            snprintf(res->error, sizeof res->error, "%s", text);
        else
            snprintf(res->error, sizeof res->error, "%s returned '%s'", call->entry,
                     cl_result_str(res->status));
    }
    settle(p, res);
    p->entry = NULL; /* between calls, a fault is no function's */
    snprintf(res->forbidden, sizeof res->forbidden, "%s", p->forbidden);
    if (call->out && call->out_bytes)
        memcpy(call->out, CL_SLOT_ARGS_OF(r), call->out_bytes);
    return CL_OK;
}

const cl_trace_event *cl_student_trace(const cl_comm *comm, int *n)
{
    int r = comm->world_rank - S.first;
    *n = 0;
    if (!S.ranks || r < 0 || r >= S.nlocal)
        return NULL;
    *n = S.ranks[r].ntrace;
    return S.ranks[r].trace;
}

size_t cl_student_sent_bytes(const cl_comm *comm, size_t *received)
{
    int n;
    const cl_trace_event *ev = cl_student_trace(comm, &n);
    size_t s = 0, r = 0;
    for (int i = 0; i < n; i++) {
        if (ev[i].op == CL_WOP_ISEND)
            s += ev[i].bytes;
        else if (ev[i].op == CL_WOP_IRECV)
            r += ev[i].bytes;
    }
    if (received)
        *received = r;
    return s;
}

void *cl_student_args_home(const cl_comm *comm)
{
    int r = comm->world_rank - S.first;
    return S.pid && r >= 0 && r < S.nlocal ? CL_SLOT_ARGS_OF(r) : NULL;
}
