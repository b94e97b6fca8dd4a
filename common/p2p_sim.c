/* p2p_sim.c: the "sim" backend: ranks as coroutines on a simulated machine, in virtual time.
 *
 * Execution. cl_launch() builds the machine of opts->system (enough nodes for
 * opts->nranks; rank r is GPU r % G of node r / G) and runs every rank's body
 * as a coroutine on the calling thread (coroutine.h). A rank runs until it blocks
 * (a wait, a barrier, local work, a wait for the student's program); the
 * scheduler runs the runnable ranks in rank order; when none is left it first
 * lets the student's program answer (cl_sim_set_idle), and only then advances
 * the flow engine to the next event. Runnable ranks are a bitmap and sleeping
 * ranks a heap, so an event costs no pass over all ranks. Every choice is made in rank or flow
 * order, so virtual times and results are identical on every run.
 *
 * Transfers (rendezvous, as NCCL's send/recv): a send and a receive match in
 * posting order per (communicator, sender, receiver). When both are posted, a
 * flow from the sender's GPU to the receiver's GPU starts at the current
 * virtual time. It is routed like NCCL's p2p traffic (cl_sim_route, nic < 0):
 * NVLink or PCIe inside a node; between nodes, with PXN (the system's `pxn`,
 * on by default) relayed over NVLink to the receiver's rail, without it out
 * by the sender GPU's NIC and in by the receiver GPU's NIC, crossing rails
 * through the spines when they differ. It first waits its latency: NCCL's
 * per-hop latency of the path's class for the Simple protocol
 * (lat_ring_{nvl,pci,net}_us[Simple] of the system file) plus the link
 * latencies on the path; then it moves its bytes at the max-min fair rate the
 * engine gives it. Both requests complete when the flow does, and the
 * receiver's buffer then holds the sender's contents (sim/sim_data.h:
 * contents are described, never stored, so any size costs the same memory).
 * There is no eager path: a send whose receive is never posted deadlocks, as
 * it can on NCCL, and the scheduler says who waits for whom.
 *
 * Costs: a copy of n bytes on a GPU costs 2n/hbm, a reduction 3n/hbm (the
 * system's hbm_gbps); an upload or download crosses PCIe (pcie_gbps); a
 * cl_test that finds the transfer unfinished costs 1 us of polling; barriers,
 * splits and agreements cost nothing.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffers.h"
#include "coroutine.h"
#include "launch.h"
#include "p2p_backend.h"
#include "p2p_sim.h"
#include "sim/sim.h"
#include "sim/sim_data.h"
#include "sim/sim_engine.h"

#define US     1e-6
#define POLL_S (1 * US)

enum { OP_SEND, OP_RECV };
enum { R_RUNNABLE, R_BLOCKED, R_SLEEPING, R_BARRIER, R_EXTERNAL, R_DONE };

/* The members of a communicator, shared by the comms of its ranks. */
typedef struct sim_group {
    int id, size, refs;
    int *world;  /* world rank of each member */
    int arrived; /* rendezvous of barrier, split, agree */
    int64_t acc[CL_AGREE_MAX];
    int *color, *key; /* split: what each member passed */
} sim_group;

typedef struct sim_comm {
    cl_comm base; /* first */
    sim_group *g;
} sim_comm;

typedef struct sim_req {
    int id;                       /* unique per owner; 0 when the slot is free */
    int kind, owner, peer, group; /* owner, peer: world ranks */
    uintptr_t buf;
    size_t bytes;
    int matched; /* slot of the matching request, -1 */
    int done, waited;
    int next; /* next in a match queue or the free list, -1 */
    cl_result rc;
    char *why;
} sim_req;

typedef struct sim_rank {
    sim_comm world;
    cl_coro coro;
    int rc_dst; /* route cache: last receiver + 1 (0: none), its path and latency */
    int rc_len;
    double rc_lat;
    int rc_path[CL_SIM_MAX_PATH];
    int state;
    int *live; /* slots of this rank's requests */
    int nlive, caplive;
    int next_id;
    int pending; /* waited requests not yet done */
    double wake;
    int in_head, in_tail; /* unmatched sends to this rank, in posting order */
    int rq_head, rq_tail; /* unmatched receives of this rank */
    sim_group *at;        /* the group of the rendezvous it waits in */
    int64_t agreed[CL_AGREE_MAX];
    sim_comm *split_out;
    cl_result split_rc;
    cl_result rc;
    char err[320];
} sim_rank;

