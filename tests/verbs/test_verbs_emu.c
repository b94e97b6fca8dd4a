/* test_verbs_emu.c: the emulated verbs provider (labs/lab13/emu/) against what an adapter
 * enforces. The provider library (libibverbs.c) and the HCA (hca.c) run in this process:
 * commlab_verbs_call() below hands each request to the HCA for the node "running" now, so
 * these tests call the real <infiniband/verbs.h> API, inline ibv_post_send/ibv_post_recv/
 * ibv_poll_cq included, exactly as a student's program does.
 *
 *   make verbs-test
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

#include <cmocka.h>

#include "hca.h"
#include "ref.h"

#define MEM ((size_t)4 << 20)

static hca_fabric *fabric;
static void *fabric_mem;
static int current; /* the node whose program is running */
static uint8_t *node_mem[2];

int commlab_verbs_call(void *msg, unsigned long bytes);
int commlab_verbs_call(void *msg, unsigned long bytes)
{
    hca_call(fabric, current, msg, bytes);
    return 0;
}

/* One node's objects. */
typedef struct end {
    int node;
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_mr *mr;
    struct ibv_cq *scq, *rcq;
    struct ibv_qp *qp;
    uint8_t *buf;
    int gid_index;
} end;

static end E[2];

static void on(int n) { current = n; }

static void make_fabric(int link)
{
    if (!fabric_mem)
        fabric_mem = aligned_alloc(64, hca_fabric_bytes());
    for (int n = 0; n < 2; n++)
        if (!node_mem[n])
            node_mem[n] = aligned_alloc(4096, MEM);
    assert_non_null(fabric_mem);
    memset(fabric_mem, 0, hca_fabric_bytes());
    fabric = hca_fabric_init(fabric_mem, link, 2, 0, 0);
    for (int n = 0; n < 2; n++)
        hca_node_memory(fabric, n, (uintptr_t)node_mem[n], MEM);
}

/* Open the device, PD, MR over the node's memory, CQs and an RC QP on node n. */
static void open_end(int n, int max_send, int cqe, int access)
{
    end *e = &E[n];
    memset(e, 0, sizeof *e);
    e->node = n;
    e->buf = node_mem[n];
    on(n);
    int num = 0;
    struct ibv_device **list = ibv_get_device_list(&num);
    assert_non_null(list);
    assert_int_equal(num, 1);
    assert_string_equal(ibv_get_device_name(list[0]), "emu_0");
    e->ctx = ibv_open_device(list[0]);
    ibv_free_device_list(list);
    assert_non_null(e->ctx);
    assert_non_null(e->pd = ibv_alloc_pd(e->ctx));
    assert_non_null(e->mr = ibv_reg_mr(e->pd, e->buf, MEM, access));
    assert_non_null(e->scq = ibv_create_cq(e->ctx, cqe, NULL, NULL, 0));
    assert_non_null(e->rcq = ibv_create_cq(e->ctx, 64, NULL, NULL, 0));
    struct ibv_qp_init_attr qa = {.send_cq = e->scq,
                                  .recv_cq = e->rcq,
                                  .qp_type = IBV_QPT_RC,
                                  .cap = {.max_send_wr = (uint32_t)max_send,
                                          .max_recv_wr = 64,
                                          .max_send_sge = 2,
                                          .max_recv_sge = 2,
                                          .max_inline_data = 64}};
    assert_non_null(e->qp = ibv_create_qp(e->pd, &qa));
    e->gid_index = -1;
}

static const int ALL_ACCESS =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

