/* driver.c: lab 13's plug-in: a connected RC queue pair, RDMA WRITE bandwidth, SEND/RECV
 * latency, and the message size and depth that fill the link.
 *
 *   lab13 connect [--link ib|roce]   every step, each checked (2 ranks)
 *   lab13 write                      RDMA WRITEs of fresh data, checked byte for byte
 *   lab13 lat                        ping-pong of fresh data both ways, one-way latency
 *   lab13 bw [--bytes 4K] [--depth 16]   your WRITE loop against the harness's
 *   lab13 plan                       your lab13_write_plan: bandwidth, bytes in flight
 *   lab13 sweep                      your WRITE loop over sizes and depths (ib_write_bw -a)
 *   any mode --verbs nic [--device mlx5_0]   on the machine's RDMA NIC instead
 *
 * Rank 0 is the client, rank 1 the server, as perftest's. With --verbs emu (the default)
 * the student's program runs on the emulated provider (emu/): its verbs reach the emulated
 * HCA in this harness, which checks them as an adapter does, keeps the modelled time and
 * says what each QP, MR and CQ really is; the harness reads that to check each step. With
 * --verbs nic the program runs on rdma-core and the NIC; times are the harness's clock.
 * Either way the data the student's code moves are fresh bytes the harness wrote and checks.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu/verbs_msg.h"
#include "harness/harness.h"
#include "lab13.h"

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct open_args {
    lab13_config cfg;
    void *buf;
    size_t bytes;
    lab13_conn *conn;     /* out */
    lab13_endpoint local; /* out */
} open_args;

typedef struct conn_args {
    lab13_conn *conn;
} conn_args;

typedef struct exchange_args {
    lab13_conn *conn;
    char host[64];
    int port, server;
    lab13_endpoint local, remote; /* remote: out */
} exchange_args;

typedef struct rtr_args {
    lab13_conn *conn;
    lab13_endpoint remote;
} rtr_args;

typedef struct write_args {
    lab13_conn *conn;
    lab13_endpoint remote;
    size_t offset, total, msg;
    int depth;
} write_args;

typedef struct pingpong_args {
    lab13_conn *conn;
    int server;
    size_t send_off, recv_off, bytes;
    int iters;
} pingpong_args;

typedef struct plan_args {
    lab13_plan plan; /* out */
} plan_args;

#ifdef CL_STUDENT_SIDE

/* The rank whose function runs now: the emulated provider's requests go to its harness. */
static cl_comm *verbs_comm;

/* Called by the emulated libibverbs.so.1 (exported from this program, see lab.mk). */
int commlab_verbs_call(void *msg, unsigned long bytes);
int commlab_verbs_call(void *msg, unsigned long bytes)
{
    return verbs_comm && cl_lab_call(verbs_comm, EMU_CALL_CODE, msg, bytes) == CL_OK ? 0 : -1;
}

#define WITH_VERBS(c, call)                                                                        \
    do {                                                                                           \
        verbs_comm = (c);                                                                          \
        cl_result rc_ = (call);                                                                    \
        verbs_comm = NULL;                                                                         \
        return rc_;                                                                                \
    } while (0)

static cl_result e_open(cl_comm *c, void *args)
{
    open_args *a = args;
    WITH_VERBS(c, lab13_open(&a->cfg, a->buf, a->bytes, &a->conn, &a->local));
}
static cl_result e_init(cl_comm *c, void *args)
{
    WITH_VERBS(c, lab13_init(((conn_args *)args)->conn));
}
static cl_result e_exchange(cl_comm *c, void *args)
{
    exchange_args *a = args;
    a->host[sizeof a->host - 1] = '\0';
    WITH_VERBS(c, lab13_exchange(a->conn, a->host, a->port, a->server, &a->local, &a->remote));
}
static cl_result e_rtr(cl_comm *c, void *args)
{
    rtr_args *a = args;
    WITH_VERBS(c, lab13_rtr(a->conn, &a->remote));
}
static cl_result e_rts(cl_comm *c, void *args)
{
    WITH_VERBS(c, lab13_rts(((conn_args *)args)->conn));
}
static cl_result e_write(cl_comm *c, void *args)
{
    write_args *a = args;
    WITH_VERBS(c, lab13_write(a->conn, &a->remote, a->offset, a->total, a->msg, a->depth));
}
static cl_result e_pingpong(cl_comm *c, void *args)
{
    pingpong_args *a = args;
    WITH_VERBS(c, lab13_pingpong(a->conn, a->server, a->send_off, a->recv_off, a->bytes, a->iters));
}
static cl_result e_close(cl_comm *c, void *args)
{
    WITH_VERBS(c, lab13_close(((conn_args *)args)->conn));
}
static cl_result e_plan(cl_comm *c, void *args)
{
    (void)c;
    ((plan_args *)args)->plan = lab13_write_plan;
    return CL_OK;
}

CL_STUDENT_ENTRIES({"open", e_open}, {"init", e_init}, {"exchange", e_exchange}, {"rtr", e_rtr},
                   {"rts", e_rts}, {"write", e_write}, {"pingpong", e_pingpong}, {"close", e_close},
                   {"plan", e_plan});

#else

#include "emu/hca.h"
#include "emu/ref.h"
#include "shm.h"

