/* hca.c: the emulated HCA, its ports and the fabric between them (see hca.h). */
#define _GNU_SOURCE
#include "hca.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Values chosen to resemble a ConnectX-6 port (200 Gb/s, sub-microsecond latency) on one
 * switch: an HDR InfiniBand switch (about 130 ns port to port) or a 200 GbE switch.
 * They are a model, stated in the handout; nothing here was measured. The two links differ
 * only in a packet's headers and the time through cables and switch; the rest is the NIC's. */
#define CONNECTX6_200G                                                                             \
    .wire_Bps = 25e9, .fetch_s = 0.15e-6, .dma_s = 0.20e-6, .msg_gap_s = 0.03e-6, .rx_s = 0.10e-6, \
    .cqe_s = 0.05e-6, .post_s = 0.10e-6, .post_extra_s = 0.02e-6, .recv_s = 0.05e-6,               \
    .recv_extra_s = 0.01e-6, .poll_s = 0.05e-6, .poll_cqe_s = 0.01e-6
const hca_model hca_model_ib = {.name = "HDR InfiniBand 4X (200 Gb/s), one switch",
                                .hdr_bytes = 30,
                                .wire_s = 0.25e-6,
                                CONNECTX6_200G};
const hca_model hca_model_roce = {.name = "200 GbE RoCE v2, one routed switch",
                                  .hdr_bytes = 82,
                                  .wire_s = 0.45e-6,
                                  CONNECTX6_200G};

#define NODES       4
#define NCTX        16
#define NPD         32
#define NMR         128
#define NCQ         16
#define NQP         16
#define NGID        4
#define GID_TBL     16
#define MAX_QP_WR   1024
#define MAX_CQE     2047
#define CQ_RING     4096
#define MAX_RD_ATOM 16
#define PSN_MASK    0xffffffu

enum { W_QUEUED, W_WAIT, W_DONE }; /* a send WQE */
enum { WAIT_NONE, WAIT_READY, WAIT_RNR, WAIT_FOREVER };

typedef struct swqe {
    emu_send_wr wr;
    int signaled, state, wait_kind;
    double post_time;  /* doorbell, virtual */
    double wait_model; /* WAIT_*: the virtual time it stalled */
    double wait_real;  /* and the real time */
    double cqe_time;
} swqe;

typedef struct rwqe {
    emu_recv_wr wr;
    double post_time;
} rwqe;

typedef struct cqe {
    emu_wc wc;
    double time;
    int qp;        /* the QP's index */
    long long seq; /* send completions: the WQE's sequence number (-1: receive) */
} cqe;

typedef struct obj {
    int live, node, ctx, gen;
} obj;

typedef struct ctx_t {
    obj o;
} ctx_t;

typedef struct pd_t {
    obj o;
} pd_t;

typedef struct mr_t {
    obj o;
    int pd, access;
    uint64_t addr, len;
    uint32_t key;
} mr_t;

typedef struct cq_t {
    obj o;
    int size, head, count, overrun, users;
    cqe ring[CQ_RING];
} cq_t;

typedef struct qp_t {
    obj o;
    int pd, scq, rcq, sig_all;
    uint32_t qpn;
    int state;
    emu_qp_attr a; /* the attributes set so far */
    uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge, max_inline;
    double rtr_time; /* virtual time it reached RTR */
    double nic_free; /* the next WQE of this QP may start at */
    double last_cqe; /* in-order completions */
    long long sq_posted, sq_retired, sq_done;
    swqe sq[MAX_QP_WR]; /* ring by sequence number */
    int rq_head, rq_count;
    rwqe rq[MAX_QP_WR];
} qp_t;

typedef struct node_t {
    int used;
    double clock, tx_free;
    uintptr_t mem_base;
    size_t mem_bytes;
    hca_counters c;
    hca_objects ob;
} node_t;

struct hca_fabric {
    pthread_mutex_t lock;
    int link, nodes, nodata;
    node_t node[NODES]; /* no pointers: every harness maps the fabric elsewhere */
    ctx_t ctx[NCTX];
    pd_t pd[NPD];
    mr_t mr[NMR];
    cq_t cq[NCQ];
    qp_t qp[NQP];
    int gen;
};

size_t hca_fabric_bytes(void) { return (sizeof(hca_fabric) + 63) & ~(size_t)63; }

static double real_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void counters_clear(hca_counters *c)
{
    memset(c, 0, sizeof *c);
    c->min_len = -1;
}

hca_fabric *hca_fabric_init(void *mem, int link, int nodes, int shared, int nodata)
{
    hca_fabric *f = mem;
    memset(f, 0, sizeof *f);
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    if (shared) {
        pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
        pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
    }
    pthread_mutex_init(&f->lock, &ma);
    pthread_mutexattr_destroy(&ma);
    f->link = link;
    f->nodes = nodes > NODES ? NODES : nodes;
    f->nodata = nodata;
    for (int n = 0; n < NODES; n++)
        counters_clear(&f->node[n].c);
    return f;
}

void hca_node_memory(hca_fabric *f, int n, uintptr_t base, size_t bytes)
{
    f->node[n].mem_base = base;
    f->node[n].mem_bytes = bytes;
}

const hca_model *hca_fabric_model(hca_fabric *f)
{
    return f->link == HCA_LINK_ROCE ? &hca_model_roce : &hca_model_ib;
}

static void lock(hca_fabric *f)
{
    if (pthread_mutex_lock(&f->lock) == EOWNERDEAD)
        pthread_mutex_consistent(&f->lock); /* the other harness died: carry on */
}
static void unlock(hca_fabric *f) { pthread_mutex_unlock(&f->lock); }

/* --- ports and addresses ------------------------------------------------------------ */

static uint64_t node_guid(int n) { return 0x020000fffe000000ull | (uint64_t)(0x10 + n); }

/* GID table: IB: the port GID (subnet prefix fe80::, the port GUID). RoCE, as show_gids
 * lists a ConnectX port: link-local v1 and v2, then the IPv4 address 192.168.<n+1>.11 as
 * v1 and v2. Returns the type, or -1 for an empty entry. */
static int gid_of(const hca_fabric *f, int n, int index, emu_gid *g)
{
    memset(g, 0, sizeof *g);
    uint64_t guid = node_guid(n);
    if (f->link == HCA_LINK_IB) {
        if (index != 0)
            return -1;
        g->raw[0] = 0xfe, g->raw[1] = 0x80;
        for (int i = 0; i < 8; i++)
            g->raw[8 + i] = (uint8_t)(guid >> (56 - 8 * i));
        return IBV_GID_TYPE_IB;
    }
    if (index < 0 || index >= NGID)
        return -1;
    if (index < 2) {
        g->raw[0] = 0xfe, g->raw[1] = 0x80;
        for (int i = 0; i < 8; i++)
            g->raw[8 + i] = (uint8_t)(guid >> (56 - 8 * i));
    } else {
        g->raw[10] = 0xff, g->raw[11] = 0xff;
        g->raw[12] = 192, g->raw[13] = 168, g->raw[14] = (uint8_t)(n + 1), g->raw[15] = 11;
    }
    return index % 2 ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_ROCE_V1;
}

static int is_ipv4_mapped(const emu_gid *g)
{
    static const uint8_t pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return memcmp(g->raw, pre, 12) == 0;
}

static int lid_of(const hca_fabric *f, int n) { return f->link == HCA_LINK_IB ? n + 1 : 0; }
static int active_mtu(const hca_fabric *f)
{
    return f->link == HCA_LINK_IB ? IBV_MTU_4096 : IBV_MTU_1024;
}
static int mtu_bytes(int mtu) { return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128 << mtu : 0; }

int hca_port_lid(hca_fabric *f, int n) { return lid_of(f, n); }
int hca_port_active_mtu(hca_fabric *f, int n)
{
    (void)n;
    return active_mtu(f);
}
int hca_port_gid(hca_fabric *f, int n, int index, emu_gid *g) { return gid_of(f, n, index, g); }
int hca_roce_v2_ipv4_index(hca_fabric *f, int n)
{
    emu_gid g;
    for (int i = 0; i < NGID; i++)
        if (gid_of(f, n, i, &g) == IBV_GID_TYPE_ROCE_V2 && is_ipv4_mapped(&g))
            return i;
    return -1;
}

/* --- messages and handles ----------------------------------------------------------- */

static void why(emu_msg *m, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void why(emu_msg *m, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->why, sizeof m->why, fmt, ap);
    va_end(ap);
    m->err = err;
}

static uint32_t handle_of(const obj *o, int idx)
{
    return ((uint32_t)o->gen << 10) | (uint32_t)(idx + 1);
}

