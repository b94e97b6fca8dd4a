/* session.c: lab 13's harness side (see session.h). */
#define _GNU_SOURCE
#include "session.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int is_emu(const cl_run *run) { return strcmp(cl_opt(run, "verbs"), "nic") != 0; }

/* --- what the ranks' harnesses share (never the student's program) ----------------------- */

l13_state L13;

/* --- setting up a run ------------------------------------------------------------------- */

cl_result l13_setup(cl_run *run, cl_comm *c)
{
    int rank = cl_comm_rank(c), n = cl_comm_size(c);
    if (n != 2) {
        cl_set_error("lab 13 runs on exactly 2 ranks (a client and a server), not %d", n);
        return CL_ERR_INVALID;
    }
    if (strcmp(cl_comm_backend(c), "cpu") != 0) {
        cl_set_error("lab 13 runs on the cpu backend (two processes): --backend cpu");
        return CL_ERR_INVALID;
    }
    memset(&L13, 0, sizeof L13);
    L13.emu = is_emu(run);
    const char *link = cl_opt(run, "link");
    if (strcmp(link, "ib") && strcmp(link, "roce")) {
        cl_set_error("--link wants ib or roce, not '%s'", link);
        return CL_ERR_INVALID;
    }
    L13.link = strcmp(link, "roce") == 0 ? HCA_LINK_ROCE : HCA_LINK_IB;
    void *region;
    CL_CHECK(cl_shared_region(c, PER_RANK * (size_t)n, &region));
    L13.host = (char *)region + PER_RANK * (size_t)rank;
    size_t bytes = sizeof(l13_board) + (L13.emu ? hca_fabric_bytes() : 0);
    bytes = (bytes + 4095) & ~(size_t)4095;
    CL_CHECK(cl_shm_open_comm(&L13.shm, c, "lab13", bytes));
    L13.bd = L13.shm.base;
    if (L13.emu) {
        void *mem = (char *)L13.shm.base + ((sizeof(l13_board) + 63) & ~(size_t)63);
        if (rank == 0) {
            hca_fabric *f = hca_fabric_init(mem, L13.link, n, 1, 0);
            for (int r = 0; r < n; r++)
                hca_node_memory(f, r, (uintptr_t)region + PER_RANK * (size_t)r, PER_RANK);
        }
        CL_CHECK(cl_barrier(c));
        L13.fabric = mem;
    }
    const char *dev = cl_opt(run, "device");
    snprintf(L13.cfg.device, sizeof L13.cfg.device, "%s", L13.emu ? "emu_0" : dev ? dev : "");
    L13.cfg.port = 1;
    CL_CHECK(cl_opt_int(run, "gid-index", -1, 255, &L13.cfg.gid_index));
    L13.cfg.max_wr = MAX_WR;
    L13.cfg.max_recv = MAX_RECV;
    cl_report_str(run, "provider", L13.emu ? "emulated (a model, not a measurement)" : "rdma-core");
    if (L13.emu) {
        const hca_model *m = hca_fabric_model(L13.fabric);
        cl_report_str(run, "link", m->name);
        cl_report_num(run, "link_GBps", m->wire_Bps / 1e9);
    }
    return cl_barrier(c);
}

void l13_teardown(void)
{
    cl_shm_detach(&L13.shm);
    L13.fabric = NULL;
}

/* A TCP port for the exchange, free now on the server's machine (rank 1 picks it). */
static cl_result l13_pick_port(cl_comm *c, int *port)
{
    int64_t v[1] = {0};
    if (cl_comm_rank(c) == 1) {
        int s = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
        socklen_t len = sizeof a;
        if (s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0 &&
            getsockname(s, (struct sockaddr *)&a, &len) == 0)
            v[0] = ntohs(a.sin_port);
        if (s >= 0)
            close(s);
    }
    CL_CHECK(cl_agree(c, CL_SUM, v, 1));
    if (!v[0]) {
        cl_set_error("cannot find a free TCP port for the exchange");
        return CL_ERR_IO;
    }
    *port = (int)v[0];
    return CL_OK;
}

