/* session.h: the harness's state of its student program (internal to boundary/).
 *
 * spawn.c starts and stops the program and moves packets; proxy.c runs calls
 * and performs the operations they ask for.
 */
#ifndef COMMLAB_SESSION_H
#define COMMLAB_SESSION_H

#include <sys/types.h>

#include "boundary.h"
#include "boundary/wire.h"

/* A request the student program posted, by its id. */
typedef struct posted {
    int wid;          /* the student program's id */
    cl_request req;   /* the harness's request; {0} when the post failed */
    cl_result failed; /* why the post failed (reported by the wait), CL_OK */
    char why[160];
} posted;

/* What the harness keeps for one local rank. */
typedef struct proxy_rank {
    cl_comm *world;  /* the harness's communicator of this rank */
    cl_comm **comms; /* by id: [0] is world; NULL for freed ids */
    int ncomms;
    posted *reqs; /* outstanding posts */
    int nreqs, capreqs;
    cl_wire *in; /* records received, not yet handled (a queue) */
    int in_head, in_n, in_cap;
    int waiting;       /* blocked until a record arrives ("sim") */
    int busy;          /* inside cl_student_call */
    const char *entry; /* the entry it runs */
    unsigned allow;
    char forbidden[48];
    cl_trace_event *trace;
    int ntrace, captrace;
    uint64_t *mine; /* the buffers its code allocated, the only ones it may free */
    int nmine, capmine;
} proxy_rank;

typedef struct session {
    pid_t pid;
    int sock;
    int nlocal, first, world_size, backend;
    unsigned flags;
    int ready; /* the program's main() answered the hello */
    proxy_rank *ranks;
    cl_wire *out; /* records to send */
    int nout, capout;
    int dead;        /* the program died or timed out */
    cl_result death; /* CL_ERR_CRASHED or CL_ERR_TIMEOUT */
    char why[320];
} session;

extern session cl_session;

/* Queue a record for the program. CL_ERR_NOMEM. */
cl_result cl_session_queue(const cl_wire *w);

/* Send the queued records (the last packet says "now I wait"). */
cl_result cl_session_flush(void);

/* Read one packet (waiting until the deadline) and queue its records per
 * rank. *last = the packet's last flag. Marks the session dead (and fails) on
 * a fault, end of file, a malformed packet or the deadline. */
cl_result cl_session_receive(int *last);

/* Mark the session dead with a reason; returns code. */
cl_result cl_session_die(cl_result code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The next record for local rank r, exchanging packets as needed. */
cl_result cl_session_next(int r, cl_wire *out);

#endif /* COMMLAB_SESSION_H */