/* The index of the live object of this node and context behind handle h, or -1. */
static int find(const obj *tab, size_t stride, int cap, uint32_t h, int node, int ctx)
{
    int idx = (int)(h & 1023) - 1;
    if (idx < 0 || idx >= cap)
        return -1;
    const obj *o = (const obj *)((const char *)tab + (size_t)idx * stride);
    if (!o->live || o->node != node || (ctx >= 0 && o->ctx != ctx) || (uint32_t)o->gen != h >> 10)
        return -1;
    return idx;
}
#define FIND(f, field, h, node, ctx)                                                               \
    find(&(f)->field[0].o, sizeof(f)->field[0], (int)(sizeof(f)->field / sizeof(f)->field[0]), h,  \
         node, ctx)

/* i, the index FIND gave for the object a verb names, or -1 with the answer EINVAL. */
static int named(emu_msg *m, int i, const char *verb, const char *what)
{
    if (i < 0)
        why(m, EINVAL, "%s: not %s of this context", verb, what);
    return i;
}

static int take(obj *tab, size_t stride, int cap, hca_fabric *f, int node, int ctx)
{
    for (int i = 0; i < cap; i++) {
        obj *o = (obj *)((char *)tab + (size_t)i * stride);
        if (!o->live) {
            o->live = 1, o->node = node, o->ctx = ctx, o->gen = (++f->gen) & 0x3fffff;
            if (!o->gen)
                o->gen = f->gen = 1;
            f->node[node].ob.created++;
            return i;
        }
    }
    return -1;
}
#define TAKE(f, field, node, ctx)                                                                  \
    take(&(f)->field[0].o, sizeof(f)->field[0], (int)(sizeof(f)->field / sizeof(f)->field[0]), f,  \
         node, ctx)

/* i, the free slot TAKE gave for a verb's new object, or -1 with the answer ENOMEM: out of
 * the cap objects of its kind. */
static int taken(emu_msg *m, int i, const char *verb, const char *kind, int cap)
{
    if (i < 0)
        why(m, ENOMEM, "%s: out of %s (%d)", verb, kind, cap);
    return i;
}

static uint32_t mr_key(int node, int idx, int gen)
{
    return ((uint32_t)(node + 1) << 20) | ((uint32_t)idx << 8) | ((uint32_t)gen & 0xff);
}

/* The MR of node behind key, or NULL. */
static mr_t *mr_by_key(hca_fabric *f, int node, uint32_t key)
{
    int idx = (int)((key >> 8) & 0xfff);
    if ((int)(key >> 20) != node + 1 || idx >= NMR)
        return NULL;
    mr_t *r = &f->mr[idx];
    if (!r->o.live || r->o.node != node || r->key != key)
        return NULL;
    return r;
}

static qp_t *qp_by_num(hca_fabric *f, int node, uint32_t qpn)
{
    for (int i = 0; i < NQP; i++)
        if (f->qp[i].o.live && f->qp[i].o.node == node && f->qp[i].qpn == qpn)
            return &f->qp[i];
    return NULL;
}

/* --- completions -------------------------------------------------------------------- */

static void note_completion(hca_fabric *f, int node, double t)
{
    if (t > f->node[node].c.last_completion)
        f->node[node].c.last_completion = t;
}

/* Add a completion to cq, keeping the ring ordered by time (stable for equal times). */
static void push_cqe(hca_fabric *f, cq_t *cq, const emu_wc *wc, double t, int qp, long long seq)
{
    note_completion(f, cq->o.node, t);
    if (cq->count == CQ_RING) { /* far beyond any CQ's size: it has overrun already */
        cq->overrun = 1;
        return;
    }
    int pos = cq->count;
    while (pos > 0 && cq->ring[(cq->head + pos - 1) % CQ_RING].time > t) {
        cq->ring[(cq->head + pos) % CQ_RING] = cq->ring[(cq->head + pos - 1) % CQ_RING];
        pos--;
    }
    cqe *e = &cq->ring[(cq->head + pos) % CQ_RING];
    e->wc = *wc, e->time = t, e->qp = qp, e->seq = seq;
    cq->count++;
}

static int wc_opcode(int wr_op)
{
    switch (wr_op) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM: return IBV_WC_RDMA_WRITE;
    case IBV_WR_RDMA_READ: return IBV_WC_RDMA_READ;
    default: return IBV_WC_SEND;
    }
}

static int is_write(int op) { return op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM; }
static int has_imm(int op)
{
    return op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM;
}

static uint32_t wr_length(const emu_send_wr *w)
{
    if (w->send_flags & IBV_SEND_INLINE)
        return w->inline_len;
    uint64_t n = 0;
    for (int i = 0; i < w->num_sge && i < EMU_MAX_SGE; i++)
        n += w->sg[i].length;
    return n > 0x7fffffffu ? 0x80000000u : (uint32_t)n;
}

static int qp_index(const hca_fabric *f, const qp_t *q) { return (int)(q - f->qp); }

/* The completion of send queue entry seq with status st at time t: in order after the
 * QP's earlier ones; a CQE unless it succeeded unsignaled (errors always complete). */
static void complete_send(hca_fabric *f, qp_t *q, long long seq, int st, double t)
{
    swqe *s = &q->sq[seq % MAX_QP_WR];
    if (t < q->last_cqe)
        t = q->last_cqe;
    q->last_cqe = t;
    s->state = W_DONE;
    s->cqe_time = t;
    if (seq + 1 > q->sq_done)
        q->sq_done = seq + 1;
    uint32_t len = wr_length(&s->wr);
    hca_counters *c = &f->node[q->o.node].c;
    if (st != IBV_WC_SUCCESS) {
        c->errors++;
        if (!c->first_error)
            c->first_error = st;
    } else if (is_write(s->wr.opcode)) {
        c->writes++, c->write_bytes += len;
        if (c->min_len < 0 || len < c->min_len)
            c->min_len = len;
        if (len > c->max_len)
            c->max_len = len;
    } else if (s->wr.opcode == IBV_WR_RDMA_READ) {
        c->reads++, c->read_bytes += len;
    } else {
        c->sends++, c->send_bytes += len;
    }
    if (st == IBV_WC_SUCCESS && !s->signaled) {
        note_completion(f, q->o.node, t);
        return;
    }
    emu_wc wc = {.wr_id = s->wr.wr_id,
                 .status = st,
                 .opcode = wc_opcode(s->wr.opcode),
                 .byte_len = st == IBV_WC_SUCCESS ? len : 0,
                 .qp_num = q->qpn,
                 .vendor_err = st == IBV_WC_SUCCESS || st == IBV_WC_WR_FLUSH_ERR ? 0 : 0x81};
    push_cqe(f, &f->cq[q->scq], &wc, t, qp_index(f, q), seq);
}

static void complete_recv(hca_fabric *f, qp_t *q, const rwqe *r, int st, int op, uint32_t len,
                          int imm, uint32_t imm_data, uint32_t src_qp, uint16_t slid, double t)
{
    hca_counters *c = &f->node[q->o.node].c;
    if (st == IBV_WC_SUCCESS)
        c->recvs++, c->recv_bytes += len;
    else {
        c->errors++;
        if (!c->first_error)
            c->first_error = st;
    }
    emu_wc wc = {.wr_id = r->wr.wr_id,
                 .status = st,
                 .opcode =
                     op == IBV_WR_RDMA_WRITE_WITH_IMM ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV,
                 .byte_len = st == IBV_WC_SUCCESS ? len : 0,
                 .qp_num = q->qpn,
                 .src_qp = src_qp,
                 .slid = slid,
                 .wc_flags = st == IBV_WC_SUCCESS && imm ? IBV_WC_WITH_IMM : 0,
                 .imm_data = imm ? imm_data : 0,
                 .vendor_err = st == IBV_WC_SUCCESS || st == IBV_WC_WR_FLUSH_ERR ? 0 : 0x81};
    push_cqe(f, &f->cq[q->rcq], &wc, t, qp_index(f, q), -1);
}

static rwqe *rq_pop(qp_t *q)
{
    rwqe *r = &q->rq[q->rq_head];
    q->rq_head = (q->rq_head + 1) % MAX_QP_WR;
    q->rq_count--;
    return r;
}

/* The QP enters the error state at time t: what is outstanding is flushed. */
static void qp_to_error(hca_fabric *f, qp_t *q, double t)
{
    if (q->state == IBV_QPS_ERR)
        return;
    q->state = IBV_QPS_ERR;
    for (long long s = q->sq_done; s < q->sq_posted; s++)
        complete_send(f, q, s, IBV_WC_WR_FLUSH_ERR, t);
    while (q->rq_count > 0) {
        rwqe *r = rq_pop(q);
        complete_recv(f, q, r, IBV_WC_WR_FLUSH_ERR, 0, 0, 0, 0, 0, 0, t);
    }
}

