/* session.h: lab 13's harness side (never in the student's program):
 *
 * session/session.c    a run's emulated fabric and host memory, the connection steps on both
 *                      ranks (each called, timed and checked against what the HCA knows), and
 *                      one checked RDMA WRITE of fresh data; the modes are built from these
 * harness_provider.c   which libibverbs the student's program runs on, and the emulated HCA
 *                      serving the requests of each rank's provider
 * harness_checks.c     the connect, write and lat modes
 * harness_bandwidth.c  the bw, plan and sweep modes
 *
 * driver.c (the student's entries and the lab's table) names what the last three define. */
#ifndef COMMLAB_LAB13_SESSION_H
#define COMMLAB_LAB13_SESSION_H

#include "emu/hca.h"
#include "harness/harness.h"
#include "lab13.h"
#include "lab13_args.h"
#include "shm.h"

#define MAX_WR     128 /* cfg.max_wr: the deepest any mode asks for */
#define MAX_RECV   16
#define PER_RANK   ((size_t)24 << 20) /* each node's host memory */
#define PLAN_TOTAL ((size_t)8 << 20)
#define PLAN_SHARE 0.90 /* of the link */
#define PLAN_SLACK 2.0  /* bytes in flight, times the fewest that reach it */

typedef struct l13_report {
    int status;        /* the student's function's cl_result */
    int failed;        /* 1: the harness's checks of the step failed */
    char why[480];     /* the function's error, or the check that failed */
    lab13_endpoint ep; /* open: the local endpoint; exchange: the remote received */
} l13_report;

typedef struct l13_board {
    l13_report rep[2];
} l13_board;

typedef struct l13_state {
    int emu;            /* the emulated provider (else a NIC) */
    int link;           /* HCA_LINK_* (emu) */
    hca_fabric *fabric; /* emu */
    cl_shm shm;         /* the board, then the fabric */
    l13_board *bd;
    char *host; /* this node's host memory (in the ranks' shared region) */
    lab13_conn *conn;
    lab13_endpoint local, remote;
    lab13_config cfg;
} l13_state;

typedef struct l13_steps {
    cl_run *run;
    cl_comm *c;
    int failed; /* a step failed: the following are not run */
    int report; /* add a row per step */
} l13_steps;

typedef struct l13_write_result {
    int status;
    char why[480];
    long long wrong, writes, write_bytes, min_len, max_len, errors;
    int max_outstanding;
    double seconds;
} l13_write_result;

/* The run's state on this rank (the harness's, never the student program's). */
extern l13_state L13;

/* Set up the run on the two ranks: the shared host memory, the board and, with the
 * emulated provider, the fabric; teardown() unmaps them. */
cl_result l13_setup(cl_run *run, cl_comm *c);
void l13_teardown(void);

/* Call entry on this rank, timed: the model's time with the emulated provider (up to the
 * last completion of what it posted), the harness's clock on a NIC. seconds and ctr may be
 * NULL. */
cl_result l13_call(cl_comm *c, const char *entry, void *args, size_t bytes, cl_call_result *res,
                   double *seconds, hca_counters *ctr);

/* Both ranks start a timed call together (the model's clocks agree). */
cl_result l13_together(cl_comm *c);

/* The steps: open, init, exchange, rtr, rts on both ranks, each reported (rows when
 * s->report) and checked; a failed step marks s->failed and the following are not run. */
cl_result l13_connect_all(l13_steps *s);
cl_result l13_step_close(l13_steps *s);
cl_result l13_end_step(l13_steps *s, const char *name, l13_report *mine);
void l13_not_run(l13_steps *s, const char *name);
int l13_fail(l13_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The connection other modes start from (a failure says which rank and why), and its end. */
cl_result l13_connected(cl_run *run, cl_comm *c);
cl_result l13_close(cl_run *run, cl_comm *c);

/* Rank 0 writes [offset, offset + total) to rank 1 as msg-byte WRITEs, depth outstanding,
 * to remote (the true endpoint, or a damaged one); rank 1 checks the bytes. */
cl_result l13_write(cl_run *run, cl_comm *c, size_t offset, size_t total, size_t msg, int depth,
                    const lab13_endpoint *remote, l13_write_result *w);
void l13_write_row(cl_run *run, cl_comm *c, const char *name, size_t offset, size_t total,
                   size_t msg, int depth, const l13_write_result *w);

/* --- the student's program (harness_provider.c) ----------------------------------------- */

/* --verbs emu: the emulated provider for the student's program; nic: the machine's device. */
cl_result student_setup(cl_run *run, cl_student_opts *o);

/* The emulated HCA serves the requests of this rank's provider. */
cl_result lab_op(cl_run *run, cl_comm *comm, int code, void *args, size_t bytes);

/* --- the modes (harness_checks.c, harness_bandwidth.c) ------------------------------------ */

cl_result connect_mode(cl_run *run, cl_comm *c);
cl_result write_mode(cl_run *run, cl_comm *c);
cl_result lat_mode(cl_run *run, cl_comm *c);
cl_result bw_mode(cl_run *run, cl_comm *c);
cl_result plan_mode(cl_run *run, cl_comm *c);
cl_result sweep_mode(cl_run *run, cl_comm *c);

#endif /* COMMLAB_LAB13_SESSION_H */
