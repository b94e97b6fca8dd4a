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
 *
 * This file holds the student's entries and the lab's table; the harness's side is in
 * harness_provider.c (which libibverbs the student's program runs on, and the emulated HCA
 * serving it), harness_checks.c (connect, write, lat) and harness_bandwidth.c (bw, plan,
 * sweep), built on session/session.c (session/session.h).
 */
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

#include "session/session.h"

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