/* Entry seq fails with st at t: its completion, then the QP's error state. */
static void fail(hca_fabric *f, qp_t *q, long long seq, int st, double t)
{
    complete_send(f, q, seq, st, t);
    qp_to_error(f, q, t);
}

/* --- the fabric: where a packet goes ------------------------------------------------ */

/* The node that ah reaches from node src, or -1 (no such LID or GID, or a GID the routed
 * RoCE fabric does not carry between nodes). */
static int resolve(hca_fabric *f, int src, const emu_ah *ah)
{
    emu_gid g;
    if (f->link == HCA_LINK_IB) {
        for (int n = 0; n < f->nodes; n++) {
            if (lid_of(f, n) != ah->dlid)
                continue;
            if (ah->is_global && (gid_of(f, n, 0, &g) < 0 || memcmp(g.raw, ah->dgid.raw, 16)))
                return -1;
            return n;
        }
        return -1;
    }
    if (!ah->is_global)
        return -1;
    emu_gid sg;
    int st = gid_of(f, src, ah->sgid_index, &sg);
    if (st < 0)
        return -1;
    for (int n = 0; n < f->nodes; n++)
        for (int i = 0; i < NGID; i++) {
            if (gid_of(f, n, i, &g) != st || memcmp(g.raw, ah->dgid.raw, 16))
                continue;
            if (n == src) /* loopback stays on the port */
                return n;
            /* Between nodes only routed traffic: RoCE v2 (UDP/IP) between IPv4 addresses. */
            return st == IBV_GID_TYPE_ROCE_V2 && is_ipv4_mapped(&g) && is_ipv4_mapped(&sg) ? n : -1;
        }
    return -1;
}

enum { R_OK, R_NOT_READY, R_LOST, R_NO_ACK };

static int route(hca_fabric *f, qp_t *q, uint32_t len, qp_t **out)
{
    *out = NULL;
    int dn = resolve(f, q->o.node, &q->a.ah);
    if (dn < 0)
        return R_LOST;
    qp_t *d = qp_by_num(f, dn, q->a.dest_qp_num);
    if (!d)
        return R_LOST;
    *out = d;
    if (d->state == IBV_QPS_RESET || d->state == IBV_QPS_INIT)
        return R_NOT_READY;
    if (d->state != IBV_QPS_RTR && d->state != IBV_QPS_RTS)
        return R_LOST;
    if ((d->a.rq_psn & PSN_MASK) != (q->a.sq_psn & PSN_MASK))
        return R_LOST; /* out of sequence: NAKed and retried until the retries run out */
    int port_mtu = mtu_bytes(active_mtu(f));
    if (mtu_bytes(q->a.path_mtu) > port_mtu && len > (uint32_t)port_mtu)
        return R_LOST; /* packets larger than the ports carry are dropped */
    if (d->a.dest_qp_num != q->qpn || resolve(f, dn, &d->a.ah) != q->o.node)
        return R_NO_ACK; /* the responder's ACKs go elsewhere */
    return R_OK;
}

/* The transport timeout: 4.096 us * 2^timeout (0: wait for ever, returned as 0). */
static double ack_timeout(int timeout) { return timeout ? 4.096e-6 * ldexp(1.0, timeout) : 0; }

/* The RNR NAK timer of min_rnr_timer (IB specification, table 45). */
static double rnr_delay(int code)
{
    static const double ms[32] = {655.36, 0.01,  0.02,  0.03,   0.04,   0.06,   0.08,   0.12,
                                  0.16,   0.24,  0.32,  0.48,   0.64,   0.96,   1.28,   1.92,
                                  2.56,   3.84,  5.12,  7.68,   10.24,  15.36,  20.48,  30.72,
                                  40.96,  61.44, 81.92, 122.88, 163.84, 245.76, 327.68, 491.52};
    return ms[code & 31] * 1e-3;
}

/* How long, in real time, a transfer that waits for the other side may wait before it
 * fails: the retries' own time, but never less than a scheduling hiccup of the machine. */
static double real_budget(double model_s) { return model_s > 0.2 ? model_s : 0.2; }

/* --- moving bytes -------------------------------------------------------------------- */

typedef struct cursor {
    const emu_sge *sg;
    int n, i;
    uint32_t off;
} cursor;

/* Copy len bytes from the source (inline data or sges) to the destination sges. */
static void copy_sges(hca_fabric *f, const emu_send_wr *w, const emu_sge *dst, int ndst,
                      uint32_t len)
{
    if (f->nodata || len == 0)
        return;
    cursor d = {dst, ndst, 0, 0};
    uint32_t done = 0;
    int inl = (w->send_flags & IBV_SEND_INLINE) != 0;
    cursor s = {w->sg, w->num_sge, 0, 0};
    while (done < len) {
        while (d.i < d.n && d.off == d.sg[d.i].length)
            d.i++, d.off = 0;
        if (d.i == d.n)
            return;
        uint32_t k = d.sg[d.i].length - d.off;
        const uint8_t *from;
        if (inl) {
            from = w->inline_data + done;
        } else {
            while (s.i < s.n && s.off == s.sg[s.i].length)
                s.i++, s.off = 0;
            if (s.i == s.n)
                return;
            if (s.sg[s.i].length - s.off < k)
                k = s.sg[s.i].length - s.off;
            from = (const uint8_t *)(uintptr_t)(s.sg[s.i].addr + s.off);
            s.off += k;
        }
        if (len - done < k)
            k = len - done;
        memmove((void *)(uintptr_t)(d.sg[d.i].addr + d.off), from, k);
        d.off += k;
        done += k;
    }
}

/* Whether [addr, addr + len) lies in mr with the access bits want; len 0 always does. */
static int mr_allows(const mr_t *r, uint64_t addr, uint64_t len, int want)
{
    if ((r->access & want) != want)
        return 0;
    return len == 0 ||
           (addr >= r->addr && addr - r->addr <= r->len && len <= r->len - (addr - r->addr));
}

/* Whether the sges of node's QP q are all backed by its MRs with access want. */
static int sges_ok(hca_fabric *f, const qp_t *q, const emu_sge *sg, int n, int want)
{
    for (int i = 0; i < n; i++) {
        if (!sg[i].length)
            continue;
        const mr_t *r = mr_by_key(f, q->o.node, sg[i].lkey);
        if (!r || r->pd != q->pd || !mr_allows(r, sg[i].addr, sg[i].length, want))
            return 0;
    }
    return 1;
}

/* --- executing the send queue -------------------------------------------------------- */

/* Try to execute entry seq, the oldest not executed of q. Returns 1 when it is done (its
 * completion is decided), 0 when it waits for the other side. */