#define MAX_WR     128 /* cfg.max_wr: the deepest any mode asks for */
#define MAX_RECV   16
#define PER_RANK   ((size_t)24 << 20) /* each node's host memory */
#define PLAN_TOTAL ((size_t)8 << 20)
#define PLAN_SHARE 0.90 /* of the link */
#define PLAN_SLACK 2.0  /* bytes in flight, times the fewest that reach it */

/* --- what the ranks' harnesses share (never the student's program) ----------------------- */

typedef struct step_report {
    int status;        /* the student's function's cl_result */
    int failed;        /* 1: the harness's checks of the step failed */
    char why[480];     /* the function's error, or the check that failed */
    lab13_endpoint ep; /* open: the local endpoint; exchange: the remote received */
    long long vals[16];
} step_report;

typedef struct board {
    step_report rep[2];
} board;

typedef struct lab_state {
    int emu;            /* the emulated provider (else a NIC) */
    int link;           /* HCA_LINK_* (emu) */
    hca_fabric *fabric; /* emu */
    cl_shm shm;         /* the board, then the fabric */
    board *bd;
    char *host; /* this node's host memory (in the ranks' shared region) */
    lab13_conn *conn;
    lab13_endpoint local, remote;
    lab13_config cfg;
} lab_state;

static lab_state S;

static int is_emu(const cl_run *run) { return strcmp(cl_opt(run, "verbs"), "nic") != 0; }

/* --- the student's program: which libibverbs -------------------------------------------- */

static cl_result student_setup(cl_run *run, cl_student_opts *o)
{
    static char env[600];
    const char *v = cl_opt(run, "verbs");
    if (strcmp(v, "emu") == 0) {
        char self[480], dir[520];
        ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
        if (k <= 0) {
            cl_set_error("cannot find this program's folder (readlink /proc/self/exe: %s)",
                         strerror(errno));
            return CL_ERR_IO;
        }
        self[k] = '\0';
        *strrchr(self, '/') = '\0';
        snprintf(dir, sizeof dir, "%s/verbs-emu", self);
        char lib[560];
        snprintf(lib, sizeof lib, "%s/libibverbs.so.1", dir);
        if (access(lib, R_OK) != 0) {
            cl_set_error("the emulated verbs provider %s is missing (make lab13 builds it)", lib);
            return CL_ERR_IO;
        }
        snprintf(env, sizeof env, "LD_LIBRARY_PATH=%s", dir);
        o->env[0] = env;
        return CL_OK;
    }
    if (strcmp(v, "nic") == 0) {
        DIR *d = opendir("/sys/class/infiniband");
        struct dirent *e;
        int n = 0;
        while (d && (e = readdir(d)))
            n += e->d_name[0] != '.';
        if (d)
            closedir(d);
        if (n == 0) {
            cl_set_error("no RDMA device here (/sys/class/infiniband is %s): --verbs nic needs "
                         "one; --verbs emu runs anywhere",
                         d ? "empty" : "missing");
            return CL_ERR_UNSUPPORTED;
        }
        o->permits |= CL_PERMIT_DEVICES;
        return CL_OK;
    }
    cl_set_error("--verbs wants emu or nic, not '%s'", v);
    return CL_ERR_INVALID;
}

/* The emulated HCA serves the requests of this rank's provider. */
static cl_result lab_op(cl_run *run, cl_comm *comm, int code, void *args, size_t bytes)
{
    (void)run;
    if (code != EMU_CALL_CODE || !S.fabric) {
        cl_set_error("no emulated HCA in this run (operation %d)", code);
        return CL_ERR_INVALID;
    }
    hca_call(S.fabric, cl_comm_rank(comm), args, bytes);
    return CL_OK;
}

/* --- setting up a run ------------------------------------------------------------------- */

static cl_result setup(cl_run *run, cl_comm *c)
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
    memset(&S, 0, sizeof S);
    S.emu = is_emu(run);
    const char *link = cl_opt(run, "link");
    if (strcmp(link, "ib") && strcmp(link, "roce")) {
        cl_set_error("--link wants ib or roce, not '%s'", link);
        return CL_ERR_INVALID;
    }
    S.link = strcmp(link, "roce") == 0 ? HCA_LINK_ROCE : HCA_LINK_IB;
    void *region;
    CL_CHECK(cl_shared_region(c, PER_RANK * (size_t)n, &region));
    S.host = (char *)region + PER_RANK * (size_t)rank;
    size_t bytes = sizeof(board) + (S.emu ? hca_fabric_bytes() : 0);
    bytes = (bytes + 4095) & ~(size_t)4095;
    CL_CHECK(cl_shm_open_comm(&S.shm, c, "lab13", bytes));
    S.bd = S.shm.base;
    if (S.emu) {
        void *mem = (char *)S.shm.base + ((sizeof(board) + 63) & ~(size_t)63);
        if (rank == 0) {
            hca_fabric *f = hca_fabric_init(mem, S.link, n, 1, 0);
            for (int r = 0; r < n; r++)
                hca_node_memory(f, r, (uintptr_t)region + PER_RANK * (size_t)r, PER_RANK);
        }
        CL_CHECK(cl_barrier(c));
        S.fabric = mem;
    }
    const char *dev = cl_opt(run, "device");
    snprintf(S.cfg.device, sizeof S.cfg.device, "%s", S.emu ? "emu_0" : dev ? dev : "");
    S.cfg.port = 1;
    S.cfg.gid_index = atoi(cl_opt(run, "gid-index"));
    S.cfg.max_wr = MAX_WR;
    S.cfg.max_recv = MAX_RECV;
    cl_report_str(run, "provider", S.emu ? "emulated (a model, not a measurement)" : "rdma-core");
    if (S.emu) {
        const hca_model *m = hca_fabric_model(S.fabric);
        cl_report_str(run, "link", m->name);
        cl_report_num(run, "link_GBps", m->wire_Bps / 1e9);
    }
    return cl_barrier(c);
}