typedef struct sim_world {
    cl_sim_machine m;
    cl_sim_engine e;
    sim_rank *r;
    int n;
    sim_req *q;
    int nq, capq, free_q;
    cl_coro sched;
    int current;
    /* scheduling state kept incrementally, so an event costs no scan of all ranks */
    uint64_t *runnable;    /* bitmap of R_RUNNABLE ranks */
    int alive, external;   /* ranks not R_DONE; ranks in R_EXTERNAL */
    struct sleeper *sleep; /* min-heap of (wake, rank) of R_SLEEPING ranks */
    int nsleep, cap_sleep;
    size_t stack_bytes;
    int next_group;
    cl_result external_rc; /* the idle hook failed: every external wait fails */
    char *broken;          /* a deadlock happened: every later wait fails with this */
    cl_rank_body body;
    void *arg;
} sim_world;

typedef struct sleeper {
    double wake;
    int rank;
} sleeper;

static sim_world *W;
static cl_result (*idle_hook)(void);

static const cl_backend_ops sim_ops;

void cl_sim_set_idle(cl_result (*idle)(void)) { idle_hook = idle; }

static sim_rank *me(cl_comm *c) { return &W->r[c->world_rank]; }

static void to_sched(sim_rank *r) { cl_coro_switch(&r->coro, &W->sched); }

static void to_rank(sim_rank *r) { cl_coro_switch(&W->sched, &r->coro); }

static void sleep_push(double wake, int rank)
{
    if (cl_sim_grow((void **)&W->sleep, &W->cap_sleep, W->nsleep + 1, sizeof *W->sleep))
        abort(); /* a few bytes per rank: cannot fail short of a broken heap */
    sleeper *h = W->sleep;
    int i = W->nsleep++;
    h[i] = (sleeper){wake, rank};
    while (i > 0) {
        int p = (i - 1) / 2;
        if (h[p].wake < h[i].wake || (h[p].wake == h[i].wake && h[p].rank < h[i].rank))
            break;
        sleeper t = h[p];
        h[p] = h[i];
        h[i] = t;
        i = p;
    }
}

static sleeper sleep_pop(void)
{
    sleeper *h = W->sleep, top = h[0];
    h[0] = h[--W->nsleep];
    for (int i = 0;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < W->nsleep &&
            (h[l].wake < h[m].wake || (h[l].wake == h[m].wake && h[l].rank < h[m].rank)))
            m = l;
        if (r < W->nsleep &&
            (h[r].wake < h[m].wake || (h[r].wake == h[m].wake && h[r].rank < h[m].rank)))
            m = r;
        if (m == i)
            break;
        sleeper t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
    return top;
}

/* Every change of a rank's state goes through here, keeping the counters. */
static void set_state(sim_rank *r, int state)
{
    int i = (int)(r - W->r);
    if (r->state == R_RUNNABLE)
        W->runnable[i / 64] &= ~((uint64_t)1 << (i % 64));
    if (r->state == R_EXTERNAL)
        W->external--;
    if (r->state != R_DONE && state == R_DONE)
        W->alive--;
    r->state = state;
    if (state == R_RUNNABLE)
        W->runnable[i / 64] |= (uint64_t)1 << (i % 64);
    if (state == R_EXTERNAL)
        W->external++;
    if (state == R_SLEEPING)
        sleep_push(r->wake, i);
}

static void yield_as(sim_rank *r, int state)
{
    set_state(r, state);
    to_sched(r);
}

/* --- requests and matching ---------------------------------------------------------------- */

static int new_req(void)
{
    if (W->free_q >= 0) {
        int i = W->free_q;
        W->free_q = W->q[i].next;
        return i;
    }
    if (W->nq == W->capq) {
        int cap = W->capq ? 2 * W->capq : 1024;
        sim_req *q = realloc(W->q, (size_t)cap * sizeof *q);
        if (!q)
            return -1;
        W->q = q;
        W->capq = cap;
    }
    return W->nq++;
}

static void free_req(int i)
{
    free(W->q[i].why);
    W->q[i] = (sim_req){.next = W->free_q, .matched = -1};
    W->free_q = i;
}

static void list_push(int *head, int *tail, int i)
{
    W->q[i].next = -1;
    if (*tail < 0)
        *head = i;
    else
        W->q[*tail].next = i;
    *tail = i;
}

/* Remove and return the first request in the list of group g with the given
 * peer (by the field `owner` or `peer`), or -1. */
static int list_take(int *head, int *tail, int by_owner, int who, int g)
{
    int prev = -1;
    for (int i = *head; i >= 0; prev = i, i = W->q[i].next) {
        if (W->q[i].group != g || (by_owner ? W->q[i].owner : W->q[i].peer) != who)
            continue;
        if (prev < 0)
            *head = W->q[i].next;
        else
            W->q[prev].next = W->q[i].next;
        if (*tail == i)
            *tail = prev;
        W->q[i].next = -1;
        return i;
    }
    return -1;
}

