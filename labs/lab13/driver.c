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
#include "lab13_args.h"

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

#include "emu/ref.h"
#include "session/session.h"

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
    if (code != EMU_CALL_CODE || !L13.fabric) {
        cl_set_error("no emulated HCA in this run (operation %d)", code);
        return CL_ERR_INVALID;
    }
    hca_call(L13.fabric, cl_comm_rank(comm), args, bytes);
    return CL_OK;
}

/* --- modes ---------------------------------------------------------------------------------- */

static cl_result connect_mode(cl_run *run, cl_comm *c)
{
    CL_CHECK(l13_setup(run, c));
    l13_steps s = {.run = run, .c = c, .report = 1};
    CL_CHECK(l13_connect_all(&s));
    /* The connection carries data: rank 0 writes 64 KiB to rank 1. */
    if (!s.failed) {
        l13_write_result w;
        l13_report r = {0};
        CL_CHECK(l13_write(run, c, 0, 64 << 10, 4096, 4, &L13.remote, &w));
        if (cl_comm_rank(c) == 0 && w.status != CL_OK)
            snprintf(r.why, sizeof r.why, "lab13_write: %.400s", w.why), r.status = w.status;
        else if (cl_comm_rank(c) == 1 && w.wrong)
            l13_fail(&r, "%lld of the 65536 bytes rank 0 wrote arrived wrong", w.wrong);
        CL_CHECK(l13_end_step(&s, "probe", &r));
    } else {
        l13_not_run(&s, "probe");
    }
    CL_CHECK(l13_step_close(&s)); /* on both ranks (it synchronises them), whatever failed */
    l13_teardown();
    return CL_OK;
}

static cl_result write_mode(cl_run *run, cl_comm *c)
{
    CL_CHECK(l13_setup(run, c));
    CL_CHECK(l13_connected(run, c));
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
        l13_write_result w;
        CL_CHECK(l13_write(run, c, cases[i].offset, cases[i].total, cases[i].msg, cases[i].depth,
                           &L13.remote, &w));
        l13_write_row(run, c, cases[i].name, cases[i].offset, cases[i].total, cases[i].msg,
                      cases[i].depth, &w);
    }
    /* A damaged rkey: the WRITE must fail, and the failure must be reported. */
    lab13_endpoint bad = L13.remote;
    bad.rkey ^= 0x5a5a00;
    l13_write_result w;
    CL_CHECK(l13_write(run, c, 0, 16 << 10, 4096, 4, &bad, &w));
    l13_write_row(run, c, "wrong rkey (must fail)", 0, 16 << 10, 4096, 4, &w);
    CL_CHECK(l13_close(run, c));
    l13_teardown();
    return CL_OK;
}

static cl_result lat_mode(cl_run *run, cl_comm *c)
{
    CL_CHECK(l13_setup(run, c));
    CL_CHECK(l13_connected(run, c));
    int rank = cl_comm_rank(c);
    const int iters = cl_run_opts(run)->iters > 1 ? cl_run_opts(run)->iters : 200;
    const size_t sizes[] = {8, 4096};
    const size_t send_off = 0, recv_off = 8 << 20;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t bytes = sizes[i];
        uint64_t seed;
        CL_CHECK(cl_fresh_seed(run, c, &seed));
        CL_CHECK(cl_fill_bytes(c, L13.host + send_off, bytes, seed, rank, 0));
        memset(L13.host + recv_off, 0xab, bytes);
        CL_CHECK(l13_together(c));
        pingpong_args a = {.conn = L13.conn,
                           .server = rank == 1,
                           .send_off = send_off,
                           .recv_off = recv_off,
                           .bytes = bytes,
                           .iters = iters};
        cl_call_result res;
        double t;
        hca_counters k;
        CL_CHECK(l13_call(c, "pingpong", &a, sizeof a, &res, &t, &k));
        size_t wrong = 0;
        CL_CHECK(cl_count_wrong_bytes(c, L13.host + recv_off, bytes, seed, 1 - rank, 0, &wrong));
        int64_t v[8] = {0};
        v[rank] = res.status;
        v[2 + rank] = (int64_t)wrong;
        v[4 + rank] = k.sends;
        v[6 + rank] = k.recvs;
        CL_CHECK(cl_agree(c, CL_SUM, v, 8));
        L13.bd->rep[rank].status = res.status;
        snprintf(L13.bd->rep[rank].why, sizeof L13.bd->rep[rank].why, "%s", res.error);
        CL_CHECK(cl_barrier(c));
        double ref = L13.emu ? ref_pingpong_seconds(L13.link, bytes, iters) : 0;
        cl_row *row = cl_row_begin(run, c);
        cl_col_int(row, "bytes", (long long)bytes);
        cl_col_int(row, "iters", iters);
        for (int r = 0; r < 2; r++) {
            char k0[24];
            snprintf(k0, sizeof k0, "status%d", r);
            cl_col_str(row, k0, v[r] == CL_OK ? "ok" : cl_result_str((cl_result)v[r]));
            snprintf(k0, sizeof k0, "why%d", r);
            cl_col_str(row, k0, L13.bd->rep[r].why);
            snprintf(k0, sizeof k0, "wrong_bytes%d", r);
            cl_col_int(row, k0, v[2 + r]);
            if (L13.emu) {
                snprintf(k0, sizeof k0, "sends%d", r);
                cl_col_int(row, k0, v[4 + r]);
                snprintf(k0, sizeof k0, "recvs%d", r);
                cl_col_int(row, k0, v[6 + r]);
            }
        }
        cl_col_num(row, "one_way_us", t / (2.0 * iters) * 1e6, "%.3f");
        if (L13.emu)
            cl_col_num(row, "reference_us", ref * 1e6, "%.3f");
        cl_row_end(row);
        CL_CHECK(cl_barrier(c));
        if (v[0] != CL_OK || v[1] != CL_OK)
            break; /* the QPs may be in error: the next size cannot run */
    }
    CL_CHECK(l13_close(run, c));
    l13_teardown();
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
    CL_CHECK(l13_setup(run, c));
    CL_CHECK(l13_connected(run, c));
    int reps = o->repeats > 20 ? 20 : o->repeats;
    double mine[20], base[20];
    long long wrong = 0;
    int status = CL_OK;
    char why[480] = "";
    for (int r = 0; r < reps; r++) {
        l13_write_result w;
        CL_CHECK(l13_write(run, c, 0, total, msg, depth, &L13.remote, &w));
        wrong += w.wrong;
        if (w.status != CL_OK && status == CL_OK)
            status = w.status, snprintf(why, sizeof why, "%s", w.why);
        mine[r] = w.status == CL_OK && w.seconds > 0 ? total / w.seconds / 1e9 : 0;
        double b = L13.emu ? ref_write_seconds(L13.link, msg, depth, total) : 0;
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
    if (L13.emu)
        cl_col_nums(row, "base_gbps", base, (size_t)reps, "%.3f");
    cl_row_end(row);
    CL_CHECK(l13_close(run, c));
    l13_teardown();
    return CL_OK;
}