static int execute(hca_fabric *f, qp_t *q, long long seq)
{
    const hca_model *m = hca_fabric_model(f);
    swqe *s = &q->sq[seq % MAX_QP_WR];
    emu_send_wr *w = &s->wr;
    node_t *nd = &f->node[q->o.node];
    uint32_t len = wr_length(w);
    int inl = (w->send_flags & IBV_SEND_INLINE) != 0;
    int op = w->opcode;
    double T = ack_timeout(q->a.timeout), Trnr = 0;
    double t_ready = s->post_time + m->fetch_s + (inl || len == 0 ? 0 : m->dma_s);
    if (t_ready < q->nic_free)
        t_ready = q->nic_free;

    if (s->state == W_WAIT && s->wait_kind == WAIT_FOREVER)
        return 0;
    if (s->state != W_WAIT && !inl &&
        !sges_ok(f, q, w->sg, w->num_sge, op == IBV_WR_RDMA_READ ? IBV_ACCESS_LOCAL_WRITE : 0)) {
        fail(f, q, seq, IBV_WC_LOC_PROT_ERR, t_ready);
        return 1;
    }
    qp_t *d;
    int r = route(f, q, len, &d);
    if (r == R_NOT_READY) {
        if (s->state != W_WAIT) {
            s->state = W_WAIT, s->wait_kind = WAIT_READY;
            s->wait_model = t_ready, s->wait_real = real_now();
            return 0;
        }
        if (s->wait_kind == WAIT_READY && T > 0 &&
            real_now() - s->wait_real > real_budget((q->a.retry_cnt + 1) * T)) {
            fail(f, q, seq, IBV_WC_RETRY_EXC_ERR, s->wait_model + (q->a.retry_cnt + 1) * T);
            return 1;
        }
        if (s->wait_kind == WAIT_READY)
            return 0;
        r = R_LOST; /* it was waiting for a receive, and the responder went back to INIT */
    }
    if (r == R_LOST) {
        if (T == 0) {
            s->state = W_WAIT, s->wait_kind = WAIT_FOREVER;
            return 0;
        }
        double base = s->state == W_WAIT ? s->wait_model : t_ready;
        fail(f, q, seq, IBV_WC_RETRY_EXC_ERR, base + (q->a.retry_cnt + 1) * T);
        return 1;
    }
    if (s->state == W_WAIT && s->wait_kind == WAIT_READY) {
        /* Retried every T until the responder was ready. */
        double base = s->wait_model;
        if (d->rtr_time > base && T > 0)
            base += ceil((d->rtr_time - base) / T) * T;
        t_ready = base;
    }

    /* On the wire: this node's port, one packet per path MTU. */
    int mtu = mtu_bytes(q->a.path_mtu);
    double npk = len ? ceil((double)len / mtu) : 1;
    double wire_bytes = op == IBV_WR_RDMA_READ ? m->hdr_bytes : len + npk * m->hdr_bytes;
    double tx_start = t_ready > nd->tx_free ? t_ready : nd->tx_free;
    if (s->state == W_WAIT && s->wait_kind == WAIT_RNR)
        tx_start = s->wait_model; /* the first try's times; RNR delays are added below */
    double tx_end = tx_start + wire_bytes / m->wire_Bps;
    if (!(s->state == W_WAIT && s->wait_kind == WAIT_RNR)) {
        nd->tx_free = tx_end;
        q->nic_free = tx_start + m->msg_gap_s;
    }
    double arrive = tx_end + m->wire_s, placed = arrive + m->rx_s;
    double acked = placed + m->wire_s + m->cqe_s; /* an ACK or a NAK back at the requester */
    node_t *dnd = &f->node[d->o.node];

    if (is_write(op) || op == IBV_WR_RDMA_READ) {
        int want = is_write(op) ? IBV_ACCESS_REMOTE_WRITE : IBV_ACCESS_REMOTE_READ;
        const mr_t *rm = mr_by_key(f, d->o.node, w->rkey);
        /* A zero-length transfer touches no memory: its R_Key is not checked. */
        if (len && (!rm || rm->pd != d->pd || !(d->a.qp_access_flags & want) ||
                    !mr_allows(rm, w->remote_addr, len, want))) {
            fail(f, q, seq, IBV_WC_REM_ACCESS_ERR, acked);
            qp_to_error(f, d, placed);
            return 1;
        }
        if (op == IBV_WR_RDMA_READ && d->a.max_dest_rd_atomic == 0) {
            fail(f, q, seq, IBV_WC_REM_INV_REQ_ERR, acked);
            qp_to_error(f, d, placed);
            return 1;
        }
    }
    if (op == IBV_WR_RDMA_READ) {
        emu_sge src = {w->remote_addr, len, 0};
        emu_send_wr rd = {.num_sge = 1, .sg = {src}};
        copy_sges(f, &rd, w->sg, w->num_sge, len);
        double rs = placed > dnd->tx_free ? placed : dnd->tx_free;
        double re = rs + (len + npk * m->hdr_bytes) / m->wire_Bps;
        dnd->tx_free = re;
        complete_send(f, q, seq, IBV_WC_SUCCESS, re + m->wire_s + m->rx_s);
        return 1;
    }
    if (is_write(op))
        copy_sges(f, w, &(emu_sge){w->remote_addr, len, 0}, 1, len);
    if (!is_write(op) || has_imm(op)) {
        /* It consumes a receive of the responder. */
        Trnr = rnr_delay(d->a.min_rnr_timer);
        int infinite = q->a.rnr_retry == 7;
        if (d->rq_count == 0) {
            if (s->state != W_WAIT) {
                s->state = W_WAIT, s->wait_kind = WAIT_RNR;
                s->wait_model = tx_start, s->wait_real = real_now();
                return 0;
            }
            if (!infinite && real_now() - s->wait_real > real_budget((q->a.rnr_retry + 1) * Trnr)) {
                fail(f, q, seq, IBV_WC_RNR_RETRY_EXC_ERR, acked + (q->a.rnr_retry + 1) * Trnr);
                return 1;
            }
            return 0;
        }
        rwqe *rw = &d->rq[d->rq_head];
        if (rw->post_time > placed) { /* posted later than the SEND arrived: RNR NAKs */
            double k = ceil((rw->post_time - placed) / Trnr);
            if (!infinite && k > q->a.rnr_retry) {
                fail(f, q, seq, IBV_WC_RNR_RETRY_EXC_ERR, acked + (q->a.rnr_retry + 1) * Trnr);
                return 1;
            }
            placed += k * Trnr, acked += k * Trnr;
        }
        rwqe rv = *rq_pop(d);
        uint16_t slid = (uint16_t)lid_of(f, q->o.node);
        uint32_t room = 0;
        for (int i = 0; i < rv.wr.num_sge; i++)
            room += rv.wr.sg[i].length;
        if (!sges_ok(f, d, rv.wr.sg, rv.wr.num_sge, IBV_ACCESS_LOCAL_WRITE)) {
            complete_recv(f, d, &rv, IBV_WC_LOC_PROT_ERR, op, 0, 0, 0, q->qpn, slid, placed);
            qp_to_error(f, d, placed);
            fail(f, q, seq, IBV_WC_REM_OP_ERR, acked);
            return 1;
        }
        if (!is_write(op) && room < len) {
            complete_recv(f, d, &rv, IBV_WC_LOC_LEN_ERR, op, 0, 0, 0, q->qpn, slid, placed);
            qp_to_error(f, d, placed);
            fail(f, q, seq, IBV_WC_REM_INV_REQ_ERR, acked);
            return 1;
        }
        if (!is_write(op))
            copy_sges(f, w, rv.wr.sg, rv.wr.num_sge, len);
        complete_recv(f, d, &rv, IBV_WC_SUCCESS, op, is_write(op) ? len : len, has_imm(op),
                      w->imm_data, q->qpn, slid, placed);
    }
    if (r == R_NO_ACK) {
        if (T == 0) {
            s->state = W_WAIT, s->wait_kind = WAIT_FOREVER;
            return 0;
        }
        fail(f, q, seq, IBV_WC_RETRY_EXC_ERR, tx_start + (q->a.retry_cnt + 1) * T);
        return 1;
    }
    complete_send(f, q, seq, IBV_WC_SUCCESS, acked);
    return 1;
}

/* Execute q's send queue in order until an entry waits. */
static void progress(hca_fabric *f, qp_t *q)
{
    while (q->o.live && q->state == IBV_QPS_RTS && q->sq_done < q->sq_posted) {
        long long seq = q->sq_done;
        if (!execute(f, q, seq))
            return;
    }
}

static void progress_all(hca_fabric *f)
{
    for (int i = 0; i < NQP; i++)
        if (f->qp[i].o.live && f->qp[i].sq_done < f->qp[i].sq_posted)
            progress(f, &f->qp[i]);
}

/* --- the verbs ----------------------------------------------------------------------- */

static const char *const state_name[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};
static const char *qps(int s) { return s >= 0 && s <= IBV_QPS_ERR ? state_name[s] : "?"; }

static void op_devices(hca_fabric *f, int n, emu_msg *m)
{
    m->u.devices.n = 0;
    if (n >= f->nodes || !f->node[n].mem_bytes)
        return;
    emu_device_info *d = &m->u.devices.dev[0];
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "emu_0");
    uint64_t g = node_guid(n), be = 0;
    for (int i = 0; i < 8; i++)
        ((uint8_t *)&be)[i] = (uint8_t)(g >> (56 - 8 * i));
    d->node_guid = be;
    d->node_type = IBV_NODE_CA;
    d->transport = IBV_TRANSPORT_IB;
    m->u.devices.n = 1;
}

static void op_open(hca_fabric *f, int n, emu_msg *m)
{
    m->u.open.name[sizeof m->u.open.name - 1] = '\0';
    if (n >= f->nodes || !f->node[n].mem_bytes || strcmp(m->u.open.name, "emu_0") != 0) {
        why(m, ENODEV, "ibv_open_device: no device '%s' on this node", m->u.open.name);
        return;
    }
    int i = TAKE(f, ctx, n, -1);
    if (i < 0) {
        why(m, ENOMEM, "ibv_open_device: too many open contexts");
        return;
    }
    m->u.open.ctx = handle_of(&f->ctx[i].o, i);
    f->node[n].ob.ctx++;
}

static void op_query_device(hca_fabric *f, int n, emu_msg *m)
{
    emu_device_attr *a = &m->u.device_attr;
    memset(a, 0, sizeof *a);
    snprintf(a->fw_ver, sizeof a->fw_ver, "emulated");
    a->node_guid = a->sys_image_guid = node_guid(n);
    a->max_mr_size = f->node[n].mem_bytes;
    a->max_qp = NQP, a->max_qp_wr = MAX_QP_WR, a->max_sge = EMU_MAX_SGE, a->max_cq = NCQ;
    a->max_cqe = MAX_CQE, a->max_mr = NMR, a->max_pd = NPD;
    a->max_qp_rd_atom = a->max_qp_init_rd_atom = MAX_RD_ATOM;
    a->phys_port_cnt = 1;
}

