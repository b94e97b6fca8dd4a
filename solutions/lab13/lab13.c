/* lab13.c: RDMA verbs: open an RDMA device, connect an RC queue pair to a peer, move data
 * with RDMA WRITE and SEND/RECV, and choose the message size and depth that fill the link.
 *
 * Your code calls libibverbs (<infiniband/verbs.h>, rdma-core) directly. On a machine with
 * an RDMA NIC it drives the NIC; everywhere else the harness runs the same program on an
 * emulated provider that checks every verb as an adapter does. See README.md.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lab13.h"

struct lab13_conn {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_mr *mr;
    struct ibv_cq *scq, *rcq; /* send and receive completions */
    struct ibv_qp *qp;
    struct ibv_port_attr port_attr;
    int port, gid_index; /* gid_index -1: addressed by LID alone (InfiniBand) */
    uint8_t *buf;
    size_t bytes;
    int max_wr, max_recv;
    uint32_t psn;
    int sock; /* the TCP connection to the peer, -1 before the exchange */
};

#define INLINE_BYTES 64 /* small SENDs go inline: the CPU copies them into the WQE */

/* --- 1. open the device, PD, MR, CQ, QP ---------------------------------------------- */

/* BEGIN SOLUTION */
static int is_roce_v2_ipv4(const struct ibv_gid_entry *e)
{
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return e->gid_type == IBV_GID_TYPE_ROCE_V2 && memcmp(e->gid.raw, mapped, 12) == 0;
}

/* The GID index to address the peer with: the given one, none on InfiniBand, or on RoCE
 * the RoCE v2 entry that holds an IPv4 address (the one that crosses routers). */
static cl_result choose_gid(lab13_conn *c, int wanted)
{
    if (wanted >= 0) {
        c->gid_index = wanted;
        return CL_OK;
    }
    if (c->port_attr.link_layer != IBV_LINK_LAYER_ETHERNET) {
        c->gid_index = -1;
        return CL_OK;
    }
    for (int i = 0; i < c->port_attr.gid_tbl_len; i++) {
        struct ibv_gid_entry e;
        if (ibv_query_gid_ex(c->ctx, (uint32_t)c->port, (uint32_t)i, &e, 0) == 0 &&
            is_roce_v2_ipv4(&e)) {
            c->gid_index = i;
            return CL_OK;
        }
    }
    cl_set_error("no RoCE v2 GID with an IPv4 address on port %d (show_gids lists them)", c->port);
    return CL_ERR_UNSUPPORTED;
}

static cl_result open_device(lab13_conn *c, const char *name)
{
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    if (!list || n == 0) {
        cl_set_error("no RDMA device (ibv_get_device_list: %s)", strerror(errno));
        ibv_free_device_list(list);
        return CL_ERR_UNSUPPORTED;
    }
    struct ibv_device *dev = NULL;
    for (int i = 0; i < n && !dev; i++)
        if (!name[0] || strcmp(ibv_get_device_name(list[i]), name) == 0)
            dev = list[i];
    if (dev)
        c->ctx = ibv_open_device(dev);
    ibv_free_device_list(list); /* an open device stays valid */
    if (!dev) {
        cl_set_error("no RDMA device named '%s'", name);
        return CL_ERR_UNSUPPORTED;
    }
    if (!c->ctx) {
        cl_set_error("ibv_open_device(%s): %s", name, strerror(errno));
        return CL_ERR_BACKEND;
    }
    return CL_OK;
}