static int to_init(end *e, int access)
{
    on(e->node);
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = (unsigned)access};
    return ibv_modify_qp(e->qp, &a,
                         IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

typedef struct path {
    uint32_t dest_qpn, rq_psn, sq_psn;
    int mtu, gid_index, rnr_retry, timeout, retry_cnt, max_dest_rd;
} path;

/* x's RTR towards y, with p's deviations from the right values (0 fields: the defaults). */
static int to_rtr(end *x, end *y, const path *p)
{
    on(y->node);
    struct ibv_port_attr ya;
    assert_int_equal(ibv_query_port(y->ctx, 1, &ya), 0);
    union ibv_gid g;
    int gi = p && p->gid_index ? p->gid_index : x->gid_index;
    if (gi >= 0)
        assert_int_equal(ibv_query_gid(y->ctx, 1, gi, &g), 0);
    on(x->node);
    struct ibv_port_attr xa;
    assert_int_equal(ibv_query_port(x->ctx, 1, &xa), 0);
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_RTR,
        .path_mtu = p && p->mtu ? (enum ibv_mtu)p->mtu : xa.active_mtu,
        .dest_qp_num = p && p->dest_qpn ? p->dest_qpn : y->qp->qp_num,
        .rq_psn = p && p->rq_psn ? p->rq_psn : 0x1000 + (uint32_t)y->node,
        .max_dest_rd_atomic = (uint8_t)(p && p->max_dest_rd ? p->max_dest_rd - 1 : 1),
        .min_rnr_timer = 1,
        .ah_attr = {.dlid = ya.lid, .port_num = 1},
    };
    if (gi >= 0) {
        a.ah_attr.is_global = 1;
        a.ah_attr.grh.sgid_index = (uint8_t)gi;
        a.ah_attr.grh.hop_limit = 64;
        a.ah_attr.grh.dgid = g;
    }
    return ibv_modify_qp(x->qp, &a,
                         IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                             IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

static int to_rts(end *x, const path *p)
{
    on(x->node);
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTS,
                            .timeout = (uint8_t)(p && p->timeout ? p->timeout : 1),
                            .retry_cnt = (uint8_t)(p && p->retry_cnt ? p->retry_cnt - 1 : 1),
                            .rnr_retry = (uint8_t)(p && p->rnr_retry ? p->rnr_retry - 1 : 7),
                            .sq_psn = p && p->sq_psn ? p->sq_psn : 0x1000 + (uint32_t)x->node,
                            .max_rd_atomic = 1};
    return ibv_modify_qp(x->qp, &a,
                         IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                             IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Both ends connected; p0 deviates node 0's attributes (its RTR and RTS). */
static void connect_pair(const path *p0, int access0, int access1)
{
    assert_int_equal(to_init(&E[0], access0), 0);
    assert_int_equal(to_init(&E[1], access1), 0);
    assert_int_equal(to_rtr(&E[0], &E[1], p0), 0);
    assert_int_equal(to_rtr(&E[1], &E[0], NULL), 0);
    assert_int_equal(to_rts(&E[0], p0), 0);
    assert_int_equal(to_rts(&E[1], NULL), 0);
}

static int setup_ib(void **state)
{
    (void)state;
    make_fabric(HCA_LINK_IB);
    open_end(0, 64, 127, ALL_ACCESS);
    open_end(1, 64, 127, ALL_ACCESS);
    return 0;
}

static int setup_roce(void **state)
{
    (void)state;
    make_fabric(HCA_LINK_ROCE);
    open_end(0, 64, 127, ALL_ACCESS);
    open_end(1, 64, 127, ALL_ACCESS);
    E[0].gid_index = E[1].gid_index = 3;
    return 0;
}

static int post_write(end *x, uint64_t id, size_t off, size_t len, uint32_t lkey, uint64_t raddr,
                      uint32_t rkey, int flags)
{
    on(x->node);
    struct ibv_sge sge = {.addr = (uintptr_t)(x->buf + off), .length = (uint32_t)len, .lkey = lkey};
    struct ibv_send_wr wr = {.wr_id = id,
                             .sg_list = &sge,
                             .num_sge = 1,
                             .opcode = IBV_WR_RDMA_WRITE,
                             .send_flags = (unsigned)flags,
                             .wr.rdma = {.remote_addr = raddr, .rkey = rkey}},
                       *bad;
    return ibv_post_send(x->qp, &wr, &bad);
}

static int write_to_peer(uint64_t id, size_t off, size_t len)
{
    return post_write(&E[0], id, off, len, E[0].mr->lkey, (uintptr_t)(E[1].buf + off),
                      E[1].mr->rkey, IBV_SEND_SIGNALED);
}

static int post_send(end *x, uint64_t id, size_t off, size_t len, int flags)
{
    on(x->node);
    struct ibv_sge sge = {
        .addr = (uintptr_t)(x->buf + off), .length = (uint32_t)len, .lkey = x->mr->lkey};
    struct ibv_send_wr wr = {.wr_id = id,
                             .sg_list = &sge,
                             .num_sge = 1,
                             .opcode = IBV_WR_SEND,
                             .send_flags = (unsigned)flags},
                       *bad;
    return ibv_post_send(x->qp, &wr, &bad);
}

static int post_recv(end *x, uint64_t id, size_t off, size_t len)
{
    on(x->node);
    struct ibv_sge sge = {
        .addr = (uintptr_t)(x->buf + off), .length = (uint32_t)len, .lkey = x->mr->lkey};
    struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1}, *bad;
    return ibv_post_recv(x->qp, &wr, &bad);
}

/* Poll cq of node n until one completion comes (at most 3 s of real time). */
static struct ibv_wc one(int n, struct ibv_cq *cq)
{
    struct ibv_wc wc;
    memset(&wc, 0, sizeof wc);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    on(n);
    for (;;) {
        int k = ibv_poll_cq(cq, 1, &wc);
        assert_true(k >= 0);
        if (k == 1)
            return wc;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 3)
            fail_msg("no completion within 3 s");
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
}

static int qp_state(end *x)
{
    on(x->node);
    struct ibv_qp_attr a;
    struct ibv_qp_init_attr ia;
    assert_int_equal(ibv_query_qp(x->qp, &a, IBV_QP_STATE, &ia), 0);
    return a.qp_state;
}

/* --- devices, ports, GIDs ---------------------------------------------------------------- */

static void test_ports(void **state)
{
    (void)state;
    struct ibv_port_attr a;
    on(0);
    assert_int_equal(ibv_query_port(E[0].ctx, 1, &a), 0); /* the inline, extended path */
    assert_int_equal(a.state, IBV_PORT_ACTIVE);
    assert_int_equal(a.link_layer, IBV_LINK_LAYER_INFINIBAND);
    assert_int_equal(a.active_mtu, IBV_MTU_4096);
    assert_int_equal(a.lid, 1);
    assert_int_not_equal(ibv_query_port(E[0].ctx, 2, &a), 0);
    on(1);
    assert_int_equal(ibv_query_port(E[1].ctx, 1, &a), 0);
    assert_int_equal(a.lid, 2);
    struct ibv_device_attr da;
    assert_int_equal(ibv_query_device(E[1].ctx, &da), 0);
    assert_int_equal(da.phys_port_cnt, 1);
    assert_true(da.max_qp_wr >= 1024);
}

static void test_roce_gids(void **state)
{
    (void)state;
    struct ibv_port_attr a;
    on(0);
    assert_int_equal(ibv_query_port(E[0].ctx, 1, &a), 0);
    assert_int_equal(a.link_layer, IBV_LINK_LAYER_ETHERNET);
    assert_int_equal(a.lid, 0);
    assert_int_equal(a.active_mtu, IBV_MTU_1024);
    const int types[4] = {IBV_GID_TYPE_ROCE_V1, IBV_GID_TYPE_ROCE_V2, IBV_GID_TYPE_ROCE_V1,
                          IBV_GID_TYPE_ROCE_V2};
    for (int i = 0; i < 4; i++) {
        struct ibv_gid_entry e;
        assert_int_equal(ibv_query_gid_ex(E[0].ctx, 1, (uint32_t)i, &e, 0), 0);
        assert_int_equal(e.gid_type, types[i]);
        assert_int_equal(e.gid.raw[0] == 0xfe, i < 2); /* fe80:: link-local first */
        assert_int_equal(e.gid.raw[10] == 0xff && e.gid.raw[11] == 0xff, i >= 2); /* IPv4 */
    }
    struct ibv_gid_entry e;
    assert_int_equal(ibv_query_gid_ex(E[0].ctx, 1, 9, &e, 0), ENODATA);
    struct ibv_gid_entry table[16];
    assert_int_equal(ibv_query_gid_table(E[0].ctx, table, 16, 0), 4);
}

/* --- the QP state machine ------------------------------------------------------------------ */

static void test_state_machine(void **state)
{
    (void)state;
    end *x = &E[0];
    on(0);
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR};
    assert_int_equal(ibv_modify_qp(x->qp, &a, IBV_QP_STATE), EINVAL); /* RESET -> RTR */
    assert_int_equal(post_recv(x, 1, 0, 64), EINVAL);                 /* RQ in RESET */
    a = (struct ibv_qp_attr){.qp_state = IBV_QPS_INIT, .port_num = 1};
    assert_int_equal(ibv_modify_qp(x->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT),
                     EINVAL); /* lacks IBV_QP_ACCESS_FLAGS */
    a.port_num = 2;
    assert_int_equal(
        ibv_modify_qp(x->qp, &a,
                      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
        EINVAL); /* no port 2 */
    a.port_num = 1;
    assert_int_equal(ibv_modify_qp(x->qp, &a,
                                   IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                       IBV_QP_ACCESS_FLAGS | IBV_QP_SQ_PSN),
                     EINVAL);                     /* SQ_PSN does not belong to RESET -> INIT */
    assert_int_equal(qp_state(x), IBV_QPS_RESET); /* a refused modify changes nothing */
    assert_int_equal(to_init(x, ALL_ACCESS), 0);
    assert_int_equal(x->qp->state, IBV_QPS_INIT);
    assert_int_equal(post_recv(x, 1, 0, 64), 0);       /* receives from INIT on */
    assert_int_equal(write_to_peer(1, 0, 64), ENOMEM); /* sends only in RTS (as mlx5) */
    a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR,
                             .path_mtu = IBV_MTU_4096,
                             .dest_qp_num = E[1].qp->qp_num,
                             .max_dest_rd_atomic = 1,
                             .ah_attr = {.dlid = 2, .port_num = 1}};
    assert_int_equal(ibv_modify_qp(x->qp, &a,
                                   IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_RQ_PSN |
                                       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
                     EINVAL); /* lacks IBV_QP_DEST_QPN */
    a.ah_attr.port_num = 0;
    assert_int_equal(ibv_modify_qp(x->qp, &a,
                                   IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                                       IBV_QP_MIN_RNR_TIMER),
                     EINVAL); /* ah_attr.port_num 0 */
    a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS};
    assert_int_equal(ibv_modify_qp(x->qp, &a, IBV_QP_STATE), EINVAL); /* INIT -> RTS */
    assert_int_equal(to_rtr(x, &E[1], NULL), 0);
    a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .retry_cnt = 7, .rnr_retry = 7};
    assert_int_equal(ibv_modify_qp(x->qp, &a,
                                   IBV_QP_STATE | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                       IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC),
                     EINVAL); /* lacks IBV_QP_TIMEOUT */
    a.retry_cnt = 8;
    a.timeout = 14;
    assert_int_equal(ibv_modify_qp(x->qp, &a,
                                   IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                       IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC),
                     EINVAL); /* retry_cnt is 0..7 */
    assert_int_equal(to_rts(x, NULL), 0);
    assert_int_equal(qp_state(x), IBV_QPS_RTS);
    a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RESET};
    assert_int_equal(ibv_modify_qp(x->qp, &a, IBV_QP_STATE), 0); /* any -> RESET */
    assert_int_equal(qp_state(x), IBV_QPS_RESET);
}