static void op_query_port(hca_fabric *f, int n, emu_msg *m)
{
    if (m->u.port.port != 1) {
        why(m, EINVAL, "ibv_query_port: port %d does not exist (ports are numbered from 1)",
            m->u.port.port);
        return;
    }
    emu_port_attr *p = &m->u.port.attr;
    memset(p, 0, sizeof *p);
    p->state = IBV_PORT_ACTIVE, p->max_mtu = IBV_MTU_4096, p->active_mtu = active_mtu(f);
    p->gid_tbl_len = GID_TBL, p->pkey_tbl_len = 1;
    p->lid = (uint16_t)lid_of(f, n), p->sm_lid = f->link == HCA_LINK_IB ? 0xfe : 0;
    p->active_width = 2 /* 4X */, p->active_speed = 64 /* HDR, 50 Gb/s a lane */;
    p->phys_state = 5 /* LinkUp */;
    p->link_layer = f->link == HCA_LINK_IB ? IBV_LINK_LAYER_INFINIBAND : IBV_LINK_LAYER_ETHERNET;
}

static void op_query_gid(hca_fabric *f, int n, emu_msg *m)
{
    if (m->u.gid.port != 1 || m->u.gid.index < 0 || m->u.gid.index >= GID_TBL) {
        why(m, EINVAL, "ibv_query_gid: port %d index %d is outside the GID table (%d entries)",
            m->u.gid.port, m->u.gid.index, GID_TBL);
        return;
    }
    m->u.gid.gid_type = gid_of(f, n, m->u.gid.index, &m->u.gid.gid);
}

static void op_alloc_pd(hca_fabric *f, int n, int ctx, emu_msg *m)
{
    int i = taken(m, TAKE(f, pd, n, ctx), "ibv_alloc_pd", "PDs", NPD);
    if (i < 0)
        return;
    m->u.pd.pd = handle_of(&f->pd[i].o, i);
    f->node[n].ob.pd++;
}

static void destroyed(hca_fabric *f, int n, obj *o, int *live, int explicit)
{
    o->live = 0;
    (*live)--;
    if (explicit)
        f->node[n].ob.destroyed++;
    else
        f->node[n].ob.implicit++;
}

static void op_dealloc_pd(hca_fabric *f, int n, int ctx, emu_msg *m)
{
    int i = named(m, FIND(f, pd, m->u.handle, n, ctx), "ibv_dealloc_pd", "a PD");
    if (i < 0)
        return;
    int mrs = 0, qps_ = 0;
    for (int k = 0; k < NMR; k++)
        mrs += f->mr[k].o.live && f->mr[k].pd == i;
    for (int k = 0; k < NQP; k++)
        qps_ += f->qp[k].o.live && f->qp[k].pd == i;
    if (mrs || qps_) {
        why(m, EBUSY,
            "ibv_dealloc_pd: the PD still has %d MR(s) and %d QP(s); destroy them "
            "first",
            mrs, qps_);
        return;
    }
    destroyed(f, n, &f->pd[i].o, &f->node[n].ob.pd, 1);
}