static void finish(int i, cl_result rc, const char *why)
{
    sim_req *q = &W->q[i];
    q->done = 1;
    if (rc != CL_OK && q->rc == CL_OK) {
        q->rc = rc;
        q->why = strdup(why);
    }
    sim_rank *o = &W->r[q->owner];
    if (q->waited && --o->pending == 0 && o->state == R_BLOCKED)
        set_state(o, R_RUNNABLE);
}

static cl_result start_flow(int s, int v)
{
    sim_req *snd = &W->q[s], *rcv = &W->q[v];
    snd->matched = v;
    rcv->matched = s;
    if (snd->bytes != rcv->bytes) {
        char why[200];
        snprintf(why, sizeof why, "rank %d sends %zu bytes to rank %d, which receives %zu",
                 snd->owner, snd->bytes, rcv->owner, rcv->bytes);
        finish(s, CL_ERR_INVALID, why);
        finish(v, CL_ERR_INVALID, why);
        return CL_OK;
    }
    /* The route and latency of the sender's last peer are kept: a rank's
     * sends mostly go to the same peers (a ring: one), and a pair's route is
     * fixed, as in the switches' tables. */
    sim_rank *o = &W->r[snd->owner];
    if (o->rc_dst != rcv->owner + 1) {
        cl_sim_pclass cls;
        int len =
            cl_sim_route(&W->m, snd->owner, rcv->owner, -1, 0, o->rc_path, CL_SIM_MAX_PATH, &cls);
        if (len < 0)
            return CL_ERR_BACKEND;
        const cl_sim_system *y = &W->m.sys;
        double hw = cls == CL_SIM_P_NVL   ? y->lat_ring_nvl[CL_PROTO_SIMPLE]
                    : cls == CL_SIM_P_PCI ? y->lat_ring_pci[CL_PROTO_SIMPLE]
                                          : y->lat_ring_net[CL_PROTO_SIMPLE];
        o->rc_lat =
            snd->owner == rcv->owner ? 0 : hw * US + cl_sim_path_latency(&W->m, o->rc_path, len);
        o->rc_len = len;
        o->rc_dst = rcv->owner + 1;
    }
    const int *path = o->rc_path;
    int len = o->rc_len;
    double lat = o->rc_lat;
    if (cl_sim_engine_add(&W->e, path, len, (double)snd->bytes, lat, 0, s) < 0)
        return CL_ERR_NOMEM;
    return CL_OK;
}

/* The flow of send slot s is done: move the contents, finish both requests. */
static void deliver(int s)
{
    sim_req *snd = &W->q[s];
    int v = snd->matched;
    sim_req *rcv = &W->q[v];
    cl_result rc = CL_OK;
    char why[200] = "";
    if (snd->bytes) {
        const cl_buffer *a = cl_buffers_find((void *)snd->buf, snd->bytes, -1, "sim send");
        const cl_buffer *b =
            a ? cl_buffers_find((void *)rcv->buf, rcv->bytes, -1, "sim recv") : NULL;
        if (a && b)
            rc = cl_sim_data_copy(b->impl, rcv->buf - b->base, a->impl, snd->buf - a->base,
                                  snd->bytes);
        else
            rc = CL_ERR_INVALID; /* a buffer was freed while in flight */
        if (rc != CL_OK)
            snprintf(why, sizeof why, "%s", cl_last_error());
    }
    finish(s, rc, why);
    finish(v, rc, why);
}

static cl_result track(sim_rank *r, int slot)
{
    if (r->nlive == r->caplive) {
        int cap = r->caplive ? 2 * r->caplive : 16;
        int *q = realloc(r->live, (size_t)cap * sizeof *q);
        if (!q)
            return CL_ERR_NOMEM;
        r->live = q;
        r->caplive = cap;
    }
    r->live[r->nlive++] = slot;
    return CL_OK;
}

static int find_live(sim_rank *r, int id, int *pos)
{
    for (int i = 0; i < r->nlive; i++)
        if (W->q[r->live[i]].id == id) {
            *pos = i;
            return r->live[i];
        }
    return -1;
}

static cl_result post(cl_comm *c, int kind, const void *buf, size_t bytes, int peer, int *id)
{
    sim_comm *sc = (sim_comm *)c;
    sim_rank *r = me(c);
    int i = new_req();
    if (i < 0)
        return CL_ERR_NOMEM;
    if (++r->next_id <= 0)
        r->next_id = 1;
    W->q[i] = (sim_req){.id = r->next_id,
                        .kind = kind,
                        .owner = c->world_rank,
                        .peer = sc->g->world[peer],
                        .group = sc->g->id,
                        .buf = (uintptr_t)buf,
                        .bytes = bytes,
                        .matched = -1,
                        .next = -1};
    CL_CHECK(track(r, i));
    *id = r->next_id;
    sim_rank *p = &W->r[W->q[i].peer];
    if (kind == OP_SEND) {
        int v = list_take(&p->rq_head, &p->rq_tail, 0, c->world_rank, sc->g->id);
        if (v >= 0)
            return start_flow(i, v);
        list_push(&p->in_head, &p->in_tail, i);
    } else {
        int s = list_take(&r->in_head, &r->in_tail, 1, W->q[i].peer, sc->g->id);
        if (s >= 0)
            return start_flow(s, i);
        list_push(&r->rq_head, &r->rq_tail, i);
    }
    return CL_OK;
}

