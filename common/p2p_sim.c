/* p2p_sim.c: the "sim" backend: ranks as coroutines on a simulated machine, in virtual time.
 *
 * Execution. cl_launch() builds the machine of opts->system (enough nodes
 * for opts->nranks; rank r is GPU r % G of node r / G) and runs every rank's
 * body as a ucontext coroutine on the calling thread. A rank runs until it
 * blocks (a blocking send/recv, cl_group_end, cl_barrier, local work); the
 * scheduler runs the runnable ranks in rank order, and when none is left it
 * advances the flow engine to the next event. Only one rank runs at a time
 * and every choice is made in rank or flow-id order, so virtual times and
 * results are identical on every run, whatever the OS does.
 *
 * How a send becomes a flow (rendezvous, as NCCL's send/recv): a send and a
 * receive are matched in posting order per (sender, receiver) pair. When both
 * are posted (outside a group: at the call; inside: at cl_group_end) a flow
 * from the sender's GPU to the receiver's GPU starts at the current virtual
 * time. It is routed like NCCL traffic: NVLink or PCIe inside a node; between
 * nodes through the sender GPU's own NIC and the same rail at the far end (PXN).
 * It first waits its latency: NCCL's per-hop hardware latency of the path's
 * class for the Simple protocol (lat_ring_{nvl,pci,net}_us[Simple] of the
 * system file) plus the sum of the link latencies on the path; then it moves
 * its bytes at the max-min fair rate the engine gives it among all flows in
 * flight. Both operations complete when the flow does; the receiver's buffer
 * is filled then (memcpy), unless the job runs timing-only. There is no eager
 * path: a send whose receive is never posted deadlocks, as it can on NCCL,
 * and the scheduler reports it.
 *
 * Local work is charged at the GPU's memory bandwidth (hbm_gbps): a copy of n
 * bytes costs 2n/hbm, a reduction 3n/hbm. A barrier costs no time: every rank
 * leaves it at the time the last one arrives. cl_mem_upload/download are free.
 *
 * Timing-only mode (environment COMMLAB_SIM_TIMING_ONLY=1): no data is copied
 * or reduced, so buffers from cl_mem_alloc are never touched and large
 * simulated messages cost no host memory or time.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "p2p_backend.h"
#include "sim/sim.h"
#include "sim/sim_engine.h"

#define STACK_BYTES (1u << 20)
#define US 1e-6

enum { OP_SEND, OP_RECV };
enum { R_RUNNABLE, R_BLOCKED, R_SLEEPING, R_BARRIER, R_DONE };

typedef struct sim_op {
    int kind, owner, peer;
    const void *sbuf;
    void *rbuf;
    size_t bytes;
    int matched;      /* index of the matching op, -1 */
    int done;
    int next;         /* next unmatched op in the same list, -1 */
} sim_op;

typedef struct sim_rank {
    cl_comm base;     /* first: cl_comm * casts to sim_rank * */
    ucontext_t ctx;
    void *stack;
    int state;
    int waiting;      /* posted ops not yet complete */
    int *group;       /* ops posted inside the current group */
    int ngroup, capgroup;
    double wake;      /* R_SLEEPING until this time */
    cl_result rc;
    char err[256];
    int in_head, in_tail;     /* unmatched sends to this rank, in posting order */
    int rq_head, rq_tail;     /* unmatched receives of this rank */
} sim_rank;

typedef struct sim_world {
    cl_sim_machine m;
    cl_sim_engine e;
    sim_rank *r;
    int n;
    sim_op *ops;
    int nops, capops;
    ucontext_t sched;
    int current;
    int at_barrier;
    int timing_only;
    cl_rank_body body;
    void *arg;
} sim_world;

static sim_world *W; /* the running simulation (one at a time per process) */

static sim_rank *me(cl_comm *c)
{
    return (sim_rank *)c;
}

/* Give control back to the scheduler until this rank is runnable again. */
static void yield_blocked(sim_rank *r, int state)
{
    r->state = state;
    swapcontext(&r->ctx, &W->sched);
}