static void test_roce_needs_grh(void **state)
{
    (void)state;
    assert_int_equal(to_init(&E[0], ALL_ACCESS), 0);
    E[0].gid_index = -1;
    assert_int_equal(to_rtr(&E[0], &E[1], NULL), EINVAL); /* no GRH on RoCE */
    E[0].gid_index = 3;
    path p = {.gid_index = 9};
    assert_int_not_equal(to_rtr(&E[0], &E[1], &p), 0); /* an empty sgid_index */
    assert_int_equal(to_rtr(&E[0], &E[1], NULL), 0);
}

/* --- data --------------------------------------------------------------------------------- */

static void test_write_and_read(void **state)
{
    (void)state;
    connect_pair(NULL, ALL_ACCESS, ALL_ACCESS);
    for (size_t i = 0; i < 65536; i++)
        E[0].buf[i] = (uint8_t)(i * 7 + 3), E[1].buf[i] = 0;
    assert_int_equal(write_to_peer(42, 0, 65536), 0);
    struct ibv_wc wc = one(0, E[0].scq);
    assert_int_equal(wc.status, IBV_WC_SUCCESS);
    assert_int_equal(wc.opcode, IBV_WC_RDMA_WRITE);
    assert_int_equal(wc.wr_id, 42);
    assert_int_equal(wc.qp_num, E[0].qp->qp_num);
    assert_memory_equal(E[0].buf, E[1].buf, 65536);
    /* READ it back into another place */
    on(0);
    struct ibv_sge sge = {
        .addr = (uintptr_t)(E[0].buf + 1048576), .length = 4096, .lkey = E[0].mr->lkey};
    struct ibv_send_wr wr = {.wr_id = 7,
                             .sg_list = &sge,
                             .num_sge = 1,
                             .opcode = IBV_WR_RDMA_READ,
                             .send_flags = IBV_SEND_SIGNALED,
                             .wr.rdma = {.remote_addr = (uintptr_t)E[1].buf,
                                         .rkey = E[1].mr->rkey}},
                       *bad;
    assert_int_equal(ibv_post_send(E[0].qp, &wr, &bad), 0);
    wc = one(0, E[0].scq);
    assert_int_equal(wc.status, IBV_WC_SUCCESS);
    assert_int_equal(wc.opcode, IBV_WC_RDMA_READ);
    assert_memory_equal(E[0].buf + 1048576, E[1].buf, 4096);
}

