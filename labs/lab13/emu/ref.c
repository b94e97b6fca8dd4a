/* ref.c: the harness's own verbs loops on a private fabric (see ref.h). They speak to the
 * emulated HCA with the same requests as the provider library, one process playing both
 * nodes: in the model's time, interleaving them is exact. */
#define _GNU_SOURCE
#include "ref.h"

#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hca.h"

#define FAKE_BASE  ((uintptr_t)1 << 40) /* node memory that is never touched (no data) */
#define FAKE_BYTES ((size_t)1 << 30)

typedef struct side {
    int node;
    uint32_t ctx, pd, mr, scq, rcq, qp, qpn, key;
    uintptr_t base;
} side;

static hca_fabric *fabric;
static void *fabric_mem;

static int req(int node, emu_msg *m, int op, uint32_t ctx, int n)
{
    m->op = (uint32_t)op;
    m->ctx = ctx;
    hca_call(fabric, node, m, emu_msg_bytes(op, n));
    return m->err;
}

/* A fresh fabric with two nodes and, on each, a QP connected to the other's. */
static int connect_pair(int link, side s[2], int inline_bytes)
{
    if (!fabric_mem && !(fabric_mem = aligned_alloc(64, hca_fabric_bytes())))
        return -1;
    memset(fabric_mem, 0, hca_fabric_bytes());
    fabric = hca_fabric_init(fabric_mem, link, 2, 0, 1);
    static emu_msg m; /* large: not on the stack */
    for (int n = 0; n < 2; n++) {
        side *x = &s[n];
        memset(x, 0, sizeof *x);
        x->node = n;
        x->base = FAKE_BASE + (uintptr_t)n * FAKE_BYTES;
        hca_node_memory(fabric, n, x->base, FAKE_BYTES);
        memset(&m, 0, sizeof m);
        snprintf(m.u.open.name, sizeof m.u.open.name, "emu_0");
        if (req(n, &m, EMU_OPEN, 0, 0))
            return -1;
        x->ctx = m.u.open.ctx;
        if (req(n, &m, EMU_ALLOC_PD, x->ctx, 0))
            return -1;
        x->pd = m.u.pd.pd;
        memset(&m.u, 0, sizeof m.u.mr);
        m.u.mr.pd = x->pd, m.u.mr.addr = x->base, m.u.mr.length = FAKE_BYTES;
        m.u.mr.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
        if (req(n, &m, EMU_REG_MR, x->ctx, 0))
            return -1;
        x->mr = m.u.mr.mr, x->key = m.u.mr.lkey;
        uint32_t *cqs[2] = {&x->scq, &x->rcq};
        for (int k = 0; k < 2; k++) {
            m.u.cq.cqe = 1023;
            if (req(n, &m, EMU_CREATE_CQ, x->ctx, 0))
                return -1;
            *cqs[k] = m.u.cq.cq;
        }
        memset(&m.u, 0, sizeof m.u.create_qp);
        m.u.create_qp.pd = x->pd, m.u.create_qp.send_cq = x->scq, m.u.create_qp.recv_cq = x->rcq;
        m.u.create_qp.qp_type = IBV_QPT_RC;
        m.u.create_qp.max_send_wr = m.u.create_qp.max_recv_wr = 1024;
        m.u.create_qp.max_send_sge = m.u.create_qp.max_recv_sge = 1;
        m.u.create_qp.max_inline_data = (uint32_t)inline_bytes;
        if (req(n, &m, EMU_CREATE_QP, x->ctx, 0))
            return -1;
        x->qp = m.u.create_qp.qp, x->qpn = m.u.create_qp.qp_num;
    }
    int v2 = link == HCA_LINK_ROCE ? hca_roce_v2_ipv4_index(fabric, 0) : 0;
    for (int n = 0; n < 2; n++) {
        side *x = &s[n], *y = &s[1 - n];
        emu_qp_attr *a = &m.u.qp.attr;
        memset(&m.u, 0, sizeof m.u.qp);
        m.u.qp.qp = x->qp;
        m.u.qp.attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
        a->qp_state = IBV_QPS_INIT, a->port_num = 1;
        a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
        if (req(n, &m, EMU_MODIFY_QP, x->ctx, 0))
            return -1;
        memset(&m.u, 0, sizeof m.u.qp);
        m.u.qp.qp = x->qp;
        m.u.qp.attr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                           IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
        a->qp_state = IBV_QPS_RTR, a->path_mtu = hca_port_active_mtu(fabric, n);
        a->dest_qp_num = y->qpn, a->rq_psn = 0x100 + (uint32_t)y->node;
        a->max_dest_rd_atomic = 1, a->min_rnr_timer = 12;
        a->ah.port_num = 1, a->ah.dlid = (uint16_t)hca_port_lid(fabric, y->node);
        if (link == HCA_LINK_ROCE) {
            a->ah.is_global = 1, a->ah.sgid_index = (uint8_t)v2, a->ah.hop_limit = 64;
            hca_port_gid(fabric, y->node, v2, &a->ah.dgid);
        }
        if (req(n, &m, EMU_MODIFY_QP, x->ctx, 0))
            return -1;
        memset(&m.u, 0, sizeof m.u.qp);
        m.u.qp.qp = x->qp;
        m.u.qp.attr_mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                           IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
        a->qp_state = IBV_QPS_RTS, a->timeout = 14, a->retry_cnt = 7, a->rnr_retry = 7;
        a->sq_psn = 0x100 + (uint32_t)x->node, a->max_rd_atomic = 1;
        if (req(n, &m, EMU_MODIFY_QP, x->ctx, 0))
            return -1;
    }
    hca_align_clocks(fabric);
    return 0;
}