static int new_op(int kind, int owner, int peer, const void *s, void *d, size_t bytes)
{
    if (W->nops == W->capops) {
        int nc = W->capops ? W->capops * 2 : 1024;
        sim_op *q = realloc(W->ops, (size_t)nc * sizeof *q);
        if (!q)
            return -1;
        W->ops = q;
        W->capops = nc;
    }
    W->ops[W->nops] = (sim_op){.kind = kind, .owner = owner, .peer = peer, .sbuf = s,
                               .rbuf = d, .bytes = bytes, .matched = -1, .next = -1};
    return W->nops++;
}

static void list_push(int *head, int *tail, int op)
{
    if (*tail < 0)
        *head = op;
    else
        W->ops[*tail].next = op;
    *tail = op;
}

/* Remove and return the first op in the list with the given peer field, or -1. */
static int list_take(int *head, int *tail, int field_is_owner, int who)
{
    int prev = -1;
    for (int i = *head; i >= 0; prev = i, i = W->ops[i].next) {
        int v = field_is_owner ? W->ops[i].owner : W->ops[i].peer;
        if (v != who)
            continue;
        if (prev < 0)
            *head = W->ops[i].next;
        else
            W->ops[prev].next = W->ops[i].next;
        if (*tail == i)
            *tail = prev;
        W->ops[i].next = -1;
        return i;
    }
    return -1;
}

/* Both sides posted: start the flow. */
static cl_result start_flow(int send, int recv)
{
    sim_op *s = &W->ops[send], *r = &W->ops[recv];
    if (s->bytes > r->bytes) {
        cl_set_error("rank %d sends %zu bytes to rank %d, which receives only %zu", s->owner,
                     s->bytes, r->owner, r->bytes);
        return CL_ERR_INVALID;
    }
    s->matched = recv;
    r->matched = send;
    int path[CL_SIM_MAX_PATH];
    cl_sim_pclass cls;
    int len = cl_sim_route(&W->m, s->owner, r->owner, -1, 0, path, CL_SIM_MAX_PATH, &cls);
    if (len < 0)
        return CL_ERR_BACKEND;
    const cl_sim_system *y = &W->m.sys;
    double hw = cls == CL_SIM_P_NVL   ? y->lat_ring_nvl[CL_PROTO_SIMPLE]
                : cls == CL_SIM_P_PCI ? y->lat_ring_pci[CL_PROTO_SIMPLE]
                                      : y->lat_ring_net[CL_PROTO_SIMPLE];
    double lat = s->owner == r->owner ? 0 : hw * US + cl_sim_path_latency(&W->m, path, len);
    if (cl_sim_engine_add(&W->e, path, len, (double)s->bytes, lat, 0, send) < 0)
        return CL_ERR_NOMEM;
    return CL_OK;
}

static cl_result post(int op)
{
    sim_op *o = &W->ops[op];
    sim_rank *peer = &W->r[o->peer], *self = &W->r[o->owner];
    self->waiting++;
    if (o->kind == OP_SEND) {
        int rv = list_take(&peer->rq_head, &peer->rq_tail, 0, o->owner);
        if (rv >= 0)
            return start_flow(op, rv);
        list_push(&peer->in_head, &peer->in_tail, op);
    } else {
        int sd = list_take(&self->in_head, &self->in_tail, 1, o->peer);
        if (sd >= 0)
            return start_flow(sd, op);
        list_push(&self->rq_head, &self->rq_tail, op);
    }
    return CL_OK;
}

static cl_result wait_all(sim_rank *r)
{
    if (r->waiting > 0)
        yield_blocked(r, R_BLOCKED);
    return CL_OK;
}

