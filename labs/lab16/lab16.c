/* lab16.c: congestion control: the DCQCN reaction point, and settings for a port.
 *
 * Read labs/lab16/README.md first; lab16.h has the types. Fill in the TODOs in
 * order. The same lab16_rp_step() runs against the harness's model of a switch
 * port (rp, incast) and inside the UDP senders of net.c (net). */
#include "lab16.h"

/* ========================================================================================= */
/* TODO 1: the reaction point                                                                 */
/* ========================================================================================= */

void lab16_rp_step(const lab16_params *p, double line_gbps, lab16_rp *rp, const lab16_event *ev,
                   double dt_us)
{
    // TODO(lab16) 1: on a CNP cut the rate and raise alpha; otherwise let alpha decay
    // every K us, and count timer and byte-counter events, each one a rate increase
    // (fast recovery, additive, hyper) as section 1 defines them.
    (void)p;
    (void)line_gbps;
    (void)rp;
    (void)ev;
    (void)dt_us;
}

/* ========================================================================================= */
/* TODO 2: the settings                                                                       */
/* ========================================================================================= */

cl_result lab16_tune(const lab16_port *port, lab16_params *p)
{
    // TODO(lab16) 2: choose Kmin, Kmax, Pmax and the reaction point's timers and steps
    // for this port, so that any number of flows meeting at it fill the link, share it
    // fairly, keep the queue under qbound_kb and never trigger PFC (section 2).
    (void)port;
    (void)p;
    return CL_ERR_NOT_IMPLEMENTED;
}