static cl_result sim_isend(cl_comm *c, const void *buf, size_t bytes, int peer, int *req)
{
    return post(c, OP_SEND, buf, bytes, peer, req);
}

static cl_result sim_irecv(cl_comm *c, void *buf, size_t bytes, int peer, int *req)
{
    return post(c, OP_RECV, buf, bytes, peer, req);
}

/* Release finished request at live position pos; returns its result. */
static cl_result retire(sim_rank *r, int pos, cl_result first)
{
    int slot = r->live[pos];
    cl_result rc = W->q[slot].rc;
    if (rc != CL_OK && first == CL_OK)
        cl_set_error("%s", W->q[slot].why ? W->q[slot].why : "transfer failed");
    free_req(slot);
    r->live[pos] = r->live[--r->nlive];
    return first != CL_OK ? first : rc;
}

/* After a deadlock the ranks are out of step: nothing that waits can be trusted. */
static cl_result check_broken(void)
{
    if (!W->broken)
        return CL_OK;
    cl_set_error("%s", W->broken);
    return CL_ERR_BACKEND;
}

static cl_result sim_wait(cl_comm *c, int n, const int *reqs)
{
    sim_rank *r = me(c);
    CL_CHECK(check_broken());
    for (int i = 0; i < n; i++) {
        int pos, slot = find_live(r, reqs[i], &pos);
        if (slot < 0) {
            cl_set_error("rank %d: wait for request %d, which is not in flight", c->rank, reqs[i]);
            return CL_ERR_INVALID;
        }
        if (!W->q[slot].done && !W->q[slot].waited) {
            W->q[slot].waited = 1;
            r->pending++;
        }
    }
    if (r->pending > 0)
        yield_as(r, R_BLOCKED);
    CL_CHECK(check_broken());
    cl_result rc = CL_OK;
    for (int i = 0; i < n; i++) {
        int pos;
        if (find_live(r, reqs[i], &pos) >= 0)
            rc = retire(r, pos, rc);
    }
    return rc;
}

static void sleep_for(sim_rank *r, double seconds)
{
    if (seconds <= 0)
        return;
    r->wake = W->e.now + seconds;
    yield_as(r, R_SLEEPING);
}

static cl_result sim_test(cl_comm *c, int req, int *done)
{
    sim_rank *r = me(c);
    int pos, slot = find_live(r, req, &pos);
    if (slot < 0) {
        cl_set_error("rank %d: test of request %d, which is not in flight", c->rank, req);
        return CL_ERR_INVALID;
    }
    *done = W->q[slot].done;
    if (*done)
        return retire(r, pos, CL_OK);
    sleep_for(r, POLL_S); /* polling costs time, so that a test loop lets time pass */
    return CL_OK;
}

/* --- rendezvous: barrier, split, agree ---------------------------------------------------- */

/* Returns 1 for the last rank to arrive (which then releases the others). */
static int arrive(sim_rank *r, sim_group *g)
{
    if (++g->arrived < g->size) {
        r->at = g;
        yield_as(r, R_BARRIER);
        return 0;
    }
    g->arrived = 0;
    return 1;
}

static void release(sim_group *g)
{
    for (int i = 0; i < g->size; i++) {
        sim_rank *o = &W->r[g->world[i]];
        if (o->state == R_BARRIER && o->at == g) {
            o->at = NULL;
            set_state(o, R_RUNNABLE);
        }
    }
}

static cl_result sim_barrier(cl_comm *c)
{
    sim_group *g = ((sim_comm *)c)->g;
    CL_CHECK(check_broken());
    if (arrive(me(c), g))
        release(g);
    return check_broken();
}

static cl_result sim_agree(cl_comm *c, cl_op op, int64_t *v, int n)
{
    sim_group *g = ((sim_comm *)c)->g;
    sim_rank *r = me(c);
    CL_CHECK(check_broken());
    for (int k = 0; k < n; k++) {
        int64_t x = v[k], *a = &g->acc[k];
        *a = g->arrived == 0 ? x
             : op == CL_SUM  ? *a + x
             : op == CL_MAX  ? (x > *a ? x : *a)
                             : (x < *a ? x : *a);
    }
    if (arrive(r, g)) {
        for (int i = 0; i < g->size; i++)
            memcpy(W->r[g->world[i]].agreed, g->acc, (size_t)n * sizeof *v);
        release(g);
    }
    CL_CHECK(check_broken());
    memcpy(v, r->agreed, (size_t)n * sizeof *v);
    return CL_OK;
}