static cl_result add_op(cl_comm *c, int kind, const void *s, void *d, size_t bytes, int peer)
{
    sim_rank *r = me(c);
    int op = new_op(kind, c->rank, peer, s, d, bytes);
    if (op < 0)
        return CL_ERR_NOMEM;
    if (c->group_depth > 0) {
        if (r->ngroup == r->capgroup) {
            int nc = r->capgroup ? 2 * r->capgroup : 16;
            int *q = realloc(r->group, (size_t)nc * sizeof *q);
            if (!q)
                return CL_ERR_NOMEM;
            r->group = q;
            r->capgroup = nc;
        }
        r->group[r->ngroup++] = op;
        return CL_OK;
    }
    CL_CHECK(post(op));
    return wait_all(r);
}

static cl_result sim_send(cl_comm *c, const void *buf, size_t bytes, int peer)
{
    return add_op(c, OP_SEND, buf, NULL, bytes, peer);
}

static cl_result sim_recv(cl_comm *c, void *buf, size_t bytes, int peer)
{
    return add_op(c, OP_RECV, NULL, buf, bytes, peer);
}

static cl_result sim_group_start(cl_comm *c)
{
    me(c)->ngroup = 0;
    return CL_OK;
}

static cl_result sim_group_end(cl_comm *c)
{
    sim_rank *r = me(c);
    for (int i = 0; i < r->ngroup; i++)
        CL_CHECK(post(r->group[i]));
    r->ngroup = 0;
    return wait_all(r);
}

static cl_result sim_barrier(cl_comm *c)
{
    sim_rank *r = me(c);
    if (++W->at_barrier < W->n) {
        yield_blocked(r, R_BARRIER);
        return CL_OK;
    }
    W->at_barrier = 0;
    for (int i = 0; i < W->n; i++)
        if (W->r[i].state == R_BARRIER)
            W->r[i].state = R_RUNNABLE;
    return CL_OK;
}

static cl_result sim_mem_alloc(cl_comm *c, size_t bytes, void **out)
{
    *out = malloc(bytes ? bytes : 1);
    if (!*out) {
        cl_set_error("rank %d: cannot allocate %zu bytes", c->rank, bytes);
        return CL_ERR_NOMEM;
    }
    return CL_OK;
}

static cl_result sim_mem_free(cl_comm *c, void *p)
{
    (void)c;
    free(p);
    return CL_OK;
}

static cl_result sim_mem_copy(cl_comm *c, void *dst, const void *src, size_t bytes)
{
    (void)c;
    if (!W->timing_only)
        memmove(dst, src, bytes);
    return CL_OK;
}

/* Charge local work of `traffic` bytes of GPU memory traffic. */
static void charge(sim_rank *r, double traffic)
{
    double bw = W->m.sys.hbm_gbps * 1e9;
    if (bw <= 0 || traffic <= 0)
        return;
    r->wake = W->e.now + traffic / bw;
    yield_blocked(r, R_SLEEPING);
}

static cl_result sim_reduce_local(cl_comm *c, void *inout, const void *in, size_t count,
                                  cl_dtype t, cl_op op)
{
    if (!W->timing_only)
        CL_CHECK(cl_reduce_host(inout, in, count, t, op));
    charge(me(c), 3.0 * (double)count * (double)cl_dtype_size(t));
    return CL_OK;
}

static cl_result sim_copy_local(cl_comm *c, void *dst, const void *src, size_t bytes)
{
    if (!W->timing_only)
        memmove(dst, src, bytes);
    charge(me(c), 2.0 * (double)bytes);
    return CL_OK;
}

static double sim_time(cl_comm *c)
{
    (void)c;
    return W ? W->e.now : 0.0;
}