/* END SOLUTION */
cl_result lab13_open(const lab13_config *cfg, void *buf, size_t bytes, lab13_conn **out,
                     lab13_endpoint *local)
{
    /* BEGIN SOLUTION */
    lab13_conn *c = calloc(1, sizeof *c);
    if (!c)
        return CL_ERR_NOMEM;
    c->sock = -1;
    c->port = cfg->port;
    c->buf = buf;
    c->bytes = bytes;
    c->max_wr = cfg->max_wr;
    c->max_recv = cfg->max_recv;
    *out = c; /* lab13_close() frees what was made, even after a failure here */
    CL_CHECK(open_device(c, cfg->device));
    int err = ibv_query_port(c->ctx, (uint8_t)c->port, &c->port_attr);
    if (err || c->port_attr.state != IBV_PORT_ACTIVE) {
        cl_set_error("port %d is %s", c->port,
                     err ? strerror(err) : ibv_port_state_str(c->port_attr.state));
        return CL_ERR_UNSUPPORTED;
    }
    CL_CHECK(choose_gid(c, cfg->gid_index));
    if (!(c->pd = ibv_alloc_pd(c->ctx))) {
        cl_set_error("ibv_alloc_pd: %s", strerror(errno));
        return CL_ERR_BACKEND;
    }
    /* The peer writes into this buffer: remote write (which needs local write too). */
    c->mr = ibv_reg_mr(c->pd, buf, bytes,
                       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
    if (!c->mr) {
        cl_set_error("ibv_reg_mr of %zu bytes: %s", bytes, strerror(errno));
        return CL_ERR_BACKEND;
    }
    /* Every signaled send may complete before it is polled: the CQ holds them all. */
    c->scq = ibv_create_cq(c->ctx, c->max_wr, NULL, NULL, 0);
    c->rcq = ibv_create_cq(c->ctx, c->max_recv, NULL, NULL, 0);
    if (!c->scq || !c->rcq) {
        cl_set_error("ibv_create_cq: %s", strerror(errno));
        return CL_ERR_BACKEND;
    }
    struct ibv_qp_init_attr qa = {
        .send_cq = c->scq,
        .recv_cq = c->rcq,
        .qp_type = IBV_QPT_RC,
        .sq_sig_all = 0,
        .cap = {.max_send_wr = (uint32_t)c->max_wr,
                .max_recv_wr = (uint32_t)c->max_recv,
                .max_send_sge = 1,
                .max_recv_sge = 1,
                .max_inline_data = INLINE_BYTES},
    };
    if (!(c->qp = ibv_create_qp(c->pd, &qa))) {
        cl_set_error("ibv_create_qp: %s", strerror(errno));
        return CL_ERR_BACKEND;
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    c->psn = ((uint32_t)now.tv_nsec ^ c->qp->qp_num * 2654435761u) & 0xffffff;
    memset(local, 0, sizeof *local);
    local->qpn = c->qp->qp_num;
    local->psn = c->psn;
    local->lid = c->port_attr.lid;
    if (c->gid_index >= 0) {
        union ibv_gid g;
        if (ibv_query_gid(c->ctx, (uint8_t)c->port, c->gid_index, &g) != 0) {
            cl_set_error("ibv_query_gid(index %d): %s", c->gid_index, strerror(errno));
            return CL_ERR_BACKEND;
        }
        memcpy(local->gid, g.raw, 16);
    }
    local->rkey = c->mr->rkey;
    local->addr = (uint64_t)(uintptr_t)buf;
    local->bytes = bytes;
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab13) 1: find cfg->device (ibv_get_device_list), open it, query its port,
    //                choose the GID index (cfg->gid_index, or on RoCE the RoCE v2 IPv4 one),
    //                allocate a PD, register buf so that the peer may write it, create the
    //                CQ(s) and an RC QP sized for cfg->max_wr and cfg->max_recv, and fill
    //                *local with what the peer needs.
    (void)cfg, (void)buf, (void)bytes, (void)out, (void)local;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* --- 2. RESET -> INIT ----------------------------------------------------------------- */

cl_result lab13_init(lab13_conn *c)
{
    /* BEGIN SOLUTION */
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_INIT,
        .pkey_index = 0,
        .port_num = (uint8_t)c->port,
        .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
    };
    int err = ibv_modify_qp(c->qp, &a,
                            IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    if (err) {
        cl_set_error("ibv_modify_qp RESET -> INIT: %s", strerror(err));
        return CL_ERR_BACKEND;
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab13) 2: move the QP to INIT: its port, P_Key index and the access the peer
    //                gets to your memory through it (the attributes this transition needs).
    (void)c;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* --- 3. the out-of-band exchange over TCP ------------------------------------------------ */

/* BEGIN SOLUTION */
static cl_result send_all(int fd, const void *p, size_t n)
{
    for (size_t done = 0; done < n;) {
        ssize_t k = send(fd, (const char *)p + done, n - done, MSG_NOSIGNAL);
        if (k <= 0) {
            cl_set_error("send to the peer: %s", k < 0 ? strerror(errno) : "closed");
            return CL_ERR_IO;
        }
        done += (size_t)k;
    }
    return CL_OK;
}

static cl_result recv_all(int fd, void *p, size_t n)
{
    for (size_t done = 0; done < n;) {
        ssize_t k = recv(fd, (char *)p + done, n - done, 0);
        if (k <= 0) {
            cl_set_error("receive from the peer: %s", k < 0 ? strerror(errno) : "closed");
            return CL_ERR_IO;
        }
        done += (size_t)k;
    }
    return CL_OK;
}

/* The server listens on port and accepts one client; the client connects to host:port,
 * trying again while the server is not listening yet (up to 20 s). */
static cl_result tcp_connect(lab13_conn *c, const char *host, int port, int server)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (server) {
        int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);
        a.sin_addr.s_addr = htonl(INADDR_ANY);
        if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
            bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 1) != 0) {
            cl_set_error("listen on port %d: %s", port, strerror(errno));
            if (fd >= 0)
                close(fd);
            return CL_ERR_IO;
        }
        c->sock = accept(fd, NULL, NULL);
        close(fd);
    } else {
        if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
            cl_set_error("'%s' is not an IPv4 address", host);
            return CL_ERR_INVALID;
        }
        for (int tries = 0; tries < 2000; tries++) {
            c->sock = socket(AF_INET, SOCK_STREAM, 0);
            if (c->sock < 0 || connect(c->sock, (struct sockaddr *)&a, sizeof a) == 0)
                break;
            close(c->sock);
            c->sock = -1;
            if (errno != ECONNREFUSED)
                break;
            nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
        }
    }
    if (c->sock < 0) {
        cl_set_error("TCP %s %s:%d: %s", server ? "accept on" : "connect to", host, port,
                     strerror(errno));
        return CL_ERR_IO;
    }
    int one = 1;
    setsockopt(c->sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return CL_OK;
}