static void test_send_recv_and_inline(void **state)
{
    (void)state;
    connect_pair(NULL, ALL_ACCESS, ALL_ACCESS);
    memcpy(E[0].buf, "hello, responder", 17);
    assert_int_equal(post_recv(&E[1], 5, 4096, 64), 0);
    assert_int_equal(post_send(&E[0], 6, 0, 17, IBV_SEND_SIGNALED), 0);
    struct ibv_wc wc = one(1, E[1].rcq);
    assert_int_equal(wc.status, IBV_WC_SUCCESS);
    assert_int_equal(wc.opcode, IBV_WC_RECV);
    assert_int_equal(wc.byte_len, 17);
    assert_int_equal(wc.wr_id, 5);
    assert_int_equal(wc.src_qp, E[0].qp->qp_num);
    assert_string_equal((char *)E[1].buf + 4096, "hello, responder");
    assert_int_equal(one(0, E[0].scq).status, IBV_WC_SUCCESS);
    /* inline: from memory no MR covers (the CPU copies it); at most max_inline_data */
    char priv[32] = "inline bytes";
    assert_int_equal(post_recv(&E[1], 8, 8192, 64), 0);
    on(0);
    struct ibv_sge sge = {.addr = (uintptr_t)priv, .length = 13, .lkey = 0};
    struct ibv_send_wr wr = {.wr_id = 9,
                             .sg_list = &sge,
                             .num_sge = 1,
                             .opcode = IBV_WR_SEND,
                             .send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED},
                       *bad;
    assert_int_equal(ibv_post_send(E[0].qp, &wr, &bad), 0);
    assert_int_equal(one(1, E[1].rcq).status, IBV_WC_SUCCESS);
    assert_string_equal((char *)E[1].buf + 8192, "inline bytes");
    assert_int_equal(one(0, E[0].scq).status, IBV_WC_SUCCESS);
    char big[128] = {0};
    sge = (struct ibv_sge){.addr = (uintptr_t)big, .length = 128};
    assert_int_equal(ibv_post_send(E[0].qp, &wr, &bad), ENOMEM); /* above max_inline_data */
    assert_ptr_equal(bad, &wr);
}