static sim_group *group_new(int size)
{
    sim_group *g = calloc(1, sizeof *g);
    if (!g || !(g->world = malloc((size_t)size * sizeof *g->world))) {
        free(g);
        return NULL;
    }
    g->id = W->next_group++;
    g->size = size;
    g->refs = 0;
    return g;
}

static void group_unref(sim_group *g)
{
    if (g && --g->refs <= 0 && g->id != 0) {
        free(g->world);
        free(g->color);
        free(g->key);
        free(g);
    }
}

static sim_comm *comm_new(sim_group *g, int rank, int world_rank)
{
    sim_comm *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    cl_comm_init(&c->base, &sim_ops, rank, g->size, world_rank);
    c->g = g;
    g->refs++;
    c->base.world_of = malloc((size_t)g->size * sizeof(int));
    if (!c->base.world_of) {
        free(c);
        return NULL;
    }
    memcpy(c->base.world_of, g->world, (size_t)g->size * sizeof(int));
    return c;
}

/* The last rank of a split: form the new groups and hand each member its comm. */
static cl_result form_groups(sim_group *g)
{
    int n = g->size;
    int *order = malloc((size_t)n * sizeof *order);
    if (!order)
        return CL_ERR_NOMEM;
    for (int i = 0; i < n; i++) {
        order[i] = i;
        W->r[g->world[i]].split_out = NULL;
        W->r[g->world[i]].split_rc = CL_OK;
    }
    /* Sort members by (color, key, rank): insertion sort, groups are small. */
    for (int i = 1; i < n; i++) {
        int x = order[i], j = i - 1;
        while (j >= 0 && (g->color[order[j]] > g->color[x] ||
                          (g->color[order[j]] == g->color[x] &&
                           (g->key[order[j]] > g->key[x] ||
                            (g->key[order[j]] == g->key[x] && order[j] > x))))) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = x;
    }
    cl_result rc = CL_OK;
    for (int a = 0; a < n && rc == CL_OK;) {
        int b = a;
        while (b < n && g->color[order[b]] == g->color[order[a]])
            b++;
        if (g->color[order[a]] >= 0) {
            sim_group *ng = group_new(b - a);
            if (!ng)
                rc = CL_ERR_NOMEM;
            for (int k = a; rc == CL_OK && k < b; k++)
                ng->world[k - a] = g->world[order[k]];
            for (int k = a; rc == CL_OK && k < b; k++) {
                int w = g->world[order[k]];
                if (!(W->r[w].split_out = comm_new(ng, k - a, w)))
                    rc = CL_ERR_NOMEM;
            }
        }
        a = b;
    }
    free(order);
    return rc;
}

static cl_result sim_split(cl_comm *c, int color, int key, cl_comm **out)
{
    sim_group *g = ((sim_comm *)c)->g;
    sim_rank *r = me(c);
    CL_CHECK(check_broken());
    if (!g->color && (!(g->color = malloc((size_t)g->size * sizeof(int))) ||
                      !(g->key = malloc((size_t)g->size * sizeof(int)))))
        return CL_ERR_NOMEM;
    g->color[c->rank] = color < 0 ? -1 : color;
    g->key[c->rank] = key;
    if (arrive(r, g)) {
        cl_result rc = form_groups(g);
        for (int i = 0; i < g->size; i++)
            W->r[g->world[i]].split_rc = rc;
        release(g);
    }
    *out = r->split_out ? &r->split_out->base : NULL;
    r->split_out = NULL;
    return r->split_rc;
}

static cl_result sim_comm_free(cl_comm *c)
{
    sim_comm *s = (sim_comm *)c;
    if (s == &me(c)->world) {
        cl_set_error("cl_comm_free: the world communicator cannot be freed");
        return CL_ERR_INVALID;
    }
    group_unref(s->g);
    cl_comm_fini(c);
    free(s);
    return CL_OK;
}

/* --- buffers and local work --------------------------------------------------------------- */

static cl_result sim_mem_alloc(cl_comm *c, size_t bytes, void **out)
{
    uintptr_t h = cl_handles_take(bytes);
    cl_sim_data *d = malloc(sizeof *d);
    if (!h || !d || cl_sim_data_init(d, bytes) != CL_OK) {
        free(d);
        cl_set_error("rank %d: cannot allocate a simulated buffer of %zu bytes", c->rank, bytes);
        return CL_ERR_NOMEM;
    }
    cl_result rc = cl_buffers_add(h, bytes, c->world_rank, d);
    if (rc != CL_OK) {
        cl_sim_data_free(d);
        free(d);
        return rc;
    }
    *out = (void *)h;
    return CL_OK;
}