/* The endpoint as text, as perftest sends it: the same on any byte order. */
#define EP_TEXT 160
static void ep_to_text(const lab13_endpoint *e, char *t)
{
    int n = snprintf(t, EP_TEXT, "%04x:%06x:%06x:%08x:%016llx:%016llx:", e->lid, e->qpn, e->psn,
                     e->rkey, (unsigned long long)e->addr, (unsigned long long)e->bytes);
    for (int i = 0; i < 16; i++)
        n += snprintf(t + n, (size_t)(EP_TEXT - n), "%02x", e->gid[i]);
}

static cl_result ep_from_text(const char *t, lab13_endpoint *e)
{
    unsigned lid, qpn, psn, rkey;
    unsigned long long addr, bytes;
    int used = 0;
    memset(e, 0, sizeof *e);
    if (sscanf(t, "%x:%x:%x:%x:%llx:%llx:%n", &lid, &qpn, &psn, &rkey, &addr, &bytes, &used) != 6 ||
        used == 0) {
        cl_set_error("the peer's endpoint is malformed: '%.80s'", t);
        return CL_ERR_INVALID;
    }
    for (int i = 0; i < 16; i++) {
        unsigned b;
        if (sscanf(t + used + 2 * i, "%2x", &b) != 1) {
            cl_set_error("the peer's GID is malformed: '%.80s'", t);
            return CL_ERR_INVALID;
        }
        e->gid[i] = (uint8_t)b;
    }
    e->lid = (uint16_t)lid, e->qpn = qpn, e->psn = psn, e->rkey = rkey;
    e->addr = addr, e->bytes = bytes;
    return CL_OK;
}