/* --- keys, access flags, bounds ------------------------------------------------------------- */

static void test_bad_lkey_flushes_in_order(void **state)
{
    (void)state;
    connect_pair(NULL, ALL_ACCESS, ALL_ACCESS);
    for (int i = 0; i < 8; i++) {
        uint32_t lkey = i == 4 ? E[0].mr->lkey ^ 0x100 : E[0].mr->lkey;
        assert_int_equal(post_write(&E[0], (uint64_t)i, 4096 * (size_t)i, 4096, lkey,
                                    (uintptr_t)(E[1].buf + 4096 * (size_t)i), E[1].mr->rkey,
                                    IBV_SEND_SIGNALED),
                         0);
    }
    for (int i = 0; i < 8; i++) { /* RC: completions in posting order */
        struct ibv_wc wc = one(0, E[0].scq);
        assert_int_equal(wc.wr_id, i);
        assert_int_equal(wc.status, i < 4    ? IBV_WC_SUCCESS
                                    : i == 4 ? IBV_WC_LOC_PROT_ERR
                                             : IBV_WC_WR_FLUSH_ERR);
    }
    assert_int_equal(qp_state(&E[0]), IBV_QPS_ERR);
    /* a QP in error still takes work requests, and flushes them */
    assert_int_equal(write_to_peer(99, 0, 64), 0);
    assert_int_equal(one(0, E[0].scq).status, IBV_WC_WR_FLUSH_ERR);
}

static void test_remote_keys_and_access(void **state)
{
    (void)state;
    connect_pair(NULL, ALL_ACCESS, ALL_ACCESS);
    assert_int_equal(post_write(&E[0], 1, 0, 64, E[0].mr->lkey, (uintptr_t)E[1].buf,
                                E[1].mr->rkey ^ 0x300, IBV_SEND_SIGNALED),
                     0);
    assert_int_equal(one(0, E[0].scq).status, IBV_WC_REM_ACCESS_ERR);
    assert_int_equal(qp_state(&E[0]), IBV_QPS_ERR);
    assert_int_equal(qp_state(&E[1]), IBV_QPS_ERR); /* the responder's QP too */
}

static void test_mr_without_remote_write(void **state)
{
    (void)state;
    on(1);
    struct ibv_mr *ro = ibv_reg_mr(E[1].pd, E[1].buf, 4096, IBV_ACCESS_LOCAL_WRITE);
    assert_non_null(ro);
    connect_pair(NULL, ALL_ACCESS, ALL_ACCESS);
    assert_int_equal(post_write(&E[0], 1, 0, 64, E[0].mr->lkey, (uintptr_t)E[1].buf, ro->rkey,
                                IBV_SEND_SIGNALED),
                     0);
    assert_int_equal(one(0, E[0].scq).status, IBV_WC_REM_ACCESS_ERR);
}

static void test_qp_without_remote_write(void **state)
{
    (void)state;
    connect_pair(NULL, ALL_ACCESS, IBV_ACCESS_REMOTE_READ); /* the responder's QP */
    assert_int_equal(write_to_peer(1, 0, 64), 0);
    assert_int_equal(one(0, E[0].scq).status, IBV_WC_REM_ACCESS_ERR);
}

static void test_reg_mr_rules(void **state)
{
    (void)state;
    on(0);
    errno = 0;
    assert_null(ibv_reg_mr(E[0].pd, E[0].buf, 4096, IBV_ACCESS_REMOTE_WRITE));
    assert_int_equal(errno, EINVAL); /* remote write needs local write */
    assert_null(ibv_reg_mr(E[0].pd, E[0].buf + MEM - 4096, 8192, IBV_ACCESS_LOCAL_WRITE));
    assert_int_equal(errno, EFAULT); /* past the node's memory */
    assert_null(ibv_reg_mr(E[0].pd, E[1].buf, 4096, IBV_ACCESS_LOCAL_WRITE));
    assert_int_equal(errno, EFAULT); /* another node's memory */
    char priv[64];
    assert_null(ibv_reg_mr(E[0].pd, priv, sizeof priv, IBV_ACCESS_LOCAL_WRITE));
    assert_int_equal(errno, EFAULT);
}

static void test_mr_bounds(void **state)
{
    (void)state;
    on(0);
    struct ibv_mr *small = ibv_reg_mr(E[0].pd, E[0].buf, 4096, IBV_ACCESS_LOCAL_WRITE);
    assert_non_null(small);
    on(1);
    struct ibv_mr *rsmall = ibv_reg_mr(E[1].pd, E[1].buf, 4096, ALL_ACCESS);
    assert_non_null(rsmall);
    connect_pair(NULL, ALL_ACCESS, ALL_ACCESS);
    /* local: 4 KiB from 2 KiB into a 4 KiB MR */
    assert_int_equal(post_write(&E[0], 1, 2048, 4096, small->lkey, (uintptr_t)E[1].buf,
                                E[1].mr->rkey, IBV_SEND_SIGNALED),
                     0);
    assert_int_equal(one(0, E[0].scq).status, IBV_WC_LOC_PROT_ERR);
    /* remote: the same past the end of the responder's MR (a fresh pair) */
    open_end(0, 64, 127, ALL_ACCESS);
    open_end(1, 64, 127, ALL_ACCESS);
    on(1);
    rsmall = ibv_reg_mr(E[1].pd, E[1].buf, 4096, ALL_ACCESS);
    connect_pair(NULL, ALL_ACCESS, ALL_ACCESS);
    assert_int_equal(post_write(&E[0], 1, 0, 4096, E[0].mr->lkey, (uintptr_t)E[1].buf + 2048,
                                rsmall->rkey, IBV_SEND_SIGNALED),
                     0);
    assert_int_equal(one(0, E[0].scq).status, IBV_WC_REM_ACCESS_ERR);
}

