/* lab16.c: congestion control: the DCQCN reaction point, and settings for a port.
 *
 * Read labs/lab16/README.md first; lab16.h has the types. Fill in the TODOs in
 * order. The same lab16_rp_step() runs against the harness's model of a switch
 * port (rp, incast) and inside the UDP senders of net.c (net). */
#include "lab16.h"

/* ========================================================================================= */
/* TODO 1: the reaction point                                                                 */
/* ========================================================================================= */

/* BEGIN SOLUTION */
/* A rate-increase event: fast recovery, additive or hyper increase by how many
 * timer and byte-counter events have passed since the last CNP. */
static void increase(const lab16_params *p, double line, lab16_rp *rp)
{
    int lo = rp->t_count < rp->bc_count ? rp->t_count : rp->bc_count;
    int hi = rp->t_count > rp->bc_count ? rp->t_count : rp->bc_count;
    if (lo >= p->f)
        rp->rt_gbps += (lo - p->f + 1) * p->rhai_mbps / 1000;
    else if (hi >= p->f)
        rp->rt_gbps += p->rai_mbps / 1000;
    if (rp->rt_gbps > line)
        rp->rt_gbps = line;
    rp->rc_gbps = (rp->rt_gbps + rp->rc_gbps) / 2;
}
/* END SOLUTION */

void lab16_rp_step(const lab16_params *p, double line_gbps, lab16_rp *rp, const lab16_event *ev,
                   double dt_us)
{
    /* BEGIN SOLUTION */
    if (ev->cnp) {
        rp->rt_gbps = rp->rc_gbps;
        rp->rc_gbps *= 1 - rp->alpha / 2;
        rp->alpha = (1 - p->g) * rp->alpha + p->g;
        if (rp->rc_gbps < p->min_rate_mbps / 1000)
            rp->rc_gbps = p->min_rate_mbps / 1000;
        rp->alpha_clock_us = rp->timer_clock_us = rp->bytes = 0;
        rp->t_count = rp->bc_count = 0;
        return;
    }
    rp->alpha_clock_us += dt_us;
    while (rp->alpha_clock_us >= p->alpha_us) {
        rp->alpha *= 1 - p->g;
        rp->alpha_clock_us -= p->alpha_us;
    }
    rp->timer_clock_us += dt_us;
    while (rp->timer_clock_us >= p->timer_us) {
        rp->timer_clock_us -= p->timer_us;
        rp->t_count++;
        increase(p, line_gbps, rp);
    }
    rp->bytes += ev->bytes;
    while (rp->bytes >= p->byte_kb * 1000) {
        rp->bytes -= p->byte_kb * 1000;
        rp->bc_count++;
        increase(p, line_gbps, rp);
    }
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab16) 1: on a CNP cut the rate and raise alpha; otherwise let alpha decay
    // every K us, and count timer and byte-counter events, each one a rate increase
    // (fast recovery, additive, hyper) as section 1 defines them.
    (void)p;
    (void)line_gbps;
    (void)rp;
    (void)ev;
    (void)dt_us;
    END SKELETON */
}

/* ========================================================================================= */
/* TODO 2: the settings                                                                       */
/* ========================================================================================= */

cl_result lab16_tune(const lab16_port *port, lab16_params *p)
{
    /* BEGIN SOLUTION */
    /* Thresholds: below the queue the owner accepts and below PFC's XOFF, which a
     * single flow can reach alone; marking starts early and gently (Pmax 10%). */
    double top = port->xoff_kb < port->qbound_kb ? port->xoff_kb : port->qbound_kb;
    p->kmax_kb = 0.5 * top;
    p->kmin_kb = 0.2 * top;
    p->pmax = 0.1;
    /* alpha forgets faster than the paper's 1/256: flows that joined late or were cut
     * hard converge to the same share within milliseconds */
    p->g = 1.0 / 64;
    p->alpha_us = 55;
    p->timer_us = 55;
    /* the paper's 40 Gb/s steps and byte counter, scaled with the line rate, so that
     * recovery takes the same time at any speed */
    double scale = port->line_gbps / 40;
    p->byte_kb = 10000 * scale;
    p->f = 5;
    p->rai_mbps = 40 * scale;
    p->rhai_mbps = 400 * scale;
    p->min_rate_mbps = port->line_gbps; /* a thousandth of the line rate */
    return p->kmin_kb > 0 ? CL_OK : CL_ERR_INVALID;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab16) 2: choose Kmin, Kmax, Pmax and the reaction point's timers and steps
    // for this port, so that any number of flows meeting at it fill the link, share it
    // fairly, keep the queue under qbound_kb and never trigger PFC (section 2).
    (void)port;
    (void)p;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