/* The simulator's own ring allreduce (reduce-scatter then allgather). */
static cl_result sim_baseline_allreduce(cl_comm *c, const void *sendbuf, void *recvbuf,
                                        size_t count, cl_dtype t, cl_op op)
{
    int n = c->size, rank = c->rank;
    size_t es = cl_dtype_size(t);
    if (es == 0) {
        cl_set_error("baseline allreduce: unknown data type");
        return CL_ERR_INVALID;
    }
    if (sendbuf != recvbuf && !W->timing_only)
        memmove(recvbuf, sendbuf, count * es);
    if (n == 1)
        return CL_OK;
    size_t base = count / n, extra = count % n;
    size_t maxchunk = base + (extra ? 1 : 0);
    char *tmp = W->timing_only ? NULL : malloc(maxchunk * es + 1);
    if (!W->timing_only && !tmp)
        return CL_ERR_NOMEM;
    char *buf = recvbuf;
#define OFF(i) ((size_t)(i) * base + ((size_t)(i) < extra ? (size_t)(i) : extra))
#define LEN(i) (base + ((size_t)(i) < extra ? 1 : 0))
    int right = (rank + 1) % n, left = (rank + n - 1) % n;
    cl_result rc = CL_OK;
    for (int s = 0; s < n - 1 && rc == CL_OK; s++) {
        int si = (rank - s + n) % n, ri = (rank - s - 1 + 2 * n) % n;
        rc = cl_sendrecv(c, buf + OFF(si) * es, LEN(si) * es, right, tmp, LEN(ri) * es, left);
        if (rc == CL_OK)
            rc = sim_reduce_local(c, buf + OFF(ri) * es, tmp, LEN(ri), t, op);
    }
    for (int s = 0; s < n - 1 && rc == CL_OK; s++) {
        int si = (rank + 1 - s + n) % n, ri = (rank - s + n) % n;
        rc = cl_sendrecv(c, buf + OFF(si) * es, LEN(si) * es, right, buf + OFF(ri) * es,
                         LEN(ri) * es, left);
    }
#undef OFF
#undef LEN
    free(tmp);
    return rc;
}

static void rank_main(void)
{
    sim_rank *r = &W->r[W->current];
    cl_clear_error();
    r->rc = W->body(&r->base, W->arg);
    if (r->rc != CL_OK)
        snprintf(r->err, sizeof r->err, "%s", cl_last_error());
    r->state = R_DONE;
    swapcontext(&r->ctx, &W->sched);
}

/* Complete flow `send` (tag): deliver data, wake owners. */
static void complete(int send)
{
    sim_op *s = &W->ops[send];
    sim_op *r = &W->ops[s->matched];
    if (!W->timing_only && s->bytes && s->sbuf && r->rbuf)
        memcpy(r->rbuf, s->sbuf, s->bytes);
    s->done = r->done = 1;
    int owners[2] = {s->owner, r->owner};
    for (int k = 0; k < 2; k++) {
        sim_rank *o = &W->r[owners[k]];
        if (--o->waiting == 0 && o->state == R_BLOCKED)
            o->state = R_RUNNABLE;
    }
}

static cl_result schedule(void)
{
    int done[256];
    for (;;) {
        int ran = 1;
        while (ran) {
            ran = 0;
            for (int i = 0; i < W->n; i++)
                while (W->r[i].state == R_RUNNABLE) {
                    W->current = i;
                    swapcontext(&W->sched, &W->r[i].ctx);
                    ran = 1;
                }
        }
        int alive = 0;
        double wake = INFINITY;
        for (int i = 0; i < W->n; i++) {
            if (W->r[i].state != R_DONE)
                alive++;
            if (W->r[i].state == R_SLEEPING && W->r[i].wake < wake)
                wake = W->r[i].wake;
        }
        if (!alive)
            return CL_OK;
        int k = cl_sim_engine_step(&W->e, wake, done, 256);
        if (k < 0) {
            char list[160] = "";
            size_t used = 0;
            for (int i = 0; i < W->n && used + 12 < sizeof list; i++)
                if (W->r[i].state == R_BLOCKED || W->r[i].state == R_BARRIER)
                    used += (size_t)snprintf(list + used, sizeof list - used, "%s%d",
                                             used ? "," : "", i);
            cl_set_error("sim: deadlock at t=%.3f us: ranks %s wait for a matching send, "
                         "receive or barrier that never comes", W->e.now / US, list);
            return CL_ERR_BACKEND;
        }
        if (k == 0) {
            for (int i = 0; i < W->n; i++)
                if (W->r[i].state == R_SLEEPING && W->r[i].wake <= W->e.now)
                    W->r[i].state = R_RUNNABLE;
        }
        for (int j = 0; j < k; j++)
            complete((int)W->e.f[done[j]].tag);
    }
}

