/* harness_net.c: lab 16's net mode: UDP senders pacing by the student's reaction point
 * (net.c) on a real RED/ECN bottleneck. Rank 0 is the receiver and notification point: it
 * counts bytes and one-way delays, and echoes a CNP for ECN-marked packets; the other ranks
 * send, first at a fixed fair rate, then with the student's settings, round after round.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lab16_harness.h"

/* --- net: UDP senders on a real RED/ECN bottleneck -----------------------------------------------
 */

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct rx_flow {
    struct sockaddr_in from;
    int known;
    double bytes, last_cnp;
    long marked, cnps;
} rx_flow;

typedef struct rx_result {
    double util, jain, qdelay_p99_us, queue_p99_kb;
    long packets, marked, cnps;
} rx_result;

/* The receiver and notification point, on rank 0, for `seconds`: bytes and
 * one-way delays counted after the first quarter. */
static cl_result receive(int sock, int echo, int nflows, double seconds, double gbps,
                         rx_result *out)
{
    rx_flow *fl = calloc((size_t)nflows, sizeof *fl);
    size_t cap = 1 << 20, nd = 0;
    double *delay = malloc(cap * sizeof *delay), base = 1e9;
    if (!fl || !delay) {
        free(fl);
        free(delay);
        return CL_ERR_NOMEM;
    }
    memset(out, 0, sizeof *out);
    double t0 = mono_s(), from = t0 + seconds / 4, end = t0 + seconds + 0.3;
    unsigned char buf[2048], ctl[256];
    for (double now = t0; now < end; now = mono_s()) {
        struct pollfd pf = {.fd = sock, .events = POLLIN};
        if (poll(&pf, 1, 20) <= 0)
            continue;
        struct sockaddr_in src;
        struct iovec iov = {buf, sizeof buf};
        struct msghdr m = {.msg_name = &src,
                           .msg_namelen = sizeof src,
                           .msg_iov = &iov,
                           .msg_iovlen = 1,
                           .msg_control = ctl,
                           .msg_controllen = sizeof ctl};
        ssize_t k = recvmsg(sock, &m, MSG_DONTWAIT);
        if (k < (ssize_t)sizeof(lab16_packet))
            continue;
        lab16_packet pk;
        memcpy(&pk, buf, sizeof pk);
        if (pk.magic != LAB16_MAGIC_DATA || pk.flow >= (uint32_t)nflows)
            continue;
        int tos = 0;
        for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h))
            if (h->cmsg_level == IPPROTO_IP && h->cmsg_type == IP_TOS)
                tos = *(unsigned char *)CMSG_DATA(h);
        rx_flow *f = &fl[pk.flow];
        f->from = src;
        f->known = 1;
        now = mono_s();
        double d = now - pk.sent_ns * 1e-9;
        if (d < base)
            base = d;
        if (now >= from && now < t0 + seconds) {
            out->packets++;
            f->bytes += k;
            if (nd < cap)
                delay[nd++] = d;
        }
        if ((tos & LAB16_ECN_CE) == LAB16_ECN_CE) {
            f->marked++;
            if (now - f->last_cnp >= 50e-6) { /* the NP: one CNP per 50 us per flow */
                lab16_packet cnp = {LAB16_MAGIC_CNP, pk.flow, pk.seq, pk.sent_ns};
                sendto(echo, &cnp, sizeof cnp, 0, (struct sockaddr *)&f->from, sizeof f->from);
                f->last_cnp = now;
                f->cnps++;
            }
        }
    }
    double sum = 0, sq = 0, window = seconds * 3 / 4;
    for (int i = 0; i < nflows; i++) {
        sum += fl[i].bytes;
        sq += fl[i].bytes * fl[i].bytes;
        out->marked += fl[i].marked;
        out->cnps += fl[i].cnps;
    }
    out->util = sum / (gbps * 125e6 * window);
    out->jain = sq > 0 ? sum * sum / (nflows * sq) : 0;
    if (nd) {
        qsort(delay, nd, sizeof *delay, cmp_double);
        out->qdelay_p99_us = (delay[(size_t)(0.99 * (nd - 1))] - base) * 1e6;
        out->queue_p99_kb = out->qdelay_p99_us * gbps * 125 / 1000;
    }
    free(fl);
    free(delay);
    return CL_OK;
}