/* --- the harness's checks of each step (emulated provider) -------------------------------- */

int l13_fail(l13_report *r, const char *fmt, ...)
{
    if (r->failed)
        return 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof r->why, fmt, ap);
    va_end(ap);
    r->failed = 1;
    return 0;
}

static int same_ep(const lab13_endpoint *a, const lab13_endpoint *b)
{
    return a->qpn == b->qpn && a->psn == b->psn && a->lid == b->lid && a->rkey == b->rkey &&
           a->addr == b->addr && a->bytes == b->bytes && !memcmp(a->gid, b->gid, 16);
}

static void hex_gid(const uint8_t *g, char *out)
{
    for (int i = 0; i < 16; i++)
        sprintf(out + 2 * i + i / 2, i % 2 ? "%02x:" : "%02x", g[i]);
    out[39] = '\0';
}

static const char *state_name(int s)
{
    static const char *const n[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};
    return s >= 0 && s <= 6 ? n[s] : "?";
}

static void check_open(int rank, l13_report *r)
{
    hca_qp_view v;
    if (hca_qp_view_get(L13.fabric, rank, L13.local.qpn, &v) != 0) {
        l13_fail(r, "the endpoint's qpn %#x is not a QP your program created on this node",
                 L13.local.qpn);
        return;
    }
    if (v.state != 0)
        l13_fail(r, "after lab13_open the QP should be in RESET, it is in %s", state_name(v.state));
    if (v.attr.max_send_wr < (uint32_t)L13.cfg.max_wr ||
        v.attr.max_recv_wr < (uint32_t)L13.cfg.max_recv)
        l13_fail(r, "the QP holds %u send and %u receive WRs; cfg asks for %d and %d",
                 v.attr.max_send_wr, v.attr.max_recv_wr, L13.cfg.max_wr, L13.cfg.max_recv);
    if (!v.mr_rkey || v.mr_addr > (uint64_t)(uintptr_t)L13.host ||
        v.mr_addr + v.mr_len < (uint64_t)(uintptr_t)L13.host + PER_RANK)
        l13_fail(r, "no MR of the QP's PD covers the whole buffer with IBV_ACCESS_REMOTE_WRITE");
    else if (L13.local.rkey != v.mr_rkey)
        l13_fail(r, "endpoint rkey %#x is not the MR's rkey %#x", L13.local.rkey, v.mr_rkey);
    if (L13.local.addr != (uint64_t)(uintptr_t)L13.host || L13.local.bytes != PER_RANK)
        l13_fail(r, "endpoint addr/bytes %#llx/%llu are not the buffer's %p/%zu",
                 (unsigned long long)L13.local.addr, (unsigned long long)L13.local.bytes,
                 (void *)L13.host, PER_RANK);
    if (L13.local.lid != hca_port_lid(L13.fabric, rank))
        l13_fail(r, "endpoint lid %u is not the port's LID %d", L13.local.lid,
                 hca_port_lid(L13.fabric, rank));
    if (L13.local.psn > 0xffffff)
        l13_fail(r, "endpoint psn %#x has more than 24 bits", L13.local.psn);
    int gi = L13.cfg.gid_index >= 0      ? L13.cfg.gid_index
             : L13.link == HCA_LINK_ROCE ? hca_roce_v2_ipv4_index(L13.fabric, rank)
                                         : -1;
    emu_gid g;
    if (gi >= 0 && hca_port_gid(L13.fabric, rank, gi, &g) >= 0 &&
        memcmp(g.raw, L13.local.gid, 16)) {
        char want[48], got[48];
        hex_gid(g.raw, want), hex_gid(L13.local.gid, got);
        l13_fail(r, "endpoint gid %s is not the port's GID %d (%s)%s", got, gi, want,
                 L13.cfg.gid_index < 0 ? ", the RoCE v2 one with the IPv4 address" : "");
    }
}

