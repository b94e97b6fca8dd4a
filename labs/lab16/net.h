/* net.h: lab 16's UDP sender (net.c, given) and the receiver it talks to (the harness).
 *
 * A data packet carries its flow, its sequence number and the sender's
 * CLOCK_MONOTONIC time; its IP TOS field says ECT(0), so the bottleneck's RED
 * queue marks it CE instead of dropping it. The receiver reads the ECN bits of
 * every packet (IP_RECVTOS) and, as a notification point, echoes a marked
 * packet's header back with CE in the echo's own IP header (the CNP), at most
 * once per 50 us per flow; the sender reads the echo's ECN bits the same way. */
#ifndef COMMLAB_LAB16_NET_H
#define COMMLAB_LAB16_NET_H

#include <stdint.h>

#include "lab16.h"

#define LAB16_MAGIC_DATA 0x4c313644u /* "L16D" */
#define LAB16_MAGIC_CNP  0x4c313643u /* "L16C" */
#define LAB16_TOS_ECT0   0x02
#define LAB16_ECN_CE     0x03

typedef struct lab16_packet {
    uint32_t magic, flow;
    uint64_t seq;
    uint64_t sent_ns; /* the sender's CLOCK_MONOTONIC */
} lab16_packet;

/* The argument block of the sender entry ("send"). */
typedef struct lab16_send_args {
    lab16_params p;    /* the student's settings (the reaction point's part) */
    double line_gbps;  /* the sender's link */
    double fixed_gbps; /* > 0: send at this fixed rate, no reaction point (the baseline) */
    double seconds;    /* how long to send */
    uint32_t dst_ip;   /* the receiver, network byte order */
    int dst_port, flow, packet_bytes;
    double sent_bytes; /* out */
    long cnps, steps;  /* out: CNPs received, reaction point steps taken */
} lab16_send_args;

#ifdef CL_STUDENT_SIDE
/* The sender: paces packets at the reaction point's rate, reads CNPs. */
cl_result lab16_net_sender(cl_comm *c, void *args);
#endif

#endif /* COMMLAB_LAB16_NET_H */
