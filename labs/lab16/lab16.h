/* lab16.h: types and functions of lab 16 (congestion control: DCQCN).
 * The driver (driver.c) and the given sender (net.c) call the functions you write in lab16.c. */
#ifndef COMMLAB_LAB16_H
#define COMMLAB_LAB16_H

#include "commlab.h"

#define LAB16_MAX_FLOWS 64

/* The operator's DCQCN settings (Zhu et al., SIGCOMM 2015; NVIDIA's names in
 * the handout): the switch's ECN marking (the congestion point, CP) and every
 * sending NIC's reaction point (RP). */
typedef struct lab16_params {
    double kmin_kb, kmax_kb, pmax; /* CP: marking probability 0 below Kmin, rising to Pmax at
                                      Kmax, 1 above (KB = 1000 bytes of egress queue) */
    double g;                      /* alpha gain */
    double alpha_us;               /* K: alpha decays every K us without a CNP */
    double timer_us;               /* T: rate-increase timer */
    double byte_kb;                /* B: rate-increase byte counter (KB) */
    int f;                         /* F: fast-recovery events */
    double rai_mbps;               /* R_AI: additive increase of the target rate */
    double rhai_mbps;              /* R_HAI: hyper increase step */
    double min_rate_mbps;          /* the rate never goes below this */
} lab16_params;

/* One flow's reaction point. The harness sets rc = rt = the line rate,
 * alpha = 1 and the rest 0 when the flow starts, keeps it between steps and
 * sends at rc. */
typedef struct lab16_rp {
    double rc_gbps, rt_gbps; /* current and target rate */
    double alpha;
    double alpha_clock_us; /* since the last alpha update or CNP */
    double timer_clock_us; /* since the last timer event or CNP */
    double bytes;          /* sent since the last byte-counter event or CNP */
    int t_count, bc_count; /* timer and byte-counter events since the last CNP */
} lab16_rp;

/* What happened to one flow during one step. */
typedef struct lab16_event {
    int cnp;      /* a CNP arrived (at most one per step) */
    double bytes; /* bytes the flow sent */
} lab16_event;

/* What the operator knows when choosing the settings: not how many flows
 * will meet at a port. */
typedef struct lab16_port {
    double line_gbps; /* every link */
    double rtt_us;    /* base round trip, no queueing */
    double mtu;       /* bytes per packet */
    double xoff_kb;   /* PFC: an ingress port holding more than this in the switch is paused */
    double xon_kb;    /* ...and resumed below this */
    double qbound_kb; /* the egress queue the fabric's owner accepts (99th percentile) */
    double cnp_us;    /* the NP sends at most one CNP per flow per cnp_us */
} lab16_port;

/* --- written by the student in lab16.c, in the order of the handout --- */

/* 1. The reaction point: advance rp by one step of dt_us, in which ev
 * happened, under settings p on a link of line_gbps. */
void lab16_rp_step(const lab16_params *p, double line_gbps, lab16_rp *rp, const lab16_event *ev,
                   double dt_us);

/* 2. The decision: the settings for a port. CL_ERR_INVALID if none fits. */
cl_result lab16_tune(const lab16_port *port, lab16_params *p);

#endif /* COMMLAB_LAB16_H */