static void check_state(int rank, l13_report *r, int want, const lab13_endpoint *peer)
{
    hca_qp_view v;
    if (hca_qp_view_get(L13.fabric, rank, L13.local.qpn, &v) != 0) {
        l13_fail(r, "the QP %#x is gone", L13.local.qpn);
        return;
    }
    if (v.state != want) {
        l13_fail(r, "the QP is in %s, not %s", state_name(v.state), state_name(want));
        return;
    }
    const emu_qp_attr *a = &v.attr;
    if (want == 1) { /* INIT */
        if (!(a->qp_access_flags & 2 /* IBV_ACCESS_REMOTE_WRITE */))
            l13_fail(r, "qp_access_flags lacks IBV_ACCESS_REMOTE_WRITE: the peer's WRITEs "
                        "to this QP would fail (remote access error)");
        return;
    }
    if (want == 2) { /* RTR */
        if (a->dest_qp_num != peer->qpn)
            l13_fail(r, "dest_qp_num %#x is not the peer's QP %#x", a->dest_qp_num, peer->qpn);
        if (a->rq_psn != peer->psn)
            l13_fail(r, "rq_psn %#x is not the peer's first PSN %#x", a->rq_psn, peer->psn);
        if (a->path_mtu > hca_port_active_mtu(L13.fabric, rank))
            l13_fail(r,
                     "path_mtu %d is above the port's active_mtu %d: larger packets are "
                     "dropped",
                     a->path_mtu, hca_port_active_mtu(L13.fabric, rank));
        if (L13.link == HCA_LINK_IB && a->ah.dlid != peer->lid)
            l13_fail(r, "ah_attr.dlid %u is not the peer's LID %u", a->ah.dlid, peer->lid);
        if (L13.link == HCA_LINK_ROCE) {
            int v2 = hca_roce_v2_ipv4_index(L13.fabric, rank);
            if (!a->ah.is_global || memcmp(a->ah.dgid.raw, peer->gid, 16))
                l13_fail(r, "the address is not the peer's GID (ah_attr.is_global, grh.dgid)");
            else if (a->ah.sgid_index != v2)
                l13_fail(r, "grh.sgid_index %u is not the port's RoCE v2 IPv4 GID %d",
                         a->ah.sgid_index, v2);
        }
        return;
    }
    if (want == 3 && a->sq_psn != L13.local.psn) /* RTS */
        l13_fail(r, "sq_psn %#x is not the psn %#x your endpoint told the peer", a->sq_psn,
                 L13.local.psn);
}

static void check_closed(int rank, l13_report *r)
{
    hca_objects o;
    hca_objects_get(L13.fabric, rank, &o);
    if (o.ctx || o.pd || o.mr || o.cq || o.qp)
        l13_fail(r,
                 "still alive after lab13_close: %d context(s), %d PD(s), %d MR(s), %d "
                 "CQ(s), %d QP(s)",
                 o.ctx, o.pd, o.mr, o.cq, o.qp);
    else if (o.implicit)
        l13_fail(r,
                 "%d object(s) were freed only by closing the device: destroy each one "
                 "(QP, CQ, MR, PD) before ibv_close_device",
                 o.implicit);
}

/* --- calling the student ----------------------------------------------------------------- */

static void call_failed(l13_report *r, const char *fn, const cl_call_result *res)
{
    r->status = res->status;
    snprintf(r->why, sizeof r->why, "%s: %s%s%s", fn, cl_result_str(res->status),
             res->error[0] ? ": " : "", res->error);
}

/* Run entry on this rank with the harness's clock or the model's around it. */
cl_result l13_call(cl_comm *c, const char *entry, void *args, size_t bytes, cl_call_result *res,
                   double *seconds, hca_counters *ctr)
{
    int rank = cl_comm_rank(c);
    double t0 = 0;
    if (L13.emu) {
        hca_counters_reset(L13.fabric, rank);
        t0 = hca_clock(L13.fabric, rank);
    }
    CL_CHECK(cl_student_run(c, entry, args, bytes, CL_ALLOW_LAB, res));
    hca_counters k;
    memset(&k, 0, sizeof k);
    double t = res->seconds;
    if (L13.emu) {
        hca_counters_get(L13.fabric, rank, &k);
        double t1 = hca_clock(L13.fabric, rank);
        if (k.last_completion > t1)
            t1 = k.last_completion; /* completions it did not wait for still count */
        t = t1 - t0;
    }
    if (seconds)
        *seconds = t;
    if (ctr)
        *ctr = k;
    return CL_OK;
}

