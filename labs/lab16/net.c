/* net.c: lab 16's UDP sender, given: your reaction point decides how fast it sends.
 *
 * Packets leave paced at the reaction point's current rate (ECT(0) in the IP
 * header, so the bottleneck can mark them). The receiver echoes marked packets
 * back, at most one per 50 us per flow, with CE in the echo's IP header: the
 * sender reads the echoes' ECN bits (IP_RECVTOS) without blocking, and every
 * 10 us, or at once when a CE echo arrives, the reaction point gets one step
 * with what happened since the last (lab16_rp_step). */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "net.h"

#define STEP_NS 10000

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

cl_result lab16_net_sender(cl_comm *c, void *args)
{
    (void)c;
    lab16_send_args *a = args;
    unsigned char buf[2048], in[2048], ctl[128];
    uint64_t seq = 0;
    if (a->packet_bytes < (int)sizeof(lab16_packet) || a->packet_bytes > (int)sizeof buf ||
        !(a->line_gbps > 0))
        return CL_ERR_INVALID;
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    if (s < 0)
        return CL_ERR_IO;
    int tos = LAB16_TOS_ECT0, one = 1;
    setsockopt(s, IPPROTO_IP, IP_TOS, &tos, sizeof tos);
    setsockopt(s, IPPROTO_IP, IP_RECVTOS, &one, sizeof one);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)a->dst_port)};
    to.sin_addr.s_addr = a->dst_ip;
    lab16_rp rp = {.rc_gbps = a->line_gbps, .rt_gbps = a->line_gbps, .alpha = 1};
    lab16_event ev = {0};
    memset(buf, 0, sizeof buf);
    lab16_packet *pk = (lab16_packet *)buf;
    uint64_t t0 = now_ns(), end = t0 + (uint64_t)(a->seconds * 1e9), last = t0, next = t0;
    cl_result rc = CL_OK;
    for (uint64_t t = t0; t < end; t = now_ns()) {
        for (;;) { /* echoes: a CNP is an echo whose IP header carries CE */
            struct iovec iov = {in, sizeof in};
            struct msghdr m = {
                .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
            ssize_t k = recvmsg(s, &m, MSG_DONTWAIT);
            if (k < 0)
                break;
            int echo_tos = 0;
            for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h))
                if (h->cmsg_level == IPPROTO_IP && h->cmsg_type == IP_TOS)
                    echo_tos = *(unsigned char *)CMSG_DATA(h);
            if (k >= (ssize_t)sizeof(lab16_packet) &&
                ((lab16_packet *)in)->magic == LAB16_MAGIC_CNP &&
                (echo_tos & LAB16_ECN_CE) == LAB16_ECN_CE) {
                ev.cnp = 1;
                a->cnps++;
            }
        }
        if (ev.cnp || t - last >= STEP_NS) {
            if (a->fixed_gbps <= 0)
                lab16_rp_step(&a->p, a->line_gbps, &rp, &ev, (double)(t - last) / 1000);
            a->steps++;
            ev = (lab16_event){0};
            last = t;
        }
        double gbps = a->fixed_gbps > 0 ? a->fixed_gbps : rp.rc_gbps;
        if (!(gbps > 0) || gbps > a->line_gbps)
            gbps = gbps > 0 ? a->line_gbps : a->p.min_rate_mbps / 1000;
        if (t >= next) {
            *pk = (lab16_packet){LAB16_MAGIC_DATA, (uint32_t)a->flow, seq++, t};
            if (sendto(s, buf, (size_t)a->packet_bytes, 0, (struct sockaddr *)&to, sizeof to) < 0 &&
                errno != EAGAIN && errno != ENOBUFS) {
                rc = CL_ERR_IO;
                break;
            }
            ev.bytes += a->packet_bytes;
            a->sent_bytes += a->packet_bytes;
            next += (uint64_t)(a->packet_bytes * 8 / gbps); /* ns at gbps */
            if (next + 100000 < t)
                next = t; /* after a stall, no burst to catch up */
        } else {
            uint64_t wait = next - t < STEP_NS ? next - t : STEP_NS;
            struct timespec ts = {0, (long)wait};
            nanosleep(&ts, NULL);
        }
    }
    close(s);
    return rc;
}