static void test_mr_of_another_pd(void **state)
{
    (void)state;
    on(0);
    struct ibv_pd *other = ibv_alloc_pd(E[0].ctx);
    struct ibv_mr *mr = ibv_reg_mr(other, E[0].buf, 4096, IBV_ACCESS_LOCAL_WRITE);
    assert_non_null(mr);
    connect_pair(NULL, ALL_ACCESS, ALL_ACCESS);
    assert_int_equal(post_write(&E[0], 1, 0, 64, mr->lkey, (uintptr_t)E[1].buf, E[1].mr->rkey,
                                IBV_SEND_SIGNALED),
                     0);
    assert_int_equal(one(0, E[0].scq).status, IBV_WC_LOC_PROT_ERR);
}

/* --- RNR, receive length, retries ----------------------------------------------------------- */

static void test_rnr_retry_exceeded(void **state)
{
    (void)state;
    path p = {.rnr_retry = 1}; /* rnr_retry 0 */
    connect_pair(&p, ALL_ACCESS, ALL_ACCESS);
    assert_int_equal(post_send(&E[0], 1, 0, 64, IBV_SEND_SIGNALED), 0); /* nothing posted */
    assert_int_equal(one(0, E[0].scq).status, IBV_WC_RNR_RETRY_EXC_ERR);
    assert_int_equal(qp_state(&E[0]), IBV_QPS_ERR);
}

static void test_rnr_then_receive(void **state)
{
    (void)state;
    connect_pair(NULL, ALL_ACCESS, ALL_ACCESS); /* rnr_retry 7: for ever */
    memcpy(E[0].buf, "late", 5);
    assert_int_equal(post_send(&E[0], 1, 0, 5, IBV_SEND_SIGNALED), 0);
    struct ibv_wc wc;
    on(0);
    assert_int_equal(ibv_poll_cq(E[0].scq, 1, &wc), 0); /* it waits for a receive */
    assert_int_equal(post_recv(&E[1], 2, 4096, 64), 0);
    assert_int_equal(one(0, E[0].scq).status, IBV_WC_SUCCESS);
    assert_int_equal(one(1, E[1].rcq).status, IBV_WC_SUCCESS);
    assert_string_equal((char *)E[1].buf + 4096, "late");
}

static void test_receive_too_small(void **state)
{
    (void)state;
    connect_pair(NULL, ALL_ACCESS, ALL_ACCESS);
    assert_int_equal(post_recv(&E[1], 2, 4096, 16), 0);
    assert_int_equal(post_send(&E[0], 1, 0, 64, IBV_SEND_SIGNALED), 0);
    assert_int_equal(one(1, E[1].rcq).status, IBV_WC_LOC_LEN_ERR);
    assert_int_equal(one(0, E[0].scq).status, IBV_WC_REM_INV_REQ_ERR);
}

static void test_wrong_qpn_retries(void **state)
{
    (void)state;
    path p = {.dest_qpn = 0xabcdef};
    connect_pair(&p, ALL_ACCESS, ALL_ACCESS);
    assert_int_equal(write_to_peer(1, 0, 64), 0);
    assert_int_equal(one(0, E[0].scq).status, IBV_WC_RETRY_EXC_ERR);
}

static void test_psn_mismatch_retries(void **state)
{
    (void)state;
    path p = {.sq_psn = 0x777}; /* the responder expects 0x1000 */
    connect_pair(&p, ALL_ACCESS, ALL_ACCESS);
    assert_int_equal(write_to_peer(1, 0, 64), 0);
    assert_int_equal(one(0, E[0].scq).status, IBV_WC_RETRY_EXC_ERR);
}

static void test_roce_v1_gid_is_not_routed(void **state)
{
    (void)state;
    path p = {.gid_index = 2}; /* RoCE v1, IPv4: Ethernet only, no router crossing */
    connect_pair(&p, ALL_ACCESS, ALL_ACCESS);
    assert_int_equal(write_to_peer(1, 0, 64), 0);
    assert_int_equal(one(0, E[0].scq).status, IBV_WC_RETRY_EXC_ERR);
}