static cl_result sim_mem_free(cl_comm *c, void *p)
{
    (void)c;
    cl_buffer b;
    CL_CHECK(cl_buffers_remove((uintptr_t)p, &b));
    cl_sim_data_free(b.impl);
    free(b.impl);
    return CL_OK;
}

/* The simulated contents and offset of [p, p + bytes). */
static cl_sim_data *data_of(const void *p, size_t bytes, size_t *off, const char *what)
{
    const cl_buffer *b = cl_buffers_find(p, bytes, -1, what);
    if (!b)
        return NULL;
    *off = (uintptr_t)p - b->base;
    return b->impl;
}

static double pcie_s(size_t bytes)
{
    double bw = W->m.sys.pcie_gbps * 1e9;
    return bw > 0 ? (double)bytes / bw : 0;
}

static cl_result sim_upload(cl_comm *c, void *dst, const void *src, size_t bytes)
{
    size_t off;
    cl_sim_data *d = data_of(dst, bytes, &off, "cl_mem_upload");
    if (!d)
        return CL_ERR_INVALID;
    CL_CHECK(cl_sim_data_write(d, off, src, bytes));
    sleep_for(me(c), pcie_s(bytes));
    return CL_OK;
}

static cl_result sim_download(cl_comm *c, void *dst, const void *src, size_t bytes)
{
    size_t off;
    cl_sim_data *d = data_of(src, bytes, &off, "cl_mem_download");
    if (!d)
        return CL_ERR_INVALID;
    CL_CHECK(cl_sim_data_read(d, off, dst, bytes));
    sleep_for(me(c), pcie_s(bytes));
    return CL_OK;
}

/* Local work of `traffic` bytes of GPU memory traffic. */
static void charge(sim_rank *r, double traffic)
{
    double bw = W->m.sys.hbm_gbps * 1e9;
    if (bw > 0)
        sleep_for(r, traffic / bw);
}

static cl_result sim_reduce_local(cl_comm *c, void *inout, const void *in, size_t count, cl_dtype t,
                                  cl_op op)
{
    size_t es = cl_dtype_size(t), io, ii;
    cl_sim_data *a = data_of(inout, count * es, &io, "cl_reduce_local");
    cl_sim_data *b = a ? data_of(in, count * es, &ii, "cl_reduce_local") : NULL;
    if (!b)
        return CL_ERR_INVALID;
    CL_CHECK(cl_sim_data_reduce(a, io, b, ii, count, t, op));
    charge(me(c), 3.0 * (double)count * (double)es);
    return CL_OK;
}

static cl_result sim_copy_local(cl_comm *c, void *dst, const void *src, size_t bytes)
{
    size_t od, os;
    cl_sim_data *a = data_of(dst, bytes, &od, "cl_copy_local");
    cl_sim_data *b = a ? data_of(src, bytes, &os, "cl_copy_local") : NULL;
    if (!b)
        return CL_ERR_INVALID;
    CL_CHECK(cl_sim_data_copy(a, od, b, os, bytes));
    charge(me(c), 2.0 * (double)bytes);
    return CL_OK;
}

static double sim_time(cl_comm *c)
{
    (void)c;
    return W ? W->e.now : 0.0;
}

/* --- the harness's data and extras ------------------------------------------------------- */

cl_result cl_sim_fill(cl_comm *c, void *p, size_t count, int t, cl_op op, uint64_t seed, int owner,
                      int64_t first)
{
    (void)c;
    size_t off, es = t < 0 ? 1 : cl_dtype_size((cl_dtype)t);
    cl_sim_data *d = data_of(p, count * es, &off, "fill");
    if (!d)
        return CL_ERR_INVALID;
    if (t < 0)
        return cl_sim_data_fill_raw(d, off, count, seed, owner, first);
    return cl_sim_data_fill(d, off, count, (cl_dtype)t, op, seed, owner, first);
}

cl_result cl_sim_poison(cl_comm *c, void *p, size_t bytes)
{
    (void)c;
    size_t off;
    cl_sim_data *d = data_of(p, bytes, &off, "poison");
    return d ? cl_sim_data_unset(d, off, bytes) : CL_ERR_INVALID;
}

cl_result cl_sim_wrong(cl_comm *c, const void *p, size_t count, int t, cl_op op, uint64_t seed,
                       int lo, int hi, int64_t first, size_t *wrong)
{
    (void)c;
    size_t off, es = t < 0 ? 1 : cl_dtype_size((cl_dtype)t);
    cl_sim_data *d = data_of(p, count * es, &off, "check");
    if (!d)
        return CL_ERR_INVALID;
    return cl_sim_data_wrong(d, off, count, t, op, seed, lo, hi, first, wrong);
}

