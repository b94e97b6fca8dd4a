/* lab13.h: types and functions of lab 13 (RDMA verbs: a connected RC queue pair).
 * The driver (driver.c) calls the functions you write in lab13.c, on two ranks: rank 0
 * (the client) and rank 1 (the server), as perftest's ib_write_bw and ib_send_lat run. */
#ifndef COMMLAB_LAB13_H
#define COMMLAB_LAB13_H

#include <stddef.h>
#include <stdint.h>

#include "commlab.h"

/* What the peer needs to reach your QP and your buffer: exchanged out of band (TCP). */
typedef struct lab13_endpoint {
    uint32_t qpn;    /* your QP's number */
    uint32_t psn;    /* the first PSN you send with: your sq_psn, the peer's rq_psn (24 bits) */
    uint16_t lid;    /* your port's LID (InfiniBand; 0 on RoCE) */
    uint8_t gid[16]; /* your port's GID at the GID index you use (RoCE: RoCE v2, IPv4) */
    uint32_t rkey;   /* your MR's remote key */
    uint64_t addr;   /* your buffer's address ... */
    uint64_t bytes;  /* ... and length */
} lab13_endpoint;

/* The device and sizes to open (from the harness, as perftest's -d, -x and -t). */
typedef struct lab13_config {
    char device[64]; /* device name ("emu_0", "mlx5_0"); "" for the first one */
    int port;        /* port number: 1 */
    int gid_index;   /* >= 0: use this GID index; -1: InfiniBand uses no GID, RoCE needs the
                        port's RoCE v2 GID that holds an IPv4 address: find its index */
    int max_wr;      /* the most send work requests you will keep outstanding */
    int max_recv;    /* the most receives you will keep posted */
} lab13_config;

/* Yours: the device context, PD, MR, CQ(s), QP, the TCP socket and what else you need.
 * Define struct lab13_conn in lab13.c. */
typedef struct lab13_conn lab13_conn;

/* --- written by the student in lab13.c, in the order of the handout --- */

/* 1. Open cfg->device and create a PD, an MR over buf[0, bytes) that the peer may write,
 * a CQ and an RC QP sized for cfg; fill *local with what the peer needs. */
cl_result lab13_open(const lab13_config *cfg, void *buf, size_t bytes, lab13_conn **out,
                     lab13_endpoint *local);

/* 2. The QP's first transition: RESET -> INIT. */
cl_result lab13_init(lab13_conn *c);

/* 3. Out of band over TCP: the server (server != 0) listens on port, the client connects
 * to host:port; each sends *local and receives the peer's into *remote. Keep the socket:
 * later functions may use it to synchronise. */
cl_result lab13_exchange(lab13_conn *c, const char *host, int port, int server,
                         const lab13_endpoint *local, lab13_endpoint *remote);

/* 4. INIT -> RTR towards the peer described by *remote, then RTR -> RTS. */
cl_result lab13_rtr(lab13_conn *c, const lab13_endpoint *remote);
cl_result lab13_rts(lab13_conn *c);

/* 5. RDMA WRITE bytes [offset, offset + total) of your buffer to the same range of the
 * peer's, as total / msg messages of msg bytes, never more than depth outstanding. Returns
 * when every one has completed; any failed completion is a failure whose reason names its
 * status (ibv_wc_status_str). */
cl_result lab13_write(lab13_conn *c, const lab13_endpoint *remote, size_t offset, size_t total,
                      size_t msg, int depth);

/* 6. SEND/RECV ping-pong, as ib_send_lat: iters round trips of bytes bytes. Each side sends
 * from its buffer at send_off and receives into its buffer at recv_off; the client (server
 * == 0) sends first. Return with no receive left posted and no send outstanding: the next
 * call may use another size. */
cl_result lab13_pingpong(lab13_conn *c, int server, size_t send_off, size_t recv_off, size_t bytes,
                         int iters);

/* 7. Destroy everything lab13_open() created, close the device and the socket. */
cl_result lab13_close(lab13_conn *c);

/* 8. Your decision: the message size and the number of outstanding WRITEs with which
 * lab13_write() reaches at least 90% of the link, with as little data in flight as you
 * can (msg_bytes * depth). */
typedef struct lab13_plan {
    size_t msg_bytes; /* a power of two from 256 B to 1 MiB */
    int depth;        /* 1 .. 128 */
} lab13_plan;

extern const lab13_plan lab13_write_plan;

#endif /* COMMLAB_LAB13_H */