static void test_roce_path_mtu_above_port(void **state)
{
    (void)state;
    path p = {.mtu = IBV_MTU_4096}; /* the port's active MTU is 1024 */
    connect_pair(&p, ALL_ACCESS, ALL_ACCESS);
    assert_int_equal(write_to_peer(1, 0, 512), 0); /* one packet: fits */
    assert_int_equal(one(0, E[0].scq).status, IBV_WC_SUCCESS);
    assert_int_equal(write_to_peer(2, 0, 4096), 0); /* a 4096-byte packet: dropped */
    assert_int_equal(one(0, E[0].scq).status, IBV_WC_RETRY_EXC_ERR);
}

static void test_roce_v2_works(void **state)
{
    (void)state;
    connect_pair(NULL, ALL_ACCESS, ALL_ACCESS);
    assert_int_equal(write_to_peer(1, 0, 65536), 0);
    assert_int_equal(one(0, E[0].scq).status, IBV_WC_SUCCESS);
}

/* --- queues: capacity, overrun, ownership ------------------------------------------------------
 */

static void test_send_queue_full(void **state)
{
    (void)state;
    connect_pair(NULL, ALL_ACCESS, ALL_ACCESS);
    for (int i = 0; i < 64; i++) /* max_send_wr 64, none signaled: none retires */
        assert_int_equal(post_write(&E[0], (uint64_t)i, 0, 64, E[0].mr->lkey, (uintptr_t)E[1].buf,
                                    E[1].mr->rkey, 0),
                         0);
    assert_int_equal(
        post_write(&E[0], 64, 0, 64, E[0].mr->lkey, (uintptr_t)E[1].buf, E[1].mr->rkey, 0), ENOMEM);
}

static void test_signaled_retires_the_unsignaled(void **state)
{
    (void)state;
    connect_pair(NULL, ALL_ACCESS, ALL_ACCESS);
    for (int round = 0; round < 10; round++) { /* 640 WRs through a 64-deep queue */
        for (int i = 0; i < 64; i++)
            assert_int_equal(post_write(&E[0], (uint64_t)i, 0, 64, E[0].mr->lkey,
                                        (uintptr_t)E[1].buf, E[1].mr->rkey,
                                        i == 63 ? IBV_SEND_SIGNALED : 0),
                             0);
        struct ibv_wc wc = one(0, E[0].scq);
        assert_int_equal(wc.status, IBV_WC_SUCCESS);
        assert_int_equal(wc.wr_id, 63);
    }
}

static void test_cq_overrun(void **state)
{
    (void)state;
    open_end(0, 64, 2, ALL_ACCESS); /* a CQ of 3 entries (2 asked, as mlx5 rounds) */
    assert_int_equal(E[0].scq->cqe, 3);
    connect_pair(NULL, ALL_ACCESS, ALL_ACCESS);
    for (int i = 0; i < 32; i++) /* posting 32 takes longer than the first completions */
        assert_int_equal(write_to_peer((uint64_t)i, 0, 4096), 0);
    struct ibv_wc wc[4];
    on(0);
    assert_int_equal(ibv_poll_cq(E[0].scq, 4, wc), -1); /* the CQ is in error */
    assert_int_equal(qp_state(&E[0]), IBV_QPS_ERR);
}

static void test_busy_objects(void **state)
{
    (void)state;
    on(0);
    assert_int_equal(ibv_dealloc_pd(E[0].pd), EBUSY);  /* an MR and a QP use it */
    assert_int_equal(ibv_destroy_cq(E[0].scq), EBUSY); /* a QP uses it */
    assert_int_equal(ibv_destroy_qp(E[0].qp), 0);
    assert_int_equal(ibv_destroy_cq(E[0].scq), 0);
    assert_int_equal(ibv_destroy_cq(E[0].rcq), 0);
    assert_int_equal(ibv_dealloc_pd(E[0].pd), EBUSY); /* the MR */
    assert_int_equal(ibv_dereg_mr(E[0].mr), 0);
    assert_int_equal(ibv_dealloc_pd(E[0].pd), 0);
    assert_int_equal(ibv_close_device(E[0].ctx), 0);
    hca_objects o;
    hca_objects_get(fabric, 0, &o);
    assert_int_equal(o.ctx + o.pd + o.mr + o.cq + o.qp, 0);
    assert_int_equal(o.implicit, 0);
}

static void test_create_qp_limits(void **state)
{
    (void)state;
    on(0);
    struct ibv_qp_init_attr qa = {
        .send_cq = E[0].scq, .recv_cq = E[0].rcq, .qp_type = IBV_QPT_UD, .cap = {.max_send_wr = 4}};
    errno = 0;
    assert_null(ibv_create_qp(E[0].pd, &qa));
    assert_int_equal(errno, EOPNOTSUPP); /* RC only */
    qa.qp_type = IBV_QPT_RC;
    qa.cap.max_send_wr = 100000;
    assert_null(ibv_create_qp(E[0].pd, &qa));
    assert_int_equal(errno, EINVAL); /* above max_qp_wr */
    assert_null(ibv_create_cq(E[0].ctx, 1 << 20, NULL, NULL, 0));
    assert_int_equal(errno, EINVAL); /* above max_cqe */
}