cl_result cl_sim_touched(cl_comm *c, const void *p, size_t bytes, size_t *n)
{
    (void)c;
    size_t off;
    cl_sim_data *d = data_of(p, bytes, &off, "check");
    return d ? cl_sim_data_touched(d, off, bytes, n) : CL_ERR_INVALID;
}

cl_result cl_sim_compute(cl_comm *c, double seconds)
{
    sleep_for(me(c), seconds);
    return CL_OK;
}

cl_result cl_sim_wait_external(cl_comm *c)
{
    sim_rank *r = me(c);
    if (W->external_rc == CL_OK)
        yield_as(r, R_EXTERNAL);
    return W->external_rc;
}

void cl_sim_wake(int world_rank)
{
    if (W && world_rank >= 0 && world_rank < W->n && W->r[world_rank].state == R_EXTERNAL)
        set_state(&W->r[world_rank], R_RUNNABLE);
}

/* --- scheduling ------------------------------------------------------------------------- */

static void rank_main(void)
{
    sim_rank *r = &W->r[W->current];
    cl_clear_error();
    r->rc = W->body(&r->world.base, W->arg);
    if (r->rc != CL_OK)
        snprintf(r->err, sizeof r->err, "%s", cl_last_error());
    set_state(r, R_DONE);
    to_sched(r); /* never resumed */
}

/* Nothing can run and nothing is in flight: fail every waiting rank, saying what it waits for. */
static void break_deadlock(void)
{
    char list[240] = "";
    size_t used = 0;
    for (int i = 0; i < W->n && used + 40 < sizeof list; i++) {
        sim_rank *r = &W->r[i];
        if (r->state != R_BLOCKED && r->state != R_BARRIER)
            continue;
        int slot = -1;
        for (int k = 0; k < r->nlive; k++)
            if (W->q[r->live[k]].waited && !W->q[r->live[k]].done)
                slot = r->live[k];
        if (r->state == R_BARRIER)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%d in a barrier",
                                     used ? ", " : "", i);
        else if (slot >= 0)
            used += (size_t)snprintf(
                list + used, sizeof list - used, "%s%d %s %d", used ? ", " : "", i,
                W->q[slot].kind == OP_SEND ? "sends to" : "receives from", W->q[slot].peer);
    }
    char why[320];
    snprintf(why, sizeof why,
             "deadlock at t=%.3f us: every rank waits and no transfer can "
             "start (rank %s)",
             W->e.now / US, list);
    if (!W->broken)
        W->broken = strdup(why);
    for (int i = 0; i < W->n; i++) {
        sim_rank *r = &W->r[i];
        for (int k = 0; k < r->nlive; k++)
            if (!W->q[r->live[k]].done)
                finish(r->live[k], CL_ERR_BACKEND, why);
        if (r->state == R_BARRIER) {
            r->at->arrived = 0;
            set_state(r, R_RUNNABLE);
            r->at = NULL;
        }
    }
    /* Unmatched posts leave the match queues (they are finished now). */
    for (int i = 0; i < W->n; i++)
        W->r[i].in_head = W->r[i].in_tail = W->r[i].rq_head = W->r[i].rq_tail = -1;
}

/* The lowest runnable rank >= from, or -1. */
static int next_runnable(int from)
{
    int words = (W->n + 63) / 64;
    for (int wi = from / 64; wi < words; wi++) {
        uint64_t bits = W->runnable[wi];
        if (wi == from / 64 && from % 64)
            bits &= ~(((uint64_t)1 << (from % 64)) - 1);
        if (bits)
            return wi * 64 + __builtin_ctzll(bits);
    }
    return -1;
}

static cl_result schedule(void)
{
    enum { BATCH = 4096 };
    static int done[BATCH];
    for (;;) {
        /* run the runnable ranks in rank order, sweeping again while any ran */
        for (int ran = 1; ran;) {
            ran = 0;
            for (int i = next_runnable(0); i >= 0; i = next_runnable(i + 1))
                while (W->r[i].state == R_RUNNABLE) {
                    W->current = i;
                    to_rank(&W->r[i]);
                    ran = 1;
                }
        }
        if (!W->alive)
            return CL_OK;
        if (W->external) {
            cl_result rc = idle_hook ? idle_hook() : CL_ERR_INVALID;
            if (rc != CL_OK) {
                W->external_rc = rc;
                for (int i = 0; i < W->n; i++)
                    if (W->r[i].state == R_EXTERNAL)
                        set_state(&W->r[i], R_RUNNABLE);
            }
            continue;
        }
        double wake = W->nsleep ? W->sleep[0].wake : INFINITY;
        int k = cl_sim_engine_step(&W->e, wake, done, BATCH);
        if (k < 0) {
            break_deadlock();
            continue;
        }
        if (k == 0)
            while (W->nsleep && W->sleep[0].wake <= W->e.now) {
                sleeper z = sleep_pop();
                if (W->r[z.rank].state == R_SLEEPING)
                    set_state(&W->r[z.rank], R_RUNNABLE);
            }
        for (int j = 0; j < k; j++)
            deliver((int)W->e.f[done[j]].tag);
        if (k > 0 && W->e.nlive == 0)
            cl_sim_engine_clear(&W->e); /* quiet: recycle the flow table, keep the time */
    }
}