static void teardown(void)
{
    cl_shm_detach(&S.shm);
    S.fabric = NULL;
}

/* A TCP port for the exchange, free now on the server's machine (rank 1 picks it). */
static cl_result pick_port(cl_comm *c, int *port)
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

static int fail_step(step_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail_step(step_report *r, const char *fmt, ...)
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

static void check_open(int rank, step_report *r)
{
    hca_qp_view v;
    if (hca_qp_view_get(S.fabric, rank, S.local.qpn, &v) != 0) {
        fail_step(r, "the endpoint's qpn %#x is not a QP your program created on this node",
                  S.local.qpn);
        return;
    }
    if (v.state != 0)
        fail_step(r, "after lab13_open the QP should be in RESET, it is in %s",
                  state_name(v.state));
    if (v.attr.max_send_wr < (uint32_t)S.cfg.max_wr ||
        v.attr.max_recv_wr < (uint32_t)S.cfg.max_recv)
        fail_step(r, "the QP holds %u send and %u receive WRs; cfg asks for %d and %d",
                  v.attr.max_send_wr, v.attr.max_recv_wr, S.cfg.max_wr, S.cfg.max_recv);
    if (!v.mr_rkey || v.mr_addr > (uint64_t)(uintptr_t)S.host ||
        v.mr_addr + v.mr_len < (uint64_t)(uintptr_t)S.host + PER_RANK)
        fail_step(r, "no MR of the QP's PD covers the whole buffer with IBV_ACCESS_REMOTE_WRITE");
    else if (S.local.rkey != v.mr_rkey)
        fail_step(r, "endpoint rkey %#x is not the MR's rkey %#x", S.local.rkey, v.mr_rkey);
    if (S.local.addr != (uint64_t)(uintptr_t)S.host || S.local.bytes != PER_RANK)
        fail_step(r, "endpoint addr/bytes %#llx/%llu are not the buffer's %p/%zu",
                  (unsigned long long)S.local.addr, (unsigned long long)S.local.bytes,
                  (void *)S.host, PER_RANK);
    if (S.local.lid != hca_port_lid(S.fabric, rank))
        fail_step(r, "endpoint lid %u is not the port's LID %d", S.local.lid,
                  hca_port_lid(S.fabric, rank));
    if (S.local.psn > 0xffffff)
        fail_step(r, "endpoint psn %#x has more than 24 bits", S.local.psn);
    int gi = S.cfg.gid_index >= 0      ? S.cfg.gid_index
             : S.link == HCA_LINK_ROCE ? hca_roce_v2_ipv4_index(S.fabric, rank)
                                       : -1;
    emu_gid g;
    if (gi >= 0 && hca_port_gid(S.fabric, rank, gi, &g) >= 0 && memcmp(g.raw, S.local.gid, 16)) {
        char want[48], got[48];
        hex_gid(g.raw, want), hex_gid(S.local.gid, got);
        fail_step(r, "endpoint gid %s is not the port's GID %d (%s)%s", got, gi, want,
                  S.cfg.gid_index < 0 ? ", the RoCE v2 one with the IPv4 address" : "");
    }
}

static void check_state(int rank, step_report *r, int want, const lab13_endpoint *peer)
{
    hca_qp_view v;
    if (hca_qp_view_get(S.fabric, rank, S.local.qpn, &v) != 0) {
        fail_step(r, "the QP %#x is gone", S.local.qpn);
        return;
    }
    if (v.state != want) {
        fail_step(r, "the QP is in %s, not %s", state_name(v.state), state_name(want));
        return;
    }
    const emu_qp_attr *a = &v.attr;
    if (want == 1) { /* INIT */
        if (!(a->qp_access_flags & 2 /* IBV_ACCESS_REMOTE_WRITE */))
            fail_step(r, "qp_access_flags lacks IBV_ACCESS_REMOTE_WRITE: the peer's WRITEs "
                         "to this QP would fail (remote access error)");
        return;
    }
    if (want == 2) { /* RTR */
        if (a->dest_qp_num != peer->qpn)
            fail_step(r, "dest_qp_num %#x is not the peer's QP %#x", a->dest_qp_num, peer->qpn);
        if (a->rq_psn != peer->psn)
            fail_step(r, "rq_psn %#x is not the peer's first PSN %#x", a->rq_psn, peer->psn);
        if (a->path_mtu > hca_port_active_mtu(S.fabric, rank))
            fail_step(r,
                      "path_mtu %d is above the port's active_mtu %d: larger packets are "
                      "dropped",
                      a->path_mtu, hca_port_active_mtu(S.fabric, rank));
        if (S.link == HCA_LINK_IB && a->ah.dlid != peer->lid)
            fail_step(r, "ah_attr.dlid %u is not the peer's LID %u", a->ah.dlid, peer->lid);
        if (S.link == HCA_LINK_ROCE) {
            int v2 = hca_roce_v2_ipv4_index(S.fabric, rank);
            if (!a->ah.is_global || memcmp(a->ah.dgid.raw, peer->gid, 16))
                fail_step(r, "the address is not the peer's GID (ah_attr.is_global, grh.dgid)");
            else if (a->ah.sgid_index != v2)
                fail_step(r, "grh.sgid_index %u is not the port's RoCE v2 IPv4 GID %d",
                          a->ah.sgid_index, v2);
        }
        return;
    }
    if (want == 3 && a->sq_psn != S.local.psn) /* RTS */
        fail_step(r, "sq_psn %#x is not the psn %#x your endpoint told the peer", a->sq_psn,
                  S.local.psn);
}

static void check_closed(int rank, step_report *r)
{
    hca_objects o;
    hca_objects_get(S.fabric, rank, &o);
    if (o.ctx || o.pd || o.mr || o.cq || o.qp)
        fail_step(r,
                  "still alive after lab13_close: %d context(s), %d PD(s), %d MR(s), %d "
                  "CQ(s), %d QP(s)",
                  o.ctx, o.pd, o.mr, o.cq, o.qp);
    else if (o.implicit)
        fail_step(r,
                  "%d object(s) were freed only by closing the device: destroy each one "
                  "(QP, CQ, MR, PD) before ibv_close_device",
                  o.implicit);
}

/* --- calling the student ----------------------------------------------------------------- */

static void call_failed(step_report *r, const char *fn, const cl_call_result *res)
{
    r->status = res->status;
    snprintf(r->why, sizeof r->why, "%s: %s%s%s", fn, cl_result_str(res->status),
             res->error[0] ? ": " : "", res->error);
}

/* Run entry on this rank with the harness's clock or the model's around it. */
static cl_result call(cl_comm *c, const char *entry, void *args, size_t bytes, cl_call_result *res,
                      double *seconds, hca_counters *ctr)
{
    int rank = cl_comm_rank(c);
    double t0 = 0;
    if (S.emu) {
        hca_counters_reset(S.fabric, rank);
        t0 = hca_clock(S.fabric, rank);
    }
    CL_CHECK(cl_student_run(c, entry, args, bytes, CL_ALLOW_LAB, res));
    hca_counters k;
    memset(&k, 0, sizeof k);
    double t = res->seconds;
    if (S.emu) {
        hca_counters_get(S.fabric, rank, &k);
        double t1 = hca_clock(S.fabric, rank);
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
static cl_result together(cl_comm *c)
{
    CL_CHECK(cl_barrier(c));
    if (S.emu && cl_comm_rank(c) == 0)
        hca_align_clocks(S.fabric);
    return cl_barrier(c);
}

/* --- the steps of a connection, each reported -------------------------------------------- */

typedef struct steps {
    cl_run *run;
    cl_comm *c;
    int failed; /* a step failed: the following are not run */
    int report; /* add a row per step */
} steps;

/* After a step on both ranks: the row (rank 0) and whether to go on. */
static cl_result end_step(steps *s, const char *name, step_report *mine)
{
    int rank = cl_comm_rank(s->c);
    S.bd->rep[rank] = *mine;
    CL_CHECK(cl_barrier(s->c));
    int64_t bad[1] = {mine->status != CL_OK || mine->failed};
    CL_CHECK(cl_agree(s->c, CL_SUM, bad, 1));
    if (s->report) {
        cl_row *row = cl_row_begin(s->run, s->c);
        cl_col_str(row, "step", name);
        for (int r = 0; r < 2; r++) {
            const step_report *p = &S.bd->rep[r];
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

static void not_run(steps *s, const char *name)
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

static cl_result step_open(steps *s)
{
    int rank = cl_comm_rank(s->c);
    step_report r = {0};
    open_args a = {.cfg = S.cfg, .buf = S.host, .bytes = PER_RANK};
    cl_call_result res;
    CL_CHECK(call(s->c, "open", &a, sizeof a, &res, NULL, NULL));
    if (res.status != CL_OK)
        call_failed(&r, "lab13_open", &res);
    else if (!a.conn)
        fail_step(&r, "lab13_open succeeded but gave no connection (*out)");
    S.conn = a.conn;
    S.local = a.local;
    r.ep = a.local;
    if (r.status == CL_OK && !r.failed && S.emu)
        check_open(rank, &r);
    return end_step(s, "open", &r);
}

static cl_result step_conn(steps *s, const char *entry, const char *fn, int state)
{
    step_report r = {0};
    conn_args a = {.conn = S.conn};
    cl_call_result res;
    CL_CHECK(call(s->c, entry, &a, sizeof a, &res, NULL, NULL));
    if (res.status != CL_OK)
        call_failed(&r, fn, &res);
    else if (S.emu && state >= 0)
        check_state(cl_comm_rank(s->c), &r, state, &S.remote);
    return end_step(s, entry, &r);
}

static cl_result step_exchange(steps *s)
{
    int rank = cl_comm_rank(s->c);
    step_report r = {0};
    /* Each rank's true endpoint, from the open step, through the board. */
    S.bd->rep[rank].ep = S.local;
    CL_CHECK(cl_barrier(s->c));
    lab13_endpoint peer = S.bd->rep[1 - rank].ep;
    CL_CHECK(cl_barrier(s->c));
    exchange_args a = {.conn = S.conn, .server = rank == 1, .local = S.local};
    snprintf(a.host, sizeof a.host, "%s", cl_opt(s->run, "oob-host"));
    CL_CHECK(pick_port(s->c, &a.port));
    cl_call_result res;
    CL_CHECK(call(s->c, "exchange", &a, sizeof a, &res, NULL, NULL));
    S.remote = a.remote;
    if (res.status != CL_OK)
        call_failed(&r, "lab13_exchange", &res);
    else if (!same_ep(&a.remote, &peer))
        fail_step(&r,
                  "the endpoint received (qpn %#x psn %#x lid %u rkey %#x) is not the "
                  "peer's (qpn %#x psn %#x lid %u rkey %#x), or its gid/addr/bytes differ",
                  a.remote.qpn, a.remote.psn, a.remote.lid, a.remote.rkey, peer.qpn, peer.psn,
                  peer.lid, peer.rkey);
    return end_step(s, "exchange", &r);
}

static cl_result step_rtr(steps *s)
{
    step_report r = {0};
    rtr_args a = {.conn = S.conn, .remote = S.remote};
    cl_call_result res;
    CL_CHECK(call(s->c, "rtr", &a, sizeof a, &res, NULL, NULL));
    if (res.status != CL_OK)
        call_failed(&r, "lab13_rtr", &res);
    else if (S.emu)
        check_state(cl_comm_rank(s->c), &r, 2, &S.remote);
    return end_step(s, "rtr", &r);
}

/* open, init, exchange, rtr, rts: the connection every mode starts from. */
static cl_result connect_all(steps *s)
{
    cl_result (*const fns[])(steps *) = {step_open, NULL, step_exchange, step_rtr, NULL};
    const char *names[] = {"open", "init", "exchange", "rtr", "rts"};
    for (int i = 0; i < 5; i++) {
        if (s->failed) {
            not_run(s, names[i]);
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

static cl_result step_close(steps *s)
{
    step_report r = {0};
    if (!S.conn) { /* lab13_open made nothing to close */
        fail_step(&r, "not run: lab13_open gave no connection");
        return end_step(s, "close", &r);
    }
    conn_args a = {.conn = S.conn};
    cl_call_result res;
    CL_CHECK(call(s->c, "close", &a, sizeof a, &res, NULL, NULL));
    if (res.status != CL_OK)
        call_failed(&r, "lab13_close", &res);
    else if (S.emu)
        check_closed(cl_comm_rank(s->c), &r);
    return end_step(s, "close", &r);
}

/* Modes other than connect need the connection: a failed step ends them, with its reason. */
static cl_result connected(cl_run *run, cl_comm *c)
{
    steps s = {.run = run, .c = c};
    CL_CHECK(connect_all(&s));
    if (!s.failed)
        return CL_OK;
    for (int r = 0; r < 2; r++)
        if (S.bd->rep[r].why[0]) {
            cl_set_error("rank %d could not connect: %s", r, S.bd->rep[r].why);
            return CL_ERR_INVALID;
        }
    cl_set_error("the connection failed");
    return CL_ERR_INVALID;
}

static cl_result close_conn(cl_run *run, cl_comm *c)
{
    steps s = {.run = run, .c = c};
    CL_CHECK(step_close(&s));
    if (s.failed) {
        for (int r = 0; r < 2; r++)
            if (S.bd->rep[r].why[0]) {
                cl_set_error("rank %d: %s", r, S.bd->rep[r].why);
                return CL_ERR_INVALID;
            }
    }
    return CL_OK;
}

/* --- one checked RDMA WRITE of fresh data ---------------------------------------------------- */

typedef struct write_result {
    int status;
    char why[480];
    long long wrong, writes, write_bytes, min_len, max_len, errors;
    int max_outstanding;
    double seconds;
} write_result;

/* Rank 0 writes [offset, offset + total) to rank 1 with (msg, depth); rank 1 checks it.
 * remote: what rank 0 passes (a copy of the true endpoint, or a damaged one). */
static cl_result one_write(cl_run *run, cl_comm *c, size_t offset, size_t total, size_t msg,
                           int depth, const lab13_endpoint *remote, write_result *w)
{
    int rank = cl_comm_rank(c);
    uint64_t seed;
    memset(w, 0, sizeof *w);
    CL_CHECK(cl_fresh_seed(run, c, &seed));
    if (rank == 0)
        CL_CHECK(cl_fill_bytes(c, S.host + offset, total, seed, 0, offset));
    else
        memset(S.host + offset, 0xab, total);
    CL_CHECK(together(c));
    if (rank == 0) {
        write_args a = {.conn = S.conn,
                        .remote = *remote,
                        .offset = offset,
                        .total = total,
                        .msg = msg,
                        .depth = depth};
        cl_call_result res;
        hca_counters k;
        CL_CHECK(call(c, "write", &a, sizeof a, &res, &w->seconds, &k));
        w->status = res.status;
        if (res.status != CL_OK)
            snprintf(w->why, sizeof w->why, "%s: %s", cl_result_str(res.status), res.error);
        w->writes = k.writes, w->write_bytes = k.write_bytes, w->min_len = k.min_len;
        w->max_len = k.max_len, w->errors = k.errors, w->max_outstanding = k.max_outstanding;
    }
    CL_CHECK(cl_barrier(c));
    size_t wrong = 0;
    if (rank == 1)
        CL_CHECK(cl_count_wrong_bytes(c, S.host + offset, total, seed, 0, offset, &wrong));
    int64_t v[1] = {(int64_t)wrong};
    CL_CHECK(cl_agree(c, CL_SUM, v, 1));
    w->wrong = v[0];
    return CL_OK;
}

static void write_row(cl_run *run, cl_comm *c, const char *name, size_t offset, size_t total,
                      size_t msg, int depth, const write_result *w)
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
    if (S.emu) {
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

/* --- modes ---------------------------------------------------------------------------------- */

static cl_result connect_mode(cl_run *run, cl_comm *c)
{
    CL_CHECK(setup(run, c));
    steps s = {.run = run, .c = c, .report = 1};
    CL_CHECK(connect_all(&s));
    /* The connection carries data: rank 0 writes 64 KiB to rank 1. */
    if (!s.failed) {
        write_result w;
        step_report r = {0};
        CL_CHECK(one_write(run, c, 0, 64 << 10, 4096, 4, &S.remote, &w));
        if (cl_comm_rank(c) == 0 && w.status != CL_OK)
            snprintf(r.why, sizeof r.why, "lab13_write: %.400s", w.why), r.status = w.status;
        else if (cl_comm_rank(c) == 1 && w.wrong)
            fail_step(&r, "%lld of the 65536 bytes rank 0 wrote arrived wrong", w.wrong);
        CL_CHECK(end_step(&s, "probe", &r));
    } else {
        not_run(&s, "probe");
    }
    CL_CHECK(step_close(&s)); /* on both ranks (it synchronises them), whatever failed */
    teardown();
    return CL_OK;
}

static cl_result write_mode(cl_run *run, cl_comm *c)
{
    CL_CHECK(setup(run, c));
    CL_CHECK(connected(run, c));
    static const struct {
        const char *name;
        size_t offset, total, msg;
        int depth;
    } cases[] = {
        {"one message", 0, 4096, 4096, 1},
        {"64 KiB, 4 KiB x 4", 0, 64 << 10, 4096, 4},
        {"at an offset", 12288, 12288 * 9, 12288, 3},
        {"multi-packet, deep", 65536, 2 << 20, 65536, 16},
        {"small messages", 4096, 256 * 64, 256, 32},
        {"1 MiB messages", 1 << 20, 8 << 20, 1 << 20, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_result w;
        CL_CHECK(one_write(run, c, cases[i].offset, cases[i].total, cases[i].msg, cases[i].depth,
                           &S.remote, &w));
        write_row(run, c, cases[i].name, cases[i].offset, cases[i].total, cases[i].msg,
                  cases[i].depth, &w);
    }
    /* A damaged rkey: the WRITE must fail, and the failure must be reported. */
    lab13_endpoint bad = S.remote;
    bad.rkey ^= 0x5a5a00;
    write_result w;
    CL_CHECK(one_write(run, c, 0, 16 << 10, 4096, 4, &bad, &w));
    write_row(run, c, "wrong rkey (must fail)", 0, 16 << 10, 4096, 4, &w);
    CL_CHECK(close_conn(run, c));
    teardown();
    return CL_OK;
}

static cl_result lat_mode(cl_run *run, cl_comm *c)
{
    CL_CHECK(setup(run, c));
    CL_CHECK(connected(run, c));
    int rank = cl_comm_rank(c);
    const int iters = cl_run_opts(run)->iters > 1 ? cl_run_opts(run)->iters : 200;
    const size_t sizes[] = {8, 4096};
    const size_t send_off = 0, recv_off = 8 << 20;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t bytes = sizes[i];
        uint64_t seed;
        CL_CHECK(cl_fresh_seed(run, c, &seed));
        CL_CHECK(cl_fill_bytes(c, S.host + send_off, bytes, seed, rank, 0));
        memset(S.host + recv_off, 0xab, bytes);
        CL_CHECK(together(c));
        pingpong_args a = {.conn = S.conn,
                           .server = rank == 1,
                           .send_off = send_off,
                           .recv_off = recv_off,
                           .bytes = bytes,
                           .iters = iters};
        cl_call_result res;
        double t;
        hca_counters k;
        CL_CHECK(call(c, "pingpong", &a, sizeof a, &res, &t, &k));
        size_t wrong = 0;
        CL_CHECK(cl_count_wrong_bytes(c, S.host + recv_off, bytes, seed, 1 - rank, 0, &wrong));
        int64_t v[8] = {0};
        v[rank] = res.status;
        v[2 + rank] = (int64_t)wrong;
        v[4 + rank] = k.sends;
        v[6 + rank] = k.recvs;
        CL_CHECK(cl_agree(c, CL_SUM, v, 8));
        S.bd->rep[rank].status = res.status;
        snprintf(S.bd->rep[rank].why, sizeof S.bd->rep[rank].why, "%s", res.error);
        CL_CHECK(cl_barrier(c));
        double ref = S.emu ? ref_pingpong_seconds(S.link, bytes, iters) : 0;
        cl_row *row = cl_row_begin(run, c);
        cl_col_int(row, "bytes", (long long)bytes);
        cl_col_int(row, "iters", iters);
        for (int r = 0; r < 2; r++) {
            char k0[24];
            snprintf(k0, sizeof k0, "status%d", r);
            cl_col_str(row, k0, v[r] == CL_OK ? "ok" : cl_result_str((cl_result)v[r]));
            snprintf(k0, sizeof k0, "why%d", r);
            cl_col_str(row, k0, S.bd->rep[r].why);
            snprintf(k0, sizeof k0, "wrong_bytes%d", r);
            cl_col_int(row, k0, v[2 + r]);
            if (S.emu) {
                snprintf(k0, sizeof k0, "sends%d", r);
                cl_col_int(row, k0, v[4 + r]);
                snprintf(k0, sizeof k0, "recvs%d", r);
                cl_col_int(row, k0, v[6 + r]);
            }
        }
        cl_col_num(row, "one_way_us", t / (2.0 * iters) * 1e6, "%.3f");
        if (S.emu)
            cl_col_num(row, "reference_us", ref * 1e6, "%.3f");
        cl_row_end(row);
        CL_CHECK(cl_barrier(c));
        if (v[0] != CL_OK || v[1] != CL_OK)
            break; /* the QPs may be in error: the next size cannot run */
    }
    CL_CHECK(close_conn(run, c));
    teardown();
    return CL_OK;
}

static cl_result parse_depth(cl_run *run, int *depth)
{
    char *end;
    long d = strtol(cl_opt(run, "depth"), &end, 10);
    if (*end || d < 1 || d > MAX_WR) {
        cl_set_error("--depth wants 1 .. %d, not '%s'", MAX_WR, cl_opt(run, "depth"));
        return CL_ERR_INVALID;
    }
    *depth = (int)d;
    return CL_OK;
}

static cl_result bw_mode(cl_run *run, cl_comm *c)
{
    const cl_opts *o = cl_run_opts(run);
    int depth;
    CL_CHECK(parse_depth(run, &depth));
    size_t msg = o->bytes, total = PLAN_TOTAL;
    if (!msg || msg > total || total % msg) {
        cl_set_error("--bytes must divide %zu", total);
        return CL_ERR_INVALID;
    }
    CL_CHECK(setup(run, c));
    CL_CHECK(connected(run, c));
    int reps = o->repeats > 20 ? 20 : o->repeats;
    double mine[20], base[20];
    long long wrong = 0;
    int status = CL_OK;
    char why[480] = "";
    for (int r = 0; r < reps; r++) {
        write_result w;
        CL_CHECK(one_write(run, c, 0, total, msg, depth, &S.remote, &w));
        wrong += w.wrong;
        if (w.status != CL_OK && status == CL_OK)
            status = w.status, snprintf(why, sizeof why, "%s", w.why);
        mine[r] = w.status == CL_OK && w.seconds > 0 ? total / w.seconds / 1e9 : 0;
        double b = S.emu ? ref_write_seconds(S.link, msg, depth, total) : 0;
        base[r] = b > 0 ? total / b / 1e9 : 0;
    }
    cl_row *row = cl_row_begin(run, c);
    cl_col_int(row, "msg", (long long)msg);
    cl_col_int(row, "depth", depth);
    cl_col_int(row, "total", (long long)total);
    cl_col_str(row, "status", status == CL_OK ? "ok" : cl_result_str(status));
    cl_col_str(row, "why", why);
    cl_col_int(row, "wrong_bytes", wrong);
    cl_col_nums(row, "student_gbps", mine, (size_t)reps, "%.3f");
    if (S.emu)
        cl_col_nums(row, "base_gbps", base, (size_t)reps, "%.3f");
    cl_row_end(row);
    CL_CHECK(close_conn(run, c));
    teardown();
    return CL_OK;
}

/* The fewest bytes in flight with which the harness's loop reaches share of the link, over
 * the plan's sizes (powers of two, 256 B .. 1 MiB) and depths (1 .. MAX_WR). */
static double frontier(int link, double share, size_t *best_msg, int *best_depth)
{
    double rate = hca_fabric_model(S.fabric)->wire_Bps, best = 0;
    for (size_t msg = 256; msg <= ((size_t)1 << 20); msg *= 2) {
        double s = ref_write_seconds(link, msg, MAX_WR, PLAN_TOTAL);
        if (s <= 0 || PLAN_TOTAL / s < share * rate)
            continue;
        int lo = 1, hi = MAX_WR; /* the bandwidth grows with the depth: the least that reaches */
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            double t = ref_write_seconds(link, msg, mid, PLAN_TOTAL);
            if (t > 0 && PLAN_TOTAL / t >= share * rate)
                hi = mid;
            else
                lo = mid + 1;
        }
        double fp = (double)msg * lo;
        if (best == 0 || fp < best)
            best = fp, *best_msg = msg, *best_depth = lo;
    }
    return best;
}

static cl_result plan_mode(cl_run *run, cl_comm *c)
{
    CL_CHECK(setup(run, c));
    int rank = cl_comm_rank(c);
    plan_args p = {{0, 0}};
    cl_call_result res;
    CL_CHECK(call(c, "plan", &p, sizeof p, &res, NULL, NULL));
    int64_t v[2] = {(int64_t)p.plan.msg_bytes, p.plan.depth};
    CL_CHECK(cl_agree(c, CL_MAX, v, 2)); /* the same program on both ranks */
    size_t msg = (size_t)v[0];
    int depth = (int)v[1];
    int valid = msg >= 256 && msg <= ((size_t)1 << 20) && !(msg & (msg - 1)) && depth >= 1 &&
                depth <= MAX_WR;
    cl_report_int(run, "plan_msg_bytes", (long long)msg);
    cl_report_int(run, "plan_depth", depth);
    cl_report_int(run, "plan_valid", valid);
    cl_report_num(run, "plan_share", PLAN_SHARE);
    cl_report_num(run, "plan_slack", PLAN_SLACK);
    write_result w;
    memset(&w, 0, sizeof w);
    if (valid) {
        CL_CHECK(connected(run, c));
        CL_CHECK(one_write(run, c, 0, PLAN_TOTAL, msg, depth, &S.remote, &w));
        int64_t st[1] = {rank == 0 ? w.status : 0};
        CL_CHECK(cl_agree(c, CL_SUM, st, 1));
        w.status = (int)st[0];
    }
    cl_row *row = cl_row_begin(run, c);
    cl_col_int(row, "msg", (long long)msg);
    cl_col_int(row, "depth", depth);
    cl_col_int(row, "in_flight", (long long)msg * depth);
    cl_col_str(row, "status",
               !valid              ? "invalid plan"
               : w.status == CL_OK ? "ok"
                                   : cl_result_str(w.status));
    cl_col_str(row, "why", w.why);
    cl_col_int(row, "wrong_bytes", w.wrong);
    cl_col_int(row, "max_outstanding", w.max_outstanding);
    cl_col_int(row, "writes", w.writes);
    double gbps = valid && w.status == CL_OK && w.seconds > 0 ? PLAN_TOTAL / w.seconds / 1e9 : 0;
    cl_col_num(row, "gbps", gbps, "%.3f");
    if (S.emu) {
        double rate = hca_fabric_model(S.fabric)->wire_Bps / 1e9;
        size_t fm = 0;
        int fd = 0;
        double fp = rank == 0 ? frontier(S.link, PLAN_SHARE, &fm, &fd) : 0;
        cl_col_num(row, "link_gbps", rate, "%.3f");
        cl_col_num(row, "share", gbps / rate, "%.4f");
        cl_col_int(row, "fewest_in_flight", (long long)fp);
        cl_col_int(row, "fewest_msg", (long long)fm);
        cl_col_int(row, "fewest_depth", fd);
    }
    cl_row_end(row);
    if (valid)
        CL_CHECK(close_conn(run, c));
    teardown();
    return CL_OK;
}

static cl_result sweep_mode(cl_run *run, cl_comm *c)
{
    CL_CHECK(setup(run, c));
    CL_CHECK(connected(run, c));
    cl_report_str(run, "units", "msg in bytes, bandwidth in GB/s (model time on emu)");
    for (size_t msg = 1024; msg <= ((size_t)1 << 20); msg *= 4) {
        for (int depth = 1; depth <= MAX_WR; depth *= 2) {
            size_t total = msg * 256 < ((size_t)1 << 20) ? (size_t)1 << 20
                           : msg * 256 > PLAN_TOTAL      ? PLAN_TOTAL
                                                         : msg * 256;
            write_result w;
            CL_CHECK(one_write(run, c, 0, total, msg, depth, &S.remote, &w));
            cl_row *row = cl_row_begin(run, c);
            cl_col_int(row, "msg", (long long)msg);
            cl_col_int(row, "depth", depth);
            cl_col_int(row, "in_flight", (long long)msg * depth);
            cl_col_str(row, "status", w.status == CL_OK ? "ok" : cl_result_str(w.status));
            cl_col_int(row, "wrong_bytes", w.wrong);
            cl_col_num(row, "gbps", w.seconds > 0 ? total / w.seconds / 1e9 : 0, "%.2f");
            cl_row_end(row);
            if (w.status != CL_OK) {
                cl_set_error("lab13_write failed: %s", w.why);
                return CL_ERR_INVALID;
            }
        }
    }
    CL_CHECK(close_conn(run, c));
    teardown();
    return CL_OK;
}

static const cl_option options[] = {
    {"verbs", "emu: the emulated provider (a model); nic: rdma-core on this machine's NIC", "emu"},
    {"link", "emu: ib (HDR InfiniBand) or roce (RoCE v2, routed)", "ib"},
    {"device", "nic: the device (perftest's -d); default: the first", ""},
    {"gid-index", "the GID index (perftest's -x); -1: yours to find on RoCE", "-1"},
    {"oob-host", "the server's address for the TCP exchange", "127.0.0.1"},
    {"depth", "bw: outstanding WRITEs (perftest's -t)", "16"},
    {0}};

const cl_lab cl_lab_def = {
    .name = "lab13",
    .title = "RDMA verbs 基础: an RC queue pair, WRITE bandwidth, SEND/RECV latency",
    .modes =
        (const cl_mode[]){
            {.name = "connect",
             .help = "open, INIT, exchange, RTR, RTS, a probe WRITE, close: "
                     "each step checked",
             .ranks = connect_mode,
             .min_ranks = 2,
             .backends = "cpu"},
            {.name = "write",
             .help = "RDMA WRITEs of fresh data at several sizes and depths",
             .ranks = write_mode,
             .min_ranks = 2,
             .backends = "cpu"},
            {.name = "lat",
             .help = "SEND/RECV ping-pong, one-way latency (as ib_send_lat)",
             .ranks = lat_mode,
             .min_ranks = 2,
             .backends = "cpu"},
            {.name = "bw",
             .help = "WRITE bandwidth at --bytes and --depth, yours and the harness's",
             .ranks = bw_mode,
             .min_ranks = 2,
             .backends = "cpu"},
            {.name = "plan",
             .help = "your lab13_write_plan: bandwidth and bytes in flight",
             .ranks = plan_mode,
             .min_ranks = 2,
             .backends = "cpu"},
            {.name = "sweep",
             .help = "your WRITE loop over sizes and depths (ib_write_bw -a)",
             .ranks = sweep_mode,
             .min_ranks = 2,
             .backends = "cpu"},
            {0}},
    .options = options,
    .permits = CL_PERMIT_NET,
    .arena_bytes = (size_t)64 << 20,
    .lab_op = lab_op,
    .student_setup = student_setup,
};

#endif