/* The fewest bytes in flight with which the harness's loop reaches share of the link, over
 * the plan's sizes (powers of two, 256 B .. 1 MiB) and depths (1 .. MAX_WR). */
static double frontier(int link, double share, size_t *best_msg, int *best_depth)
{
    double rate = hca_fabric_model(L13.fabric)->wire_Bps, best = 0;
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
    CL_CHECK(l13_setup(run, c));
    int rank = cl_comm_rank(c);
    plan_args p = {{0, 0}};
    cl_call_result res;
    CL_CHECK(l13_call(c, "plan", &p, sizeof p, &res, NULL, NULL));
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
    l13_write_result w;
    memset(&w, 0, sizeof w);
    if (valid) {
        CL_CHECK(l13_connected(run, c));
        CL_CHECK(l13_write(run, c, 0, PLAN_TOTAL, msg, depth, &L13.remote, &w));
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
    if (L13.emu) {
        double rate = hca_fabric_model(L13.fabric)->wire_Bps / 1e9;
        size_t fm = 0;
        int fd = 0;
        double fp = rank == 0 ? frontier(L13.link, PLAN_SHARE, &fm, &fd) : 0;
        cl_col_num(row, "link_gbps", rate, "%.3f");
        cl_col_num(row, "share", gbps / rate, "%.4f");
        cl_col_int(row, "fewest_in_flight", (long long)fp);
        cl_col_int(row, "fewest_msg", (long long)fm);
        cl_col_int(row, "fewest_depth", fd);
        if (rank == 0) { /* the harness's loop: bandwidth against bytes in flight, to plot */
            static char curve[2048];
            size_t used = 0;
            for (size_t msg = 4096; msg <= ((size_t)256 << 10); msg *= 4)
                for (int depth = 1; depth <= 32 && used < sizeof curve; depth *= 2) {
                    double t = ref_write_seconds(L13.link, msg, depth, PLAN_TOTAL);
                    used += (size_t)snprintf(curve + used, sizeof curve - used, "%s%zu:%d:%.3f",
                                             used ? "," : "", msg, depth,
                                             t > 0 ? PLAN_TOTAL / t / 1e9 : 0.0);
                }
            cl_report_str(run, "reference_curve", curve);
        }
    }
    cl_row_end(row);
    if (valid)
        CL_CHECK(l13_close(run, c));
    l13_teardown();
    return CL_OK;
}

static cl_result sweep_mode(cl_run *run, cl_comm *c)
{
    CL_CHECK(l13_setup(run, c));
    CL_CHECK(l13_connected(run, c));
    cl_report_str(run, "units", "msg in bytes, bandwidth in GB/s (model time on emu)");
    for (size_t msg = 1024; msg <= ((size_t)1 << 20); msg *= 4) {
        for (int depth = 1; depth <= MAX_WR; depth *= 2) {
            size_t total = msg * 256 < ((size_t)1 << 20) ? (size_t)1 << 20
                           : msg * 256 > PLAN_TOTAL      ? PLAN_TOTAL
                                                         : msg * 256;
            l13_write_result w;
            CL_CHECK(l13_write(run, c, 0, total, msg, depth, &L13.remote, &w));
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
    CL_CHECK(l13_close(run, c));
    l13_teardown();
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