/* Both ranks start a timed call together (and the model's clocks agree). */
cl_result l13_together(cl_comm *c)
{
    CL_CHECK(cl_barrier(c));
    if (L13.emu && cl_comm_rank(c) == 0)
        hca_align_clocks(L13.fabric);
    return cl_barrier(c);
}

/* --- the steps of a connection, each reported -------------------------------------------- */

/* After a step on both ranks: the row (rank 0) and whether to go on. */
cl_result l13_end_step(l13_steps *s, const char *name, l13_report *mine)
{
    int rank = cl_comm_rank(s->c);
    L13.bd->rep[rank] = *mine;
    CL_CHECK(cl_barrier(s->c));
    int64_t bad[1] = {mine->status != CL_OK || mine->failed};
    CL_CHECK(cl_agree(s->c, CL_SUM, bad, 1));
    if (s->report) {
        cl_row *row = cl_row_begin(s->run, s->c);
        cl_col_str(row, "step", name);
        for (int r = 0; r < 2; r++) {
            const l13_report *p = &L13.bd->rep[r];
            char k[16];
            snprintf(k, sizeof k, "status%d", r);
            cl_col_str(row, k, p->status == CL_OK ? "ok" : cl_result_str(p->status));
            snprintf(k, sizeof k, "checks%d", r);
            cl_col_str(row, k,
                       p->status == CL_OK && !p->failed ? "ok"
                       : p->failed                      ? "failed"
                                                        : "-");
            snprintf(k, sizeof k, "why%d", r);
            cl_col_str(row, k, p->why);
        }
        cl_row_end(row);
    }
    CL_CHECK(cl_barrier(s->c)); /* the board is read before the next step writes it */
    if (bad[0])
        s->failed = 1;
    return CL_OK;
}

void l13_not_run(l13_steps *s, const char *name)
{
    cl_row *row = cl_row_begin(s->run, s->c);
    if (!row)
        return;
    cl_col_str(row, "step", name);
    for (int r = 0; r < 2; r++) {
        char k[16];
        snprintf(k, sizeof k, "status%d", r);
        cl_col_str(row, k, "not run");
        snprintf(k, sizeof k, "checks%d", r);
        cl_col_str(row, k, "-");
        snprintf(k, sizeof k, "why%d", r);
        cl_col_str(row, k, "an earlier step failed");
    }
    cl_row_end(row);
}

static cl_result step_open(l13_steps *s)
{
    int rank = cl_comm_rank(s->c);
    l13_report r = {0};
    open_args a = {.cfg = L13.cfg, .buf = L13.host, .bytes = PER_RANK};
    cl_call_result res;
    CL_CHECK(l13_call(s->c, "open", &a, sizeof a, &res, NULL, NULL));
    if (res.status != CL_OK)
        call_failed(&r, "lab13_open", &res);
    else if (!a.conn)
        l13_fail(&r, "lab13_open succeeded but gave no connection (*out)");
    L13.conn = a.conn;
    L13.local = a.local;
    r.ep = a.local;
    if (r.status == CL_OK && !r.failed && L13.emu)
        check_open(rank, &r);
    return l13_end_step(s, "open", &r);
}

static cl_result step_conn(l13_steps *s, const char *entry, const char *fn, int state)
{
    l13_report r = {0};
    conn_args a = {.conn = L13.conn};
    cl_call_result res;
    CL_CHECK(l13_call(s->c, entry, &a, sizeof a, &res, NULL, NULL));
    if (res.status != CL_OK)
        call_failed(&r, fn, &res);
    else if (L13.emu && state >= 0)
        check_state(cl_comm_rank(s->c), &r, state, &L13.remote);
    return l13_end_step(s, entry, &r);
}

