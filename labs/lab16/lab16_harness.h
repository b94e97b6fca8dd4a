/* lab16_harness.h: what lab 16's driver.c shares with its harness_*.c files.
 *
 * driver.c            the student's entries (both sides compile it) and the lab's table
 * harness_settings.c  DCQCN settings: the paper's, their checks, a case's port and
 *                     settings, their columns, and the tune mode
 * harness_rp.c        the harness's random numbers, a step of the student's reaction
 *                     points, and the rp mode
 * harness_incast.c    the incast mode: the modelled switch port's closed loop
 * harness_net.c       the net mode: UDP senders on a real RED/ECN bottleneck
 */
#ifndef COMMLAB_LAB16_HARNESS_H
#define COMMLAB_LAB16_HARNESS_H

#include "harness/harness.h"
#include "lab16.h"
#include "net.h"

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct rp_args {
    lab16_params p;
    double line_gbps, dt_us;
    int n;
    lab16_rp rp[LAB16_MAX_FLOWS];
    lab16_event ev[LAB16_MAX_FLOWS];
} rp_args;

typedef struct tune_args {
    lab16_port port;
    lab16_params p; /* out */
} tune_args;

#ifndef CL_STUDENT_SIDE
/* --- harness_settings.c --- */

/* The paper's settings (Zhu et al. 2015): the comparison run of `incast settings=paper`. */
extern const lab16_params paper;

/* Why p is not a usable setting for a line of `line` Gb/s, or NULL. */
const char *params_problem(const lab16_params *p, double line);

/* The case's kmin=.. kmax=.. f=..; the paper's settings for the rest. */
cl_result case_params(cl_case *c, lab16_params *p);

/* The case's switch port: line= rtt= xoff= xon= qbound=, checked. */
cl_result port_of(cl_case *c, lab16_port *port);

/* The settings' columns. */
void report_params(cl_row *row, const lab16_params *p);

/* --- harness_rp.c --- */

/* xorshift64*: a uniform number in [0, 1). */
double uniform(uint64_t *s);

/* Call the student's reaction points for n flows; CL_ERR_CRASHED/TIMEOUT end the mode. */
cl_result step_rps(cl_case *c, rp_args *a, cl_call_result *res);

/* --- harness_incast.c --- */

/* qsort's comparison of doubles, ascending. */
int cmp_double(const void *a, const void *b);

/* --- the modes --- */

cl_result rp_case(cl_case *c);                  /* harness_rp.c */
cl_result incast_case(cl_case *c);              /* harness_incast.c */
cl_result tune_case(cl_case *c);                /* harness_settings.c */
cl_result net_mode(cl_run *run, cl_comm *comm); /* harness_net.c */
#endif

#endif /* COMMLAB_LAB16_HARNESS_H */