static void release_data(const cl_buffer *b)
{
    cl_sim_data_free(b->impl);
    free(b->impl);
}

cl_result cl_sim_launch(const cl_launch_opts *o, cl_rank_body body, void *arg)
{
    if (W) {
        cl_set_error("sim: cl_launch called from inside a simulated rank");
        return CL_ERR_INVALID;
    }
    const char *system = o->system ? o->system : "dgx-a100";
    int n = o->nranks;
    if (n < 1 || n > 65536) {
        cl_set_error("sim: the number of ranks must be 1..65536, not %d", n);
        return CL_ERR_INVALID;
    }
    sim_world *w = calloc(1, sizeof *w);
    if (!w)
        return CL_ERR_NOMEM;
    w->free_q = -1;
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
    size_t per = ((size_t)4 << 30) / (size_t)n;
    w->stack_bytes = (per > ((size_t)1 << 20) ? (size_t)1 << 20
                      : per < (128 << 10)     ? 128 << 10
                                              : per) &
                     ~(size_t)4095;
    sim_group *world = NULL;
    if (rc == CL_OK &&
        (!(w->r = calloc((size_t)n, sizeof *w->r)) || !(world = calloc(1, sizeof *world)) ||
         !(world->world = malloc((size_t)n * sizeof(int)))))
        rc = CL_ERR_NOMEM;
    if (rc == CL_OK && !(w->runnable = calloc((size_t)(n + 63) / 64, sizeof *w->runnable)))
        rc = CL_ERR_NOMEM;
    w->alive = n;
    W = w;
    if (rc == CL_OK) {
        world->id = w->next_group++;
        world->size = n;
        for (int i = 0; i < n; i++)
            world->world[i] = i;
    }
    for (int i = 0; rc == CL_OK && i < n; i++) {
        sim_rank *r = &w->r[i];
        cl_comm_init(&r->world.base, &sim_ops, i, n, i);
        r->world.g = world;
        r->in_head = r->in_tail = r->rq_head = r->rq_tail = -1;
        rc = cl_coro_start(&r->coro, w->stack_bytes, rank_main);
        if (rc != CL_OK)
            break;
        r->state = R_BLOCKED;
        set_state(r, R_RUNNABLE);
    }
    if (rc == CL_OK)
        rc = schedule();
    char reason[400] = "";
    if (rc != CL_OK)
        snprintf(reason, sizeof reason, "%s", cl_last_error());
    for (int i = 0; w->r && i < n; i++)
        if (w->r[i].rc != CL_OK) { /* the first rank's own failure explains the rest */
            rc = w->r[i].rc;
            snprintf(reason, sizeof reason, "rank %d: %s", i, w->r[i].err);
            break;
        }
    cl_buffers_release_all(-1, release_data); /* what the ranks did not free */
    for (int i = 0; w->r && i < n; i++) {
        cl_coro_free(&w->r[i].coro);
        free(w->r[i].live);
        cl_comm_fini(&w->r[i].world.base);
    }
    if (world) {
        free(world->world);
        free(world->color);
        free(world->key);
        free(world);
    }
    for (int i = 0; i < w->nq; i++)
        free(w->q[i].why);
    free(w->r);
    free(w->runnable);
    free(w->sleep);
    free(w->q);
    free(w->broken);
    cl_sim_engine_free(&w->e);
    cl_sim_machine_free(&w->m);
    free(w);
    W = NULL;
    if (rc != CL_OK)
        cl_set_error("%s", reason);
    return rc;
}

static const cl_backend_ops sim_ops = {
    .name = "sim",
    .isend = sim_isend,
    .irecv = sim_irecv,
    .wait = sim_wait,
    .test = sim_test,
    .barrier = sim_barrier,
    .split = sim_split,
    .comm_free = sim_comm_free,
    .agree = sim_agree,
    .mem_alloc = sim_mem_alloc,
    .mem_free = sim_mem_free,
    .mem_upload = sim_upload,
    .mem_download = sim_download,
    .reduce_local = sim_reduce_local,
    .copy_local = sim_copy_local,
    .time = sim_time,
};