cl_result net_mode(cl_run *run, cl_comm *comm)
{
    int rank = cl_comm_rank(comm), senders = cl_comm_size(comm) - 1;
    double gbps, seconds, rtt_us, qbound_kb;
    int rounds, port;
    CL_CHECK(cl_opt_num(run, "rtt", 0.1, 1e6, &rtt_us));
    CL_CHECK(cl_opt_num(run, "qbound", 1, 1e6, &qbound_kb));
    CL_CHECK(cl_opt_num(run, "line", 0.001, 100, &gbps));
    CL_CHECK(cl_opt_num(run, "seconds", 0.5, 30, &seconds));
    CL_CHECK(cl_opt_int(run, "rounds", 1, 20, &rounds));
    CL_CHECK(cl_opt_int(run, "udp-port", 1024, 65535, &port));
    /* the student's settings for this port: every rank asks, the same pure function */
    tune_args t = {.port = {.line_gbps = gbps,
                            .rtt_us = rtt_us,
                            .mtu = 1024,
                            .xoff_kb = 1e6,
                            .xon_kb = 1e5,
                            .qbound_kb = qbound_kb,
                            .cnp_us = 50}};
    cl_call_result res;
    CL_CHECK(cl_student_run(comm, "tune", &t, sizeof t, 0, &res));
    const char *bad = res.status != CL_OK ? res.error : params_problem(&t.p, gbps);
    if (bad) {
        cl_set_error("lab16_tune: %s", bad);
        return CL_ERR_INVALID;
    }
    int sock = -1, echo = -1;
    if (rank == 0) { /* the data socket, and the echoes' socket: CE in every header */
        int ce = LAB16_ECN_CE;
        echo = socket(AF_INET, SOCK_DGRAM, 0);
        if (echo >= 0)
            setsockopt(echo, IPPROTO_IP, IP_TOS, &ce, sizeof ce);
        sock = socket(AF_INET, SOCK_DGRAM, 0);
        int one = 1, big = 4 << 20;
        struct sockaddr_in me = {.sin_family = AF_INET,
                                 .sin_port = htons((uint16_t)port),
                                 .sin_addr.s_addr = htonl(INADDR_ANY)};
        if (sock < 0 || setsockopt(sock, IPPROTO_IP, IP_RECVTOS, &one, sizeof one) ||
            bind(sock, (struct sockaddr *)&me, sizeof me)) {
            cl_set_error("the receiver cannot listen on UDP port %d", port);
            if (sock >= 0)
                close(sock);
            sock = -1;
        } else {
            setsockopt(sock, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
        }
    }
    int64_t ok = rank != 0 || (sock >= 0 && echo >= 0);
    CL_CHECK(cl_agree(comm, CL_MIN, &ok, 1));
    if (!ok)
        return CL_ERR_IO;
    cl_report_str(run, "units", "rates Gb/s, queue KB (99th percentile of one-way delay x rate)");
    cl_result rc = CL_OK;
    for (int r = 0; r < rounds && rc == CL_OK; r++)
        for (int fixed = 1; fixed >= 0 && rc == CL_OK; fixed--) {
            rx_result rx = {0};
            double sent[2] = {0, 0};
            rc = cl_barrier(comm);
            if (rc != CL_OK)
                break;
            if (rank == 0) {
                rc = receive(sock, echo, senders, seconds, gbps, &rx);
            } else {
                lab16_send_args a = {.p = t.p,
                                     .line_gbps = gbps,
                                     .fixed_gbps = fixed ? gbps / senders : 0,
                                     .seconds = seconds,
                                     .dst_port = port,
                                     .flow = rank - 1,
                                     .packet_bytes = 1024};
                inet_pton(AF_INET, cl_opt(run, "receiver"), &a.dst_ip);
                rc = cl_student_run(comm, "send", &a, sizeof a, 0, &res);
                if (rc == CL_OK && res.status != CL_OK) {
                    cl_set_error("the sender: %s", res.error);
                    rc = res.status;
                }
                sent[0] = a.sent_bytes;
                sent[1] = (double)a.cnps;
            }
            if (rc != CL_OK)
                break;
            rc = cl_agree_sum(comm, sent, 2);
            cl_row *row = cl_row_begin(run, comm);
            cl_col_str(row, "senders", fixed ? "fixed" : "yours");
            cl_col_int(row, "round", r);
            cl_col_num(row, "util", rx.util, "%.4f");
            cl_col_num(row, "jain", rx.jain, "%.4f");
            cl_col_num(row, "qdelay_p99_us", rx.qdelay_p99_us, "%.1f");
            cl_col_num(row, "queue_p99_kb", rx.queue_p99_kb, "%.1f");
            cl_col_int(row, "packets", rx.packets);
            cl_col_int(row, "marked", rx.marked);
            cl_col_int(row, "cnps_sent", rx.cnps);
            cl_col_num(row, "cnps_received", sent[1], "%.0f");
            cl_col_num(row, "sent_mb", sent[0] / 1e6, "%.2f");
            cl_row_end(row);
        }
    if (sock >= 0)
        close(sock);
    if (echo >= 0)
        close(echo);
    return rc;
}