/* END SOLUTION */
cl_result lab13_exchange(lab13_conn *c, const char *host, int port, int server,
                         const lab13_endpoint *local, lab13_endpoint *remote)
{
    /* BEGIN SOLUTION */
    char mine[EP_TEXT] = {0}, theirs[EP_TEXT] = {0};
    CL_CHECK(tcp_connect(c, host, port, server));
    ep_to_text(local, mine);
    CL_CHECK(send_all(c->sock, mine, sizeof mine));
    CL_CHECK(recv_all(c->sock, theirs, sizeof theirs));
    theirs[EP_TEXT - 1] = '\0';
    return ep_from_text(theirs, remote);
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab13) 3: connect to the peer over TCP (the server listens on port, the client
    //                connects to host:port and tries again until the server is there),
    //                send *local, receive the peer's endpoint into *remote. Keep the socket.
    (void)c, (void)host, (void)port, (void)server, (void)local, (void)remote;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* --- 4. INIT -> RTR -> RTS -------------------------------------------------------------- */

cl_result lab13_rtr(lab13_conn *c, const lab13_endpoint *remote)
{
    /* BEGIN SOLUTION */
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_RTR,
        .path_mtu = c->port_attr.active_mtu,
        .dest_qp_num = remote->qpn,
        .rq_psn = remote->psn,
        .max_dest_rd_atomic = 1,
        .min_rnr_timer = 12, /* 0.64 ms */
        .ah_attr = {.dlid = remote->lid, .sl = 0, .src_path_bits = 0, .port_num = (uint8_t)c->port},
    };
    if (c->gid_index >= 0) { /* a GRH: RoCE always, InfiniBand across subnets */
        a.ah_attr.is_global = 1;
        a.ah_attr.grh.sgid_index = (uint8_t)c->gid_index;
        a.ah_attr.grh.hop_limit = 64;
        memcpy(a.ah_attr.grh.dgid.raw, remote->gid, 16);
    }
    int err = ibv_modify_qp(c->qp, &a,
                            IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    if (err) {
        cl_set_error("ibv_modify_qp INIT -> RTR: %s", strerror(err));
        return CL_ERR_BACKEND;
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab13) 4a: move the QP to RTR towards the peer: its address (LID, or GID with
    //                 a GRH), its QP number and first PSN, the path MTU your port allows,
    //                 and the responder's resources and RNR timer.
    (void)c, (void)remote;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab13_rts(lab13_conn *c)
{
    /* BEGIN SOLUTION */
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_RTS,
        .timeout = 14, /* 4.096 us * 2^14 = 67 ms before a retry */
        .retry_cnt = 7,
        .rnr_retry = 7, /* RNR: retry for ever */
        .sq_psn = c->psn,
        .max_rd_atomic = 1,
    };
    int err = ibv_modify_qp(c->qp, &a,
                            IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
    if (err) {
        cl_set_error("ibv_modify_qp RTR -> RTS: %s", strerror(err));
        return CL_ERR_BACKEND;
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab13) 4b: move the QP to RTS: your first PSN and the requester's timers and
    //                 retry counts.
    (void)c;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* --- 5. RDMA WRITE, keeping depth in flight ---------------------------------------------- */

/* BEGIN SOLUTION */
static cl_result bad_completion(const struct ibv_wc *wc, const char *what)
{
    cl_set_error("%s completion %llu failed: %s (status %d, vendor error %#x)", what,
                 (unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status), wc->status,
                 wc->vendor_err);
    return CL_ERR_BACKEND;
}

/* END SOLUTION */
cl_result lab13_write(lab13_conn *c, const lab13_endpoint *remote, size_t offset, size_t total,
                      size_t msg, int depth)
{
    /* BEGIN SOLUTION */
    if (!msg || total % msg || depth < 1 || depth > c->max_wr || offset + total > c->bytes) {
        cl_set_error("lab13_write: msg %zu, depth %d, [%zu, +%zu) do not fit", msg, depth, offset,
                     total);
        return CL_ERR_INVALID;
    }
    size_t n = total / msg, posted = 0, done = 0;
    struct ibv_wc wc[16];
    while (done < n) {
        while (posted < n && posted - done < (size_t)depth) {
            size_t at = offset + posted * msg;
            struct ibv_sge sge = {
                .addr = (uintptr_t)(c->buf + at), .length = (uint32_t)msg, .lkey = c->mr->lkey};
            struct ibv_send_wr wr = {
                .wr_id = posted,
                .sg_list = &sge,
                .num_sge = 1,
                .opcode = IBV_WR_RDMA_WRITE,
                .send_flags = IBV_SEND_SIGNALED,
                .wr.rdma = {.remote_addr = remote->addr + at, .rkey = remote->rkey}};
            struct ibv_send_wr *bad;
            int err = ibv_post_send(c->qp, &wr, &bad);
            if (err) {
                cl_set_error("ibv_post_send of WRITE %zu: %s", posted, strerror(err));
                return CL_ERR_BACKEND;
            }
            posted++;
        }
        int k = ibv_poll_cq(c->scq, 16, wc);
        if (k < 0) {
            cl_set_error("ibv_poll_cq failed (the CQ is in error)");
            return CL_ERR_BACKEND;
        }
        for (int i = 0; i < k; i++) {
            if (wc[i].status != IBV_WC_SUCCESS)
                return bad_completion(&wc[i], "RDMA WRITE");
            done++;
        }
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab13) 5: post RDMA WRITEs of msg bytes from your buffer at offset to the
    //                peer's at the same offset, never more than depth outstanding; poll the
    //                completions, check each one's status, until all have completed.
    (void)c, (void)remote, (void)offset, (void)total, (void)msg, (void)depth;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* --- 6. SEND/RECV ping-pong --------------------------------------------------------------- */

/* BEGIN SOLUTION */
static cl_result post_recv(lab13_conn *c, size_t off, size_t bytes)
{
    struct ibv_sge sge = {
        .addr = (uintptr_t)(c->buf + off), .length = (uint32_t)bytes, .lkey = c->mr->lkey};
    struct ibv_recv_wr wr = {.wr_id = off, .sg_list = &sge, .num_sge = 1}, *bad;
    int err = ibv_post_recv(c->qp, &wr, &bad);
    if (err) {
        cl_set_error("ibv_post_recv: %s", strerror(err));
        return CL_ERR_BACKEND;
    }
    return CL_OK;
}

static cl_result post_send(lab13_conn *c, size_t off, size_t bytes, int signaled)
{
    struct ibv_sge sge = {
        .addr = (uintptr_t)(c->buf + off), .length = (uint32_t)bytes, .lkey = c->mr->lkey};
    struct ibv_send_wr wr = {.wr_id = off, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND},
                       *bad;
    wr.send_flags =
        (bytes <= INLINE_BYTES ? IBV_SEND_INLINE : 0) | (signaled ? IBV_SEND_SIGNALED : 0);
    int err = ibv_post_send(c->qp, &wr, &bad);
    if (err) {
        cl_set_error("ibv_post_send of a SEND: %s", strerror(err));
        return CL_ERR_BACKEND;
    }
    return CL_OK;
}

/* Spin on cq until one completion arrives; it must have succeeded. */
static cl_result wait_one(struct ibv_cq *cq, const char *what)
{
    struct ibv_wc wc;
    int k;
    while ((k = ibv_poll_cq(cq, 1, &wc)) == 0)
        ;
    if (k < 0) {
        cl_set_error("ibv_poll_cq failed (the CQ is in error)");
        return CL_ERR_BACKEND;
    }
    return wc.status == IBV_WC_SUCCESS ? CL_OK : bad_completion(&wc, what);
}

/* Both sides have their first receive posted when this returns. */
static cl_result sync_peer(lab13_conn *c)
{
    char b = 's';
    CL_CHECK(send_all(c->sock, &b, 1));
    return recv_all(c->sock, &b, 1);
}

/* END SOLUTION */
cl_result lab13_pingpong(lab13_conn *c, int server, size_t send_off, size_t recv_off, size_t bytes,
                         int iters)
{
    /* BEGIN SOLUTION */
    /* Sends are signaled one in `every`: the others retire with it, and nobody waits for a
     * send completion inside the loop (ib_send_lat does the same). */
    const int every = c->max_wr / 2 < 32 ? (c->max_wr / 2 > 0 ? c->max_wr / 2 : 1) : 32;
    CL_CHECK(post_recv(c, recv_off, bytes));
    CL_CHECK(sync_peer(c));
    for (int i = 0; i < iters; i++) {
        /* the last is signaled too: the next call starts with an empty send queue */
        int signaled = i % every == every - 1 || i + 1 == iters;
        int more = i + 1 < iters; /* none left posted at the end */
        if (server) {
            CL_CHECK(wait_one(c->rcq, "RECV"));
            if (more)
                CL_CHECK(post_recv(c, recv_off, bytes));
            CL_CHECK(post_send(c, send_off, bytes, signaled));
        } else {
            CL_CHECK(post_send(c, send_off, bytes, signaled));
            CL_CHECK(wait_one(c->rcq, "RECV"));
            if (more)
                CL_CHECK(post_recv(c, recv_off, bytes));
        }
        if (signaled) /* its answer came back, so it has completed by now */
            CL_CHECK(wait_one(c->scq, "SEND"));
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab13) 6: the ping-pong: post your receive before the peer can send (and make
    //                sure it has), then iters times: the client sends and waits for the
    //                answer, the server waits and answers. Keep a receive posted ahead of
    //                each message and do not wait for send completions inside the loop.
    (void)c, (void)server, (void)send_off, (void)recv_off, (void)bytes, (void)iters;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* --- 7. tear down -------------------------------------------------------------------------- */

cl_result lab13_close(lab13_conn *c)
{
    /* BEGIN SOLUTION */
    if (!c)
        return CL_OK;
    cl_result rc = CL_OK;
    int err = 0;
    /* The reverse of creation: what uses an object goes before it. */
    if (c->qp && (err = ibv_destroy_qp(c->qp)) != 0)
        cl_set_error("ibv_destroy_qp: %s", strerror(err)), rc = CL_ERR_BACKEND;
    if (c->scq && (err = ibv_destroy_cq(c->scq)) != 0)
        cl_set_error("ibv_destroy_cq: %s", strerror(err)), rc = CL_ERR_BACKEND;
    if (c->rcq && (err = ibv_destroy_cq(c->rcq)) != 0)
        cl_set_error("ibv_destroy_cq: %s", strerror(err)), rc = CL_ERR_BACKEND;
    if (c->mr && (err = ibv_dereg_mr(c->mr)) != 0)
        cl_set_error("ibv_dereg_mr: %s", strerror(err)), rc = CL_ERR_BACKEND;
    if (c->pd && (err = ibv_dealloc_pd(c->pd)) != 0)
        cl_set_error("ibv_dealloc_pd: %s", strerror(err)), rc = CL_ERR_BACKEND;
    if (c->ctx && ibv_close_device(c->ctx) != 0)
        cl_set_error("ibv_close_device: %s", strerror(errno)), rc = CL_ERR_BACKEND;
    if (c->sock >= 0)
        close(c->sock);
    free(c);
    return rc;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab13) 7: destroy what lab13_open created, in an order the HCA accepts, close
    //                the device and the socket, free c.
    (void)c;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* --- 8. your decision ---------------------------------------------------------------------- */

const lab13_plan lab13_write_plan = {
    /* BEGIN SOLUTION */
    .msg_bytes = 8192,
    .depth = 6,
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab13) 8: the message size and depth you chose from `./lab13 sweep` (README 8).
    .msg_bytes = 0,
    .depth = 0,
    END SKELETON */
};