static void op_reg_mr(hca_fabric *f, int n, int ctx, emu_msg *m)
{
    int p = FIND(f, pd, m->u.mr.pd, n, ctx);
    int acc = m->u.mr.access;
    const int known = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                      IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_RELAXED_ORDERING;
    node_t *nd = &f->node[n];
    uint64_t a = m->u.mr.addr, len = m->u.mr.length;
    if (p < 0) {
        why(m, EINVAL, "ibv_reg_mr: not a PD of this context");
    } else if (acc & ~known) {
        why(m, EINVAL, "ibv_reg_mr: access flags %#x include some the HCA does not know", acc);
    } else if ((acc & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
               !(acc & IBV_ACCESS_LOCAL_WRITE)) {
        why(m, EINVAL,
            "ibv_reg_mr: IBV_ACCESS_REMOTE_WRITE (or _ATOMIC) needs "
            "IBV_ACCESS_LOCAL_WRITE too");
    } else if (len == 0) {
        why(m, EINVAL, "ibv_reg_mr: length 0");
    } else if (a < nd->mem_base || a - nd->mem_base > nd->mem_bytes ||
               len > nd->mem_bytes - (a - nd->mem_base)) {
        why(m, EFAULT,
            "ibv_reg_mr: [%#llx, +%llu) is not memory this emulated node's HCA can "
            "reach: register the buffers the lab gives you",
            (unsigned long long)a, (unsigned long long)len);
    } else {
        int i = taken(m, TAKE(f, mr, n, ctx), "ibv_reg_mr", "MRs", NMR);
        if (i < 0)
            return;
        mr_t *r = &f->mr[i];
        r->pd = p, r->access = acc, r->addr = a, r->len = len;
        r->key = mr_key(n, i, r->o.gen);
        m->u.mr.mr = handle_of(&r->o, i);
        m->u.mr.lkey = m->u.mr.rkey = r->key;
        nd->ob.mr++;
    }
}

static void op_dereg_mr(hca_fabric *f, int n, int ctx, emu_msg *m)
{
    int i = named(m, FIND(f, mr, m->u.handle, n, ctx), "ibv_dereg_mr", "an MR");
    if (i < 0)
        return;
    f->mr[i].key = 0;
    destroyed(f, n, &f->mr[i].o, &f->node[n].ob.mr, 1);
}

static void op_create_cq(hca_fabric *f, int n, int ctx, emu_msg *m)
{
    int want = m->u.cq.cqe;
    if (want < 1 || want > MAX_CQE) {
        why(m, EINVAL, "ibv_create_cq: cqe %d outside 1..%d (ibv_query_device: max_cqe)", want,
            MAX_CQE);
        return;
    }
    int i = taken(m, TAKE(f, cq, n, ctx), "ibv_create_cq", "CQs", NCQ);
    if (i < 0)
        return;
    cq_t *c = &f->cq[i];
    int size = 1;
    while (size < want + 1)
        size *= 2;
    c->size = size - 1; /* as mlx5: a power of two, less one */
    c->head = c->count = c->overrun = c->users = 0;
    m->u.cq.cqe = c->size;
    m->u.cq.cq = handle_of(&c->o, i);
    f->node[n].ob.cq++;
}

static void op_destroy_cq(hca_fabric *f, int n, int ctx, emu_msg *m)
{
    int i = named(m, FIND(f, cq, m->u.handle, n, ctx), "ibv_destroy_cq", "a CQ");
    if (i < 0)
        return;
    if (f->cq[i].users) {
        why(m, EBUSY, "ibv_destroy_cq: %d QP(s) still use this CQ; destroy them first",
            f->cq[i].users);
        return;
    }
    destroyed(f, n, &f->cq[i].o, &f->node[n].ob.cq, 1);
}

static void op_create_qp(hca_fabric *f, int n, int ctx, emu_msg *m)
{
    typeof(m->u.create_qp) *c = &m->u.create_qp;
    int p = FIND(f, pd, c->pd, n, ctx);
    int sc = FIND(f, cq, c->send_cq, n, ctx), rc = FIND(f, cq, c->recv_cq, n, ctx);
    if (p < 0 || sc < 0 || rc < 0) {
        why(m, EINVAL, "ibv_create_qp: %s is not one of this context",
            p < 0    ? "the PD"
            : sc < 0 ? "send_cq"
                     : "recv_cq");
        return;
    }
    if (c->qp_type != IBV_QPT_RC) {
        why(m, EOPNOTSUPP, "ibv_create_qp: the emulated HCA offers RC QPs only (IBV_QPT_RC)");
        return;
    }
    if (c->max_send_wr > MAX_QP_WR || c->max_recv_wr > MAX_QP_WR || c->max_send_sge > EMU_MAX_SGE ||
        c->max_recv_sge > EMU_MAX_SGE || c->max_inline_data > EMU_MAX_INLINE) {
        why(m, EINVAL,
            "ibv_create_qp: cap beyond the device (max_qp_wr %d, max_sge %d, "
            "inline at most %d bytes)",
            MAX_QP_WR, EMU_MAX_SGE, EMU_MAX_INLINE);
        return;
    }
    int i = taken(m, TAKE(f, qp, n, ctx), "ibv_create_qp", "QPs", NQP);
    if (i < 0)
        return;
    qp_t *q = &f->qp[i];
    obj keep = q->o;
    memset(q, 0, offsetof(qp_t, sq));
    q->o = keep;
    q->pd = p, q->scq = sc, q->rcq = rc, q->sig_all = c->sq_sig_all != 0;
    q->qpn = ((uint32_t)(n + 1) << 16) | (uint32_t)(0x100 + i);
    q->state = IBV_QPS_RESET;
    q->max_send_wr = c->max_send_wr, q->max_recv_wr = c->max_recv_wr;
    q->max_send_sge = c->max_send_sge, q->max_recv_sge = c->max_recv_sge;
    q->max_inline = c->max_inline_data;
    q->rq_head = q->rq_count = 0;
    f->cq[sc].users++;
    f->cq[rc].users++;
    c->qp = handle_of(&q->o, i);
    c->qp_num = q->qpn;
    f->node[n].ob.qp++;
}

static void free_qp(hca_fabric *f, int n, int i, int explicit)
{
    qp_t *q = &f->qp[i];
    f->cq[q->scq].users--;
    f->cq[q->rcq].users--;
    q->sq_posted = q->sq_done = q->sq_retired = 0;
    q->rq_count = 0;
    destroyed(f, n, &q->o, &f->node[n].ob.qp, explicit);
}

static void op_destroy_qp(hca_fabric *f, int n, int ctx, emu_msg *m)
{
    int i = named(m, FIND(f, qp, m->u.handle, n, ctx), "ibv_destroy_qp", "a QP");
    if (i < 0)
        return;
    free_qp(f, n, i, 1);
}

/* ibv_modify_qp(3)'s tables for RC (and the kernel's ib_modify_qp_is_ok). */
static int transition(int cur, int next, int *req, int *opt)
{
    *req = *opt = 0;
    if (next == IBV_QPS_RESET || next == IBV_QPS_ERR)
        return 1;
    if (cur == IBV_QPS_RESET && next == IBV_QPS_INIT) {
        *req = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
        return 1;
    }
    if (cur == IBV_QPS_INIT && next == IBV_QPS_INIT) {
        *opt = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
        return 1;
    }
    if (cur == IBV_QPS_INIT && next == IBV_QPS_RTR) {
        *req = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
               IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
        *opt = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX;
        return 1;
    }
    if (cur == IBV_QPS_RTR && next == IBV_QPS_RTS) {
        *req = IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
               IBV_QP_TIMEOUT;
        *opt = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER |
               IBV_QP_PATH_MIG_STATE;
        return 1;
    }
    if (cur == IBV_QPS_RTS && next == IBV_QPS_RTS) {
        *opt = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE |
               IBV_QP_MIN_RNR_TIMER;
        return 1;
    }
    return 0;
}

static void mask_names(int mask, char *out, size_t n)
{
    static const struct {
        int bit;
        const char *name;
    } names[] = {{IBV_QP_STATE, "IBV_QP_STATE"},
                 {IBV_QP_CUR_STATE, "IBV_QP_CUR_STATE"},
                 {IBV_QP_EN_SQD_ASYNC_NOTIFY, "IBV_QP_EN_SQD_ASYNC_NOTIFY"},
                 {IBV_QP_ACCESS_FLAGS, "IBV_QP_ACCESS_FLAGS"},
                 {IBV_QP_PKEY_INDEX, "IBV_QP_PKEY_INDEX"},
                 {IBV_QP_PORT, "IBV_QP_PORT"},
                 {IBV_QP_QKEY, "IBV_QP_QKEY"},
                 {IBV_QP_AV, "IBV_QP_AV"},
                 {IBV_QP_PATH_MTU, "IBV_QP_PATH_MTU"},
                 {IBV_QP_TIMEOUT, "IBV_QP_TIMEOUT"},
                 {IBV_QP_RETRY_CNT, "IBV_QP_RETRY_CNT"},
                 {IBV_QP_RNR_RETRY, "IBV_QP_RNR_RETRY"},
                 {IBV_QP_RQ_PSN, "IBV_QP_RQ_PSN"},
                 {IBV_QP_MAX_QP_RD_ATOMIC, "IBV_QP_MAX_QP_RD_ATOMIC"},
                 {IBV_QP_ALT_PATH, "IBV_QP_ALT_PATH"},
                 {IBV_QP_MIN_RNR_TIMER, "IBV_QP_MIN_RNR_TIMER"},
                 {IBV_QP_SQ_PSN, "IBV_QP_SQ_PSN"},
                 {IBV_QP_MAX_DEST_RD_ATOMIC, "IBV_QP_MAX_DEST_RD_ATOMIC"},
                 {IBV_QP_PATH_MIG_STATE, "IBV_QP_PATH_MIG_STATE"},
                 {IBV_QP_CAP, "IBV_QP_CAP"},
                 {IBV_QP_DEST_QPN, "IBV_QP_DEST_QPN"},
                 {IBV_QP_RATE_LIMIT, "IBV_QP_RATE_LIMIT"}};
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if ((mask & names[i].bit) && used < n)
            used += (size_t)snprintf(out + used, n - used, "%s%s", used ? ", " : "", names[i].name);
    if (!out[0] && mask)
        snprintf(out, n, "%#x", mask);
}

static void op_modify_qp(hca_fabric *f, int n, int ctx, emu_msg *m)
{
    int i = named(m, FIND(f, qp, m->u.qp.qp, n, ctx), "ibv_modify_qp", "a QP");
    if (i < 0)
        return;
    qp_t *q = &f->qp[i];
    const emu_qp_attr *a = &m->u.qp.attr;
    int mask = m->u.qp.attr_mask, cur = q->state;
    int next = mask & IBV_QP_STATE ? a->qp_state : cur;
    int req, opt;
    char names[160];
    if ((mask & IBV_QP_CUR_STATE) && a->cur_qp_state != cur) {
        why(m, EINVAL, "ibv_modify_qp: cur_qp_state says %s but the QP is in %s",
            qps(a->cur_qp_state), qps(cur));
        return;
    }
    if (next < IBV_QPS_RESET || next > IBV_QPS_ERR || !transition(cur, next, &req, &opt)) {
        why(m, EINVAL,
            "ibv_modify_qp: no transition %s -> %s for an RC QP (RESET -> INIT -> "
            "RTR -> RTS, or to RESET or ERR)",
            qps(cur), qps(next));
        return;
    }
    int missing = req & ~mask, extra = mask & ~(req | opt | IBV_QP_STATE | IBV_QP_CUR_STATE);
    if (missing) {
        mask_names(missing, names, sizeof names);
        why(m, EINVAL, "ibv_modify_qp %s -> %s: attr_mask lacks %s", qps(cur), qps(next), names);
        return;
    }
    if (extra) {
        mask_names(extra, names, sizeof names);
        why(m, EINVAL, "ibv_modify_qp %s -> %s: %s not allowed in this transition", qps(cur),
            qps(next), names);
        return;
    }
    const char *bad = NULL;
    emu_gid g;
    if ((mask & IBV_QP_PORT) && a->port_num != 1)
        bad = "port_num must be 1 (the HCA's only port)";
    else if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index != 0)
        bad = "pkey_index must be 0 (the P_Key table has one entry)";
    else if ((mask & IBV_QP_ACCESS_FLAGS) &&
             (a->qp_access_flags & ~(uint32_t)(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                               IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)))
        bad = "qp_access_flags has bits other than IBV_ACCESS_{LOCAL_WRITE,REMOTE_*}";
    else if ((mask & IBV_QP_PATH_MTU) && (a->path_mtu < IBV_MTU_256 || a->path_mtu > IBV_MTU_4096))
        bad = "path_mtu must be an enum ibv_mtu (IBV_MTU_256 .. IBV_MTU_4096)";
    else if ((mask & IBV_QP_DEST_QPN) && a->dest_qp_num > PSN_MASK)
        bad = "dest_qp_num has more than 24 bits";
    else if ((mask & IBV_QP_RQ_PSN) && a->rq_psn > PSN_MASK)
        bad = "rq_psn has more than 24 bits";
    else if ((mask & IBV_QP_SQ_PSN) && a->sq_psn > PSN_MASK)
        bad = "sq_psn has more than 24 bits";
    else if ((mask & IBV_QP_AV) && a->ah.port_num != 1)
        bad = "ah_attr.port_num must be 1 (the HCA's only port)";
    else if ((mask & IBV_QP_AV) && f->link == HCA_LINK_ROCE && !a->ah.is_global)
        bad = "on RoCE a QP is addressed by GID: ah_attr.is_global = 1 and ah_attr.grh";
    else if ((mask & IBV_QP_AV) && a->ah.is_global && gid_of(f, n, a->ah.sgid_index, &g) < 0)
        bad = "ah_attr.grh.sgid_index is not a GID of this port (ibv_query_gid)";
    else if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > MAX_RD_ATOM)
        bad = "max_dest_rd_atomic above the device's max_qp_rd_atom";
    else if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > MAX_RD_ATOM)
        bad = "max_rd_atomic above the device's max_qp_init_rd_atom";
    else if ((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
        bad = "min_rnr_timer is a 5-bit code (0..31)";
    else if ((mask & IBV_QP_TIMEOUT) && a->timeout > 31)
        bad = "timeout is a 5-bit exponent (0..31)";
    else if ((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7)
        bad = "retry_cnt is 0..7";
    else if ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7)
        bad = "rnr_retry is 0..7 (7: retry for ever)";
    if (bad) {
        why(m, EINVAL, "ibv_modify_qp %s -> %s: %s", qps(cur), qps(next), bad);
        return;
    }
    emu_qp_attr *t = &q->a;
    if (next == IBV_QPS_RESET) {
        memset(t, 0, sizeof *t);
        q->sq_posted = q->sq_done = q->sq_retired = 0;
        q->rq_count = 0, q->rq_head = 0;
        q->state = IBV_QPS_RESET;
        return;
    }
    if (mask & IBV_QP_PORT)
        t->port_num = a->port_num;
    if (mask & IBV_QP_PKEY_INDEX)
        t->pkey_index = a->pkey_index;
    if (mask & IBV_QP_ACCESS_FLAGS)
        t->qp_access_flags = a->qp_access_flags;
    if (mask & IBV_QP_AV)
        t->ah = a->ah;
    if (mask & IBV_QP_PATH_MTU)
        t->path_mtu = a->path_mtu;
    if (mask & IBV_QP_DEST_QPN)
        t->dest_qp_num = a->dest_qp_num;
    if (mask & IBV_QP_RQ_PSN)
        t->rq_psn = a->rq_psn;
    if (mask & IBV_QP_SQ_PSN)
        t->sq_psn = a->sq_psn;
    if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
        t->max_dest_rd_atomic = a->max_dest_rd_atomic;
    if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
        t->max_rd_atomic = a->max_rd_atomic;
    if (mask & IBV_QP_MIN_RNR_TIMER)
        t->min_rnr_timer = a->min_rnr_timer;
    if (mask & IBV_QP_TIMEOUT)
        t->timeout = a->timeout;
    if (mask & IBV_QP_RETRY_CNT)
        t->retry_cnt = a->retry_cnt;
    if (mask & IBV_QP_RNR_RETRY)
        t->rnr_retry = a->rnr_retry;
    if (next == IBV_QPS_ERR) {
        qp_to_error(f, q, f->node[n].clock);
        return;
    }
    if (next == IBV_QPS_RTR && cur != IBV_QPS_RTR)
        q->rtr_time = f->node[n].clock;
    q->state = next;
    progress_all(f); /* a peer may have been waiting for this QP to be ready */
}

static void op_query_qp(hca_fabric *f, int n, int ctx, emu_msg *m)
{
    int i = named(m, FIND(f, qp, m->u.qp.qp, n, ctx), "ibv_query_qp", "a QP");
    if (i < 0)
        return;
    qp_t *q = &f->qp[i];
    m->u.qp.attr = q->a;
    m->u.qp.attr.qp_state = m->u.qp.attr.cur_qp_state = q->state;
    m->u.qp.attr.max_send_wr = q->max_send_wr, m->u.qp.attr.max_recv_wr = q->max_recv_wr;
    m->u.qp.attr.max_send_sge = q->max_send_sge, m->u.qp.attr.max_recv_sge = q->max_recv_sge;
    m->u.qp.attr.max_inline_data = q->max_inline;
}

/* The QP a post request names (u.post, the head of either list), its bad index 0; or NULL
 * with the answer EINVAL. */
static qp_t *posting_qp(hca_fabric *f, int n, int ctx, emu_msg *m, const char *verb)
{
    m->u.post.bad = 0;
    int i = named(m, FIND(f, qp, m->u.post.qp, n, ctx), verb, "a QP");
    return i < 0 ? NULL : &f->qp[i];
}

static void op_post_send(hca_fabric *f, int n, int ctx, emu_msg *m)
{
    typeof(m->u.send) *ps = &m->u.send;
    qp_t *q = posting_qp(f, n, ctx, m, "ibv_post_send");
    if (!q)
        return;
    node_t *nd = &f->node[n];
    if (q->state != IBV_QPS_RTS && q->state != IBV_QPS_ERR) {
        /* mlx5 refuses it this way: no send WQE fits before RTS */
        why(m, ENOMEM, "ibv_post_send: the QP is in %s; it sends only in RTS", qps(q->state));
        return;
    }
    int k = ps->n < 1 ? 1 : ps->n > EMU_MAX_WR ? EMU_MAX_WR : ps->n;
    nd->clock += hca_fabric_model(f)->post_s + hca_fabric_model(f)->post_extra_s * (k - 1);
    for (int j = 0; j < k; j++) {
        emu_send_wr *w = &ps->wr[j];
        int op = w->opcode;
        int inl = (w->send_flags & IBV_SEND_INLINE) != 0;
        ps->bad = j;
        if (op != IBV_WR_SEND && op != IBV_WR_SEND_WITH_IMM && op != IBV_WR_RDMA_WRITE &&
            op != IBV_WR_RDMA_WRITE_WITH_IMM && op != IBV_WR_RDMA_READ) {
            why(m, EINVAL,
                "ibv_post_send: opcode %d is not one the emulated HCA executes "
                "(SEND, RDMA_WRITE, RDMA_READ and their _WITH_IMM)",
                op);
            return;
        }
        if (w->num_sge < 0 || (uint32_t)w->num_sge > q->max_send_sge) {
            why(m, ENOMEM, "ibv_post_send: num_sge %d above the QP's max_send_sge %u", w->num_sge,
                q->max_send_sge);
            return;
        }
        if (inl && (op == IBV_WR_RDMA_READ || w->inline_len > q->max_inline)) {
            why(m, op == IBV_WR_RDMA_READ ? EINVAL : ENOMEM, "ibv_post_send: IBV_SEND_INLINE %s",
                op == IBV_WR_RDMA_READ ? "with RDMA READ" : "above the QP's max_inline_data");
            return;
        }
        if (q->sq_posted - q->sq_retired >= q->max_send_wr) {
            why(m, ENOMEM,
                "ibv_post_send: the send queue is full (%u outstanding, "
                "max_send_wr %u): poll completions first (a WR retires when its "
                "completion, or a later signaled one, is polled)",
                q->max_send_wr, q->max_send_wr);
            return;
        }
        long long seq = q->sq_posted++;
        swqe *s = &q->sq[seq % MAX_QP_WR];
        s->wr = *w;
        s->signaled = q->sig_all || (w->send_flags & IBV_SEND_SIGNALED);
        s->state = W_QUEUED;
        s->wait_kind = WAIT_NONE;
        s->post_time = nd->clock;
        if (inl)
            nd->c.inline_sends++;
        int out = (int)(q->sq_posted - q->sq_retired);
        if (out > nd->c.max_outstanding)
            nd->c.max_outstanding = out;
        if (q->state == IBV_QPS_ERR)
            complete_send(f, q, seq, IBV_WC_WR_FLUSH_ERR, nd->clock);
    }
    ps->bad = k;
    progress(f, q);
}

static void op_post_recv(hca_fabric *f, int n, int ctx, emu_msg *m)
{
    typeof(m->u.recv) *pr = &m->u.recv;
    qp_t *q = posting_qp(f, n, ctx, m, "ibv_post_recv");
    if (!q)
        return;
    node_t *nd = &f->node[n];
    if (q->state == IBV_QPS_RESET) {
        why(m, EINVAL, "ibv_post_recv: the QP is in RESET; receives are posted from INIT on");
        return;
    }
    int k = pr->n < 1 ? 1 : pr->n > EMU_MAX_WR ? EMU_MAX_WR : pr->n;
    nd->clock += hca_fabric_model(f)->recv_s + hca_fabric_model(f)->recv_extra_s * (k - 1);
    for (int j = 0; j < k; j++) {
        pr->bad = j;
        const emu_recv_wr *w = &pr->wr[j];
        if (w->num_sge < 0 || (uint32_t)w->num_sge > q->max_recv_sge) {
            why(m, EINVAL, "ibv_post_recv: num_sge %d above the QP's max_recv_sge %u", w->num_sge,
                q->max_recv_sge);
            return;
        }
        if ((uint32_t)q->rq_count >= q->max_recv_wr) {
            why(m, ENOMEM, "ibv_post_recv: the receive queue is full (max_recv_wr %u)",
                q->max_recv_wr);
            return;
        }
        rwqe *r = &q->rq[(q->rq_head + q->rq_count) % MAX_QP_WR];
        r->wr = *w;
        r->post_time = nd->clock;
        q->rq_count++;
        if (q->state == IBV_QPS_ERR)
            complete_recv(f, q, rq_pop(q), IBV_WC_WR_FLUSH_ERR, 0, 0, 0, 0, 0, 0, nd->clock);
    }
    pr->bad = k;
    progress_all(f); /* a SEND may have been waiting for this receive */
}

static void op_poll_cq(hca_fabric *f, int n, int ctx, emu_msg *m)
{
    typeof(m->u.poll) *pc = &m->u.poll;
    int i = FIND(f, cq, pc->cq, n, ctx);
    int want = pc->n;
    pc->n = 0;
    if (i < 0 || want < 0) {
        why(m, EINVAL,
            i < 0 ? "ibv_poll_cq: not a CQ of this context" : "ibv_poll_cq: num_entries < 0");
        return;
    }
    if (want > EMU_MAX_WC)
        want = EMU_MAX_WC;
    progress_all(f);
    cq_t *c = &f->cq[i];
    node_t *nd = &f->node[n];
    if (c->overrun) {
        pc->n = -1;
        why(m, EOVERFLOW,
            "ibv_poll_cq: the CQ overran (more completions were due than its "
            "%d entries): it is in error, IBV_EVENT_CQ_ERR",
            c->size);
        return;
    }
    if (c->count == 0)
        return; /* nothing in flight to this CQ: the poll costs no modelled time */
    double t = nd->clock;
    if (c->ring[c->head].time > t)
        t = c->ring[c->head].time; /* spinning until the next completion lands */
    int due = 0;
    while (due < c->count && c->ring[(c->head + due) % CQ_RING].time <= t)
        due++;
    if (due > c->size) {
        c->overrun = 1;
        f->node[n].c.overruns++;
        for (int k = 0; k < NQP; k++)
            if (f->qp[k].o.live && (f->qp[k].scq == i || f->qp[k].rcq == i))
                f->qp[k].state = IBV_QPS_ERR;
        pc->n = -1;
        why(m, EOVERFLOW,
            "ibv_poll_cq: CQ overrun: %d completions were due, the CQ holds %d "
            "(size it for every completion that can be outstanding); the CQ "
            "and its QPs are in error",
            due, c->size);
        return;
    }
    int k = due < want ? due : want;
    for (int j = 0; j < k; j++) {
        cqe *e = &c->ring[c->head];
        pc->wc[j] = e->wc;
        qp_t *q = &f->qp[e->qp];
        if (e->seq >= 0 && q->o.live && e->seq + 1 > q->sq_retired)
            q->sq_retired = e->seq + 1;
        c->head = (c->head + 1) % CQ_RING;
        c->count--;
    }
    pc->n = k;
    nd->clock = t + hca_fabric_model(f)->poll_s + hca_fabric_model(f)->poll_cqe_s * k;
}

/* o is alive and belongs to node n's context ctx. */
static int owned(const obj *o, int n, int ctx) { return o->live && o->node == n && o->ctx == ctx; }

static void op_close(hca_fabric *f, int n, int ctx)
{
    node_t *nd = &f->node[n];
    for (int i = 0; i < NQP; i++)
        if (owned(&f->qp[i].o, n, ctx))
            free_qp(f, n, i, 0);
    for (int i = 0; i < NCQ; i++)
        if (owned(&f->cq[i].o, n, ctx))
            destroyed(f, n, &f->cq[i].o, &nd->ob.cq, 0);
    for (int i = 0; i < NMR; i++)
        if (owned(&f->mr[i].o, n, ctx))
            destroyed(f, n, &f->mr[i].o, &nd->ob.mr, 0);
    for (int i = 0; i < NPD; i++)
        if (owned(&f->pd[i].o, n, ctx))
            destroyed(f, n, &f->pd[i].o, &nd->ob.pd, 0);
    destroyed(f, n, &f->ctx[ctx].o, &nd->ob.ctx, 1);
}

void hca_call(hca_fabric *f, int n, void *msg, size_t bytes)
{
    emu_msg *m = msg;
    size_t head = offsetof(emu_msg, u);
    if (bytes < head)
        return; /* nowhere to answer */
    m->why[0] = '\0';
    m->why[sizeof m->why - 1] = '\0';
    m->err = 0;
    int op = (int)m->op;
    int count = op == EMU_POST_SEND   ? m->u.send.n
                : op == EMU_POST_RECV ? m->u.recv.n
                : op == EMU_POLL_CQ   ? m->u.poll.n
                                      : 0;
    if (op < EMU_DEVICES || op >= EMU_OP_COUNT || n < 0 || n >= NODES ||
        bytes < emu_msg_bytes(op, count)) {
        why(m, EINVAL, "verbs request %d of %zu bytes is malformed", op, bytes);
        return;
    }
    lock(f);
    f->node[n].c.calls++;
    int ctx = -1;
    if (op != EMU_DEVICES && op != EMU_OPEN) {
        ctx = FIND(f, ctx, m->ctx, n, -1);
        if (ctx < 0) {
            why(m, EINVAL, "not an open device context of this node");
            unlock(f);
            return;
        }
    }
    switch (op) {
    case EMU_DEVICES: op_devices(f, n, m); break;
    case EMU_OPEN: op_open(f, n, m); break;
    case EMU_CLOSE: op_close(f, n, ctx); break;
    case EMU_QUERY_DEVICE: op_query_device(f, n, m); break;
    case EMU_QUERY_PORT: op_query_port(f, n, m); break;
    case EMU_QUERY_GID: op_query_gid(f, n, m); break;
    case EMU_ALLOC_PD: op_alloc_pd(f, n, ctx, m); break;
    case EMU_DEALLOC_PD: op_dealloc_pd(f, n, ctx, m); break;
    case EMU_REG_MR: op_reg_mr(f, n, ctx, m); break;
    case EMU_DEREG_MR: op_dereg_mr(f, n, ctx, m); break;
    case EMU_CREATE_CQ: op_create_cq(f, n, ctx, m); break;
    case EMU_DESTROY_CQ: op_destroy_cq(f, n, ctx, m); break;
    case EMU_CREATE_QP: op_create_qp(f, n, ctx, m); break;
    case EMU_MODIFY_QP: op_modify_qp(f, n, ctx, m); break;
    case EMU_QUERY_QP: op_query_qp(f, n, ctx, m); break;
    case EMU_DESTROY_QP: op_destroy_qp(f, n, ctx, m); break;
    case EMU_POST_SEND: op_post_send(f, n, ctx, m); break;
    case EMU_POST_RECV: op_post_recv(f, n, ctx, m); break;
    case EMU_POLL_CQ: op_poll_cq(f, n, ctx, m); break;
    }
    unlock(f);
}

/* --- what the harness reads --------------------------------------------------------- */

void hca_counters_get(hca_fabric *f, int n, hca_counters *out)
{
    lock(f);
    progress_all(f);
    *out = f->node[n].c;
    unlock(f);
}

void hca_counters_reset(hca_fabric *f, int n)
{
    lock(f);
    counters_clear(&f->node[n].c);
    unlock(f);
}

double hca_clock(hca_fabric *f, int n)
{
    lock(f);
    double t = f->node[n].clock;
    unlock(f);
    return t;
}

void hca_align_clocks(hca_fabric *f)
{
    lock(f);
    double t = 0;
    for (int n = 0; n < f->nodes; n++) {
        if (f->node[n].clock > t)
            t = f->node[n].clock;
        if (f->node[n].tx_free > t)
            t = f->node[n].tx_free;
    }
    for (int n = 0; n < f->nodes; n++)
        f->node[n].clock = t;
    unlock(f);
}

void hca_objects_get(hca_fabric *f, int n, hca_objects *out)
{
    lock(f);
    *out = f->node[n].ob;
    unlock(f);
}

int hca_qp_view_get(hca_fabric *f, int n, uint32_t qpn, hca_qp_view *out)
{
    memset(out, 0, sizeof *out);
    lock(f);
    int found = -1;
    for (int i = 0; i < NQP && found < 0; i++)
        if (f->qp[i].o.live && f->qp[i].o.node == n && (!qpn || f->qp[i].qpn == qpn))
            found = i;
    if (found >= 0) {
        qp_t *q = &f->qp[found];
        out->qpn = q->qpn;
        out->state = q->state;
        out->path_mtu = q->a.path_mtu;
        out->attr = q->a;
        out->attr.max_send_wr = q->max_send_wr, out->attr.max_recv_wr = q->max_recv_wr;
        out->attr.max_send_sge = q->max_send_sge, out->attr.max_recv_sge = q->max_recv_sge;
        out->attr.max_inline_data = q->max_inline;
        for (int i = 0; i < NMR; i++) {
            mr_t *r = &f->mr[i];
            if (r->o.live && r->o.node == n && r->pd == q->pd &&
                (r->access & IBV_ACCESS_REMOTE_WRITE) && r->len > out->mr_len) {
                out->mr_rkey = r->key, out->mr_addr = r->addr, out->mr_len = r->len;
                out->mr_access = r->access;
            }
        }
    }
    unlock(f);
    return found >= 0 ? 0 : -1;
}
