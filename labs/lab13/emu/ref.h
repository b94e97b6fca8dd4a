/* ref.h: the harness's own verbs loops on a private two-node fabric, in the model's time:
 * the baselines of the emulated backend (what ib_write_bw and ib_send_lat would measure on
 * it) and the lab's frontier of message sizes and depths. They run in the harness process,
 * with no student program and no bytes moved. */
#ifndef LAB13_REF_H
#define LAB13_REF_H

#include <stddef.h>

/* Seconds for RDMA WRITEs of total bytes as total / msg messages, at most depth outstanding,
 * each signaled, completions polled 16 at a time (ib_write_bw's loop); -1 on a failure. */
double ref_write_seconds(int link, size_t msg, int depth, size_t total);

/* One-way seconds of a SEND/RECV ping-pong of bytes over iters round trips (ib_send_lat's
 * loop: receives posted ahead, inline sends when they fit in 64 bytes); -1 on a failure. */
double ref_pingpong_seconds(int link, size_t bytes, int iters);

#endif /* LAB13_REF_H */