static cl_result step_exchange(l13_steps *s)
{
    int rank = cl_comm_rank(s->c);
    l13_report r = {0};
    /* Each rank's true endpoint, from the open step, through the board. */
    L13.bd->rep[rank].ep = L13.local;
    CL_CHECK(cl_barrier(s->c));
    lab13_endpoint peer = L13.bd->rep[1 - rank].ep;
    CL_CHECK(cl_barrier(s->c));
    exchange_args a = {.conn = L13.conn, .server = rank == 1, .local = L13.local};
    snprintf(a.host, sizeof a.host, "%s", cl_opt(s->run, "oob-host"));
    CL_CHECK(l13_pick_port(s->c, &a.port));
    cl_call_result res;
    CL_CHECK(l13_call(s->c, "exchange", &a, sizeof a, &res, NULL, NULL));
    L13.remote = a.remote;
    if (res.status != CL_OK)
        call_failed(&r, "lab13_exchange", &res);
    else if (!same_ep(&a.remote, &peer))
        l13_fail(&r,
                 "the endpoint received (qpn %#x psn %#x lid %u rkey %#x) is not the "
                 "peer's (qpn %#x psn %#x lid %u rkey %#x), or its gid/addr/bytes differ",
                 a.remote.qpn, a.remote.psn, a.remote.lid, a.remote.rkey, peer.qpn, peer.psn,
                 peer.lid, peer.rkey);
    return l13_end_step(s, "exchange", &r);
}

static cl_result step_rtr(l13_steps *s)
{
    l13_report r = {0};
    rtr_args a = {.conn = L13.conn, .remote = L13.remote};
    cl_call_result res;
    CL_CHECK(l13_call(s->c, "rtr", &a, sizeof a, &res, NULL, NULL));
    if (res.status != CL_OK)
        call_failed(&r, "lab13_rtr", &res);
    else if (L13.emu)
        check_state(cl_comm_rank(s->c), &r, 2, &L13.remote);
    return l13_end_step(s, "rtr", &r);
}

/* open, init, exchange, rtr, rts: the connection every mode starts from. */
cl_result l13_connect_all(l13_steps *s)
{
    cl_result (*const fns[])(l13_steps *) = {step_open, NULL, step_exchange, step_rtr, NULL};
    const char *names[] = {"open", "init", "exchange", "rtr", "rts"};
    for (int i = 0; i < 5; i++) {
        if (s->failed) {
            l13_not_run(s, names[i]);
            continue;
        }
        if (fns[i])
            CL_CHECK(fns[i](s));
        else if (i == 1)
            CL_CHECK(step_conn(s, "init", "lab13_init", 1));
        else
            CL_CHECK(step_conn(s, "rts", "lab13_rts", 3));
    }
    return CL_OK;
}

cl_result l13_step_close(l13_steps *s)
{
    l13_report r = {0};
    if (!L13.conn) { /* lab13_open made nothing to close */
        l13_fail(&r, "not run: lab13_open gave no connection");
        return l13_end_step(s, "close", &r);
    }
    conn_args a = {.conn = L13.conn};
    cl_call_result res;
    CL_CHECK(l13_call(s->c, "close", &a, sizeof a, &res, NULL, NULL));
    if (res.status != CL_OK)
        call_failed(&r, "lab13_close", &res);
    else if (L13.emu)
        check_closed(cl_comm_rank(s->c), &r);
    return l13_end_step(s, "close", &r);
}

/* Modes other than connect need the connection: a failed step ends them, with its reason. */
cl_result l13_connected(cl_run *run, cl_comm *c)
{
    l13_steps s = {.run = run, .c = c};
    CL_CHECK(l13_connect_all(&s));
    if (!s.failed)
        return CL_OK;
    for (int r = 0; r < 2; r++)
        if (L13.bd->rep[r].why[0]) {
            cl_set_error("rank %d could not connect: %s", r, L13.bd->rep[r].why);
            return CL_ERR_INVALID;
        }
    cl_set_error("the connection failed");
    return CL_ERR_INVALID;
}