/* --- the status codes and their strings are rdma-core's ------------------------------------- */

static void test_status_strings(void **state)
{
    (void)state;
    assert_int_equal(IBV_WC_REM_ACCESS_ERR, 10);
    assert_int_equal(IBV_WC_RETRY_EXC_ERR, 12);
    assert_int_equal(IBV_WC_RNR_RETRY_EXC_ERR, 13);
    assert_string_equal(ibv_wc_status_str(IBV_WC_SUCCESS), "success");
    assert_string_equal(ibv_wc_status_str(IBV_WC_LOC_PROT_ERR), "local protection error");
    assert_string_equal(ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR), "Work Request Flushed Error");
    assert_string_equal(ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR), "remote access error");
    assert_string_equal(ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR),
                        "transport retry counter exceeded");
    assert_string_equal(ibv_wc_status_str(IBV_WC_RNR_RETRY_EXC_ERR), "RNR retry counter exceeded");
}

/* --- the model's time ---------------------------------------------------------------------- */

static void test_model_time(void **state)
{
    (void)state;
    connect_pair(NULL, ALL_ACCESS, ALL_ACCESS);
    const hca_model *m = hca_fabric_model(fabric);
    hca_align_clocks(fabric);
    double t0 = hca_clock(fabric, 0);
    assert_int_equal(write_to_peer(1, 0, 65536), 0);
    struct ibv_wc wc = one(0, E[0].scq);
    assert_int_equal(wc.status, IBV_WC_SUCCESS);
    /* post, fetch, payload read, 16 packets on the wire, there, placed, ACK back, CQE, poll */
    double wire = (65536 + 16 * m->hdr_bytes) / m->wire_Bps;
    double want = m->post_s + m->fetch_s + m->dma_s + wire + m->wire_s + m->rx_s + m->wire_s +
                  m->cqe_s + m->poll_s + m->poll_cqe_s;
    assert_true(fabs(hca_clock(fabric, 0) - t0 - want) < 1e-12);
    /* the harness's loops: deeper is never slower; the link bounds them */
    double prev = 1e9;
    for (int d = 1; d <= 64; d *= 2) {
        double s = ref_write_seconds(HCA_LINK_IB, 16384, d, 1 << 20);
        assert_true(s > 0 && s <= prev * (1 + 1e-12));
        assert_true((1 << 20) / s <= m->wire_Bps);
        prev = s;
    }
    double lat = ref_pingpong_seconds(HCA_LINK_IB, 8, 50);
    assert_true(lat > 0.5e-6 && lat < 1.5e-6);
}

int main(void)
{
    const struct CMUnitTest ib[] = {
        cmocka_unit_test_setup(test_ports, setup_ib),
        cmocka_unit_test_setup(test_state_machine, setup_ib),
        cmocka_unit_test_setup(test_write_and_read, setup_ib),
        cmocka_unit_test_setup(test_send_recv_and_inline, setup_ib),
        cmocka_unit_test_setup(test_bad_lkey_flushes_in_order, setup_ib),
        cmocka_unit_test_setup(test_remote_keys_and_access, setup_ib),
        cmocka_unit_test_setup(test_mr_without_remote_write, setup_ib),
        cmocka_unit_test_setup(test_qp_without_remote_write, setup_ib),
        cmocka_unit_test_setup(test_reg_mr_rules, setup_ib),
        cmocka_unit_test_setup(test_mr_bounds, setup_ib),
        cmocka_unit_test_setup(test_mr_of_another_pd, setup_ib),
        cmocka_unit_test_setup(test_rnr_retry_exceeded, setup_ib),
        cmocka_unit_test_setup(test_rnr_then_receive, setup_ib),
        cmocka_unit_test_setup(test_receive_too_small, setup_ib),
        cmocka_unit_test_setup(test_wrong_qpn_retries, setup_ib),
        cmocka_unit_test_setup(test_psn_mismatch_retries, setup_ib),
        cmocka_unit_test_setup(test_send_queue_full, setup_ib),
        cmocka_unit_test_setup(test_signaled_retires_the_unsignaled, setup_ib),
        cmocka_unit_test_setup(test_cq_overrun, setup_ib),
        cmocka_unit_test_setup(test_busy_objects, setup_ib),
        cmocka_unit_test_setup(test_create_qp_limits, setup_ib),
        cmocka_unit_test(test_status_strings),
        cmocka_unit_test_setup(test_model_time, setup_ib),
    };
    const struct CMUnitTest roce[] = {
        cmocka_unit_test_setup(test_roce_gids, setup_roce),
        cmocka_unit_test_setup(test_roce_needs_grh, setup_roce),
        cmocka_unit_test_setup(test_roce_v2_works, setup_roce),
        cmocka_unit_test_setup(test_roce_v1_gid_is_not_routed, setup_roce),
        cmocka_unit_test_setup(test_roce_path_mtu_above_port, setup_roce),
    };
    return cmocka_run_group_tests_name("verbs_emu_ib", ib, NULL, NULL) |
           cmocka_run_group_tests_name("verbs_emu_roce", roce, NULL, NULL);
}
