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

cl_result lab13_open(const lab13_config *cfg, void *buf, size_t bytes, lab13_conn **out,
                     lab13_endpoint *local)
{
    // TODO(lab13) 1: find cfg->device (ibv_get_device_list), open it, query its port,
    //                choose the GID index (cfg->gid_index, or on RoCE the RoCE v2 IPv4 one),
    //                allocate a PD, register buf so that the peer may write it, create the
    //                CQ(s) and an RC QP sized for cfg->max_wr and cfg->max_recv, and fill
    //                *local with what the peer needs.
    (void)cfg, (void)buf, (void)bytes, (void)out, (void)local;
    return CL_ERR_NOT_IMPLEMENTED;
}

/* --- 2. RESET -> INIT ----------------------------------------------------------------- */

cl_result lab13_init(lab13_conn *c)
{
    // TODO(lab13) 2: move the QP to INIT: its port, P_Key index and the access the peer
    //                gets to your memory through it (the attributes this transition needs).
    (void)c;
    return CL_ERR_NOT_IMPLEMENTED;
}

/* --- 3. the out-of-band exchange over TCP ------------------------------------------------ */

cl_result lab13_exchange(lab13_conn *c, const char *host, int port, int server,
                         const lab13_endpoint *local, lab13_endpoint *remote)
{
    // TODO(lab13) 3: connect to the peer over TCP (the server listens on port, the client
    //                connects to host:port and tries again until the server is there),
    //                send *local, receive the peer's endpoint into *remote. Keep the socket.
    (void)c, (void)host, (void)port, (void)server, (void)local, (void)remote;
    return CL_ERR_NOT_IMPLEMENTED;
}

/* --- 4. INIT -> RTR -> RTS -------------------------------------------------------------- */

cl_result lab13_rtr(lab13_conn *c, const lab13_endpoint *remote)
{
    // TODO(lab13) 4a: move the QP to RTR towards the peer: its address (LID, or GID with
    //                 a GRH), its QP number and first PSN, the path MTU your port allows,
    //                 and the responder's resources and RNR timer.
    (void)c, (void)remote;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab13_rts(lab13_conn *c)
{
    // TODO(lab13) 4b: move the QP to RTS: your first PSN and the requester's timers and
    //                 retry counts.
    (void)c;
    return CL_ERR_NOT_IMPLEMENTED;
}

/* --- 5. RDMA WRITE, keeping depth in flight ---------------------------------------------- */

cl_result lab13_write(lab13_conn *c, const lab13_endpoint *remote, size_t offset, size_t total,
                      size_t msg, int depth)
{
    // TODO(lab13) 5: post RDMA WRITEs of msg bytes from your buffer at offset to the
    //                peer's at the same offset, never more than depth outstanding; poll the
    //                completions, check each one's status, until all have completed.
    (void)c, (void)remote, (void)offset, (void)total, (void)msg, (void)depth;
    return CL_ERR_NOT_IMPLEMENTED;
}

/* --- 6. SEND/RECV ping-pong --------------------------------------------------------------- */

cl_result lab13_pingpong(lab13_conn *c, int server, size_t send_off, size_t recv_off, size_t bytes,
                         int iters)
{
    // TODO(lab13) 6: the ping-pong: post your receive before the peer can send (and make
    //                sure it has), then iters times: the client sends and waits for the
    //                answer, the server waits and answers. Keep a receive posted ahead of
    //                each message and do not wait for send completions inside the loop.
    (void)c, (void)server, (void)send_off, (void)recv_off, (void)bytes, (void)iters;
    return CL_ERR_NOT_IMPLEMENTED;
}

/* --- 7. tear down -------------------------------------------------------------------------- */

cl_result lab13_close(lab13_conn *c)
{
    // TODO(lab13) 7: destroy what lab13_open created, in an order the HCA accepts, close
    //                the device and the socket, free c.
    (void)c;
    return CL_ERR_NOT_IMPLEMENTED;
}

/* --- 8. your decision ---------------------------------------------------------------------- */

const lab13_plan lab13_write_plan = {
    // TODO(lab13) 8: the message size and depth you chose from `./lab13 sweep` (README 8).
    .msg_bytes = 0,
    .depth = 0,
};