static cl_result sim_launch(const cl_launch_opts *o, cl_rank_body body, void *arg)
{
    if (W) {
        cl_set_error("sim: cl_launch called from inside a simulated rank");
        return CL_ERR_INVALID;
    }
    const char *system = o && o->system ? o->system : getenv("COMMLAB_SIM_SYSTEM");
    if (!system)
        system = "dgx-a100";
    int n = o ? o->nranks : 0;
    if (n < 1 || n > 65536) {
        cl_set_error("sim: nranks must be 1..65536, not %d", n);
        return CL_ERR_INVALID;
    }
    sim_world *w = calloc(1, sizeof *w);
    if (!w)
        return CL_ERR_NOMEM;
    cl_sim_system sys;
    cl_result rc = cl_sim_system_load(system, &sys);
    cl_sim_overrides ov = {.routing = -1};
    if (rc == CL_OK) {
        ov.nodes = (n + sys.gpus_per_node - 1) / sys.gpus_per_node;
        rc = cl_sim_machine_build(&sys, &ov, &w->m);
    }
    if (rc == CL_OK)
        rc = cl_sim_engine_init(&w->e, &w->m.g, 1.0);
    w->n = n;
    w->body = body;
    w->arg = arg;
    const char *to = getenv("COMMLAB_SIM_TIMING_ONLY");
    w->timing_only = to && *to && strcmp(to, "0") != 0;
    if (rc == CL_OK && !(w->r = calloc((size_t)n, sizeof *w->r)))
        rc = CL_ERR_NOMEM;
    W = w;
    for (int i = 0; rc == CL_OK && i < n; i++) {
        sim_rank *r = &w->r[i];
        r->base = (cl_comm){.ops = &cl_backend_sim, .rank = i, .size = n};
        r->in_head = r->in_tail = r->rq_head = r->rq_tail = -1;
        r->stack = mmap(NULL, STACK_BYTES, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (r->stack == MAP_FAILED) {
            r->stack = NULL;
            rc = CL_ERR_NOMEM;
            break;
        }
        getcontext(&r->ctx);
        r->ctx.uc_stack.ss_sp = r->stack;
        r->ctx.uc_stack.ss_size = STACK_BYTES;
        r->ctx.uc_link = NULL;
        makecontext(&r->ctx, rank_main, 0);
        r->state = R_RUNNABLE;
    }
    if (rc == CL_OK)
        rc = schedule();
    char reason[320] = "";
    if (rc != CL_OK)
        snprintf(reason, sizeof reason, "%s", cl_last_error());
    for (int i = 0; w->r && i < n; i++)
        if (w->r[i].rc != CL_OK) { /* a rank's own failure explains a later deadlock */
            rc = w->r[i].rc;
            snprintf(reason, sizeof reason, "rank %d: %s", i, w->r[i].err);
            break;
        }
    for (int i = 0; w->r && i < n; i++) {
        if (w->r[i].stack)
            munmap(w->r[i].stack, STACK_BYTES);
        free(w->r[i].group);
    }
    free(w->r);
    free(w->ops);
    cl_sim_engine_free(&w->e);
    cl_sim_machine_free(&w->m);
    free(w);
    W = NULL;
    if (rc != CL_OK)
        cl_set_error("%s", reason);
    return rc;
}

const cl_backend_ops cl_backend_sim = {
    .name = "sim",
    .launch = sim_launch,
    .send = sim_send,
    .recv = sim_recv,
    .group_start = sim_group_start,
    .group_end = sim_group_end,
    .barrier = sim_barrier,
    .mem_alloc = sim_mem_alloc,
    .mem_free = sim_mem_free,
    .mem_upload = sim_mem_copy,
    .mem_download = sim_mem_copy,
    .reduce_local = sim_reduce_local,
    .copy_local = sim_copy_local,
    .time = sim_time,
    .baseline_allreduce = sim_baseline_allreduce,
};