static int post_one(side *x, int op, size_t bytes, uint64_t wr_id, int flags, side *peer)
{
    static emu_msg m;
    memset(&m.u.send, 0, emu_msg_bytes(EMU_POST_SEND, 1) - offsetof(emu_msg, u));
    m.u.send.qp = x->qp;
    m.u.send.n = 1;
    emu_send_wr *w = &m.u.send.wr[0];
    w->wr_id = wr_id, w->opcode = op, w->send_flags = (uint32_t)flags;
    if (flags & IBV_SEND_INLINE) {
        w->inline_len = (uint32_t)bytes;
    } else {
        w->num_sge = 1;
        w->sg[0].addr = x->base, w->sg[0].length = (uint32_t)bytes, w->sg[0].lkey = x->key;
    }
    if (peer)
        w->remote_addr = peer->base, w->rkey = peer->key;
    return req(x->node, &m, EMU_POST_SEND, x->ctx, 1);
}

static int post_recv(side *x, size_t bytes)
{
    static emu_msg m;
    memset(&m.u.recv, 0, emu_msg_bytes(EMU_POST_RECV, 1) - offsetof(emu_msg, u));
    m.u.recv.qp = x->qp;
    m.u.recv.n = 1;
    m.u.recv.wr[0].num_sge = 1;
    m.u.recv.wr[0].sg[0].addr = x->base + ((size_t)1 << 29);
    m.u.recv.wr[0].sg[0].length = (uint32_t)bytes;
    m.u.recv.wr[0].sg[0].lkey = x->key;
    return req(x->node, &m, EMU_POST_RECV, x->ctx, 1);
}

/* Poll cq of x for at most max completions: how many came (all successful), or -1. */
static int poll(side *x, uint32_t cq, int max)
{
    static emu_msg m;
    m.u.poll.cq = cq;
    m.u.poll.n = max;
    if (req(x->node, &m, EMU_POLL_CQ, x->ctx, max) || m.u.poll.n < 0)
        return -1;
    for (int i = 0; i < m.u.poll.n; i++)
        if (m.u.poll.wc[i].status != IBV_WC_SUCCESS)
            return -1;
    return m.u.poll.n;
}

double ref_write_seconds(int link, size_t msg, int depth, size_t total)
{
    side s[2];
    if (!msg || total % msg || depth < 1 || depth > 1024 || connect_pair(link, s, 0))
        return -1;
    double t0 = hca_clock(fabric, 0);
    long long n = (long long)(total / msg), posted = 0, done = 0;
    while (done < n) {
        while (posted < n && posted - done < depth) {
            if (post_one(&s[0], IBV_WR_RDMA_WRITE, msg, (uint64_t)posted, IBV_SEND_SIGNALED, &s[1]))
                return -1;
            posted++;
        }
        int k = poll(&s[0], s[0].scq, 16);
        if (k < 0)
            return -1;
        done += k;
    }
    return hca_clock(fabric, 0) - t0;
}

/* Wait for one receive completion of x (the other side has posted what it answers). */
static int wait_recv(side *x)
{
    int k;
    while ((k = poll(x, x->rcq, 1)) == 0)
        ;
    return k == 1 ? 0 : -1;
}

double ref_pingpong_seconds(int link, size_t bytes, int iters)
{
    side s[2];
    const int inl = 64, every = 32;
    if (iters < 1 || connect_pair(link, s, inl))
        return -1;
    for (int n = 0; n < 2; n++)
        if (post_recv(&s[n], bytes))
            return -1;
    hca_align_clocks(fabric);
    double t0 = hca_clock(fabric, 0);
    int flags = bytes <= (size_t)inl ? IBV_SEND_INLINE : 0;
    for (int i = 0; i < iters; i++) {
        int sig = (i % every == every - 1) ? IBV_SEND_SIGNALED : 0;
        /* client: send, wait for the answer, post the next receive */
        if (post_one(&s[0], IBV_WR_SEND, bytes, (uint64_t)i, flags | sig, NULL))
            return -1;
        /* server: wait, post the next receive, answer */
        if (wait_recv(&s[1]) || post_recv(&s[1], bytes) ||
            post_one(&s[1], IBV_WR_SEND, bytes, (uint64_t)i, flags | sig, NULL))
            return -1;
        if (wait_recv(&s[0]) || post_recv(&s[0], bytes))
            return -1;
        if (sig) /* retire the unsignaled sends behind it: its completion is due by now */
            for (int n = 0; n < 2; n++)
                while (poll(&s[n], s[n].scq, 1) == 0)
                    ;
    }
    return (hca_clock(fabric, 0) - t0) / (2.0 * iters);
}