cl_result l13_close(cl_run *run, cl_comm *c)
{
    l13_steps s = {.run = run, .c = c};
    CL_CHECK(l13_step_close(&s));
    if (s.failed) {
        for (int r = 0; r < 2; r++)
            if (L13.bd->rep[r].why[0]) {
                cl_set_error("rank %d: %s", r, L13.bd->rep[r].why);
                return CL_ERR_INVALID;
            }
    }
    return CL_OK;
}

/* --- one checked RDMA WRITE of fresh data ---------------------------------------------------- */

/* Rank 0 writes [offset, offset + total) to rank 1 with (msg, depth); rank 1 checks it.
 * remote: what rank 0 passes (a copy of the true endpoint, or a damaged one). */
cl_result l13_write(cl_run *run, cl_comm *c, size_t offset, size_t total, size_t msg, int depth,
                    const lab13_endpoint *remote, l13_write_result *w)
{
    int rank = cl_comm_rank(c);
    uint64_t seed;
    memset(w, 0, sizeof *w);
    CL_CHECK(cl_fresh_seed(run, c, &seed));
    if (rank == 0)
        CL_CHECK(cl_fill_bytes(c, L13.host + offset, total, seed, 0, offset));
    else
        memset(L13.host + offset, 0xab, total);
    CL_CHECK(l13_together(c));
    if (rank == 0) {
        write_args a = {.conn = L13.conn,
                        .remote = *remote,
                        .offset = offset,
                        .total = total,
                        .msg = msg,
                        .depth = depth};
        cl_call_result res;
        hca_counters k;
        CL_CHECK(l13_call(c, "write", &a, sizeof a, &res, &w->seconds, &k));
        w->status = res.status;
        if (res.status != CL_OK)
            snprintf(w->why, sizeof w->why, "%s: %s", cl_result_str(res.status), res.error);
        w->writes = k.writes, w->write_bytes = k.write_bytes, w->min_len = k.min_len;
        w->max_len = k.max_len, w->errors = k.errors, w->max_outstanding = k.max_outstanding;
    }
    CL_CHECK(cl_barrier(c));
    size_t wrong = 0;
    if (rank == 1)
        CL_CHECK(cl_count_wrong_bytes(c, L13.host + offset, total, seed, 0, offset, &wrong));
    int64_t v[1] = {(int64_t)wrong};
    CL_CHECK(cl_agree(c, CL_SUM, v, 1));
    w->wrong = v[0];
    return CL_OK;
}

void l13_write_row(cl_run *run, cl_comm *c, const char *name, size_t offset, size_t total,
                   size_t msg, int depth, const l13_write_result *w)
{
    cl_row *row = cl_row_begin(run, c);
    cl_col_str(row, "case", name);
    cl_col_int(row, "offset", (long long)offset);
    cl_col_int(row, "total", (long long)total);
    cl_col_int(row, "msg", (long long)msg);
    cl_col_int(row, "depth", depth);
    cl_col_str(row, "status", w->status == CL_OK ? "ok" : cl_result_str(w->status));
    cl_col_str(row, "why", w->why);
    cl_col_int(row, "wrong_bytes", w->wrong);
    if (L13.emu) {
        cl_col_int(row, "writes", w->writes);
        cl_col_int(row, "write_bytes", w->write_bytes);
        cl_col_int(row, "min_len", w->min_len);
        cl_col_int(row, "max_len", w->max_len);
        cl_col_int(row, "max_outstanding", w->max_outstanding);
        cl_col_int(row, "errors", w->errors);
    }
    cl_col_num(row, "seconds", w->seconds, "%.6g");
    cl_col_num(row, "gbps", w->seconds > 0 && w->status == CL_OK ? total / w->seconds / 1e9 : 0,
               "%.3f");
    cl_row_end(row);
}
