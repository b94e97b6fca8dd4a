/* runtime.h: the student program's ranks and its end of the wire (internal to student/). */
#ifndef COMMLAB_STUDENT_RUNTIME_H
#define COMMLAB_STUDENT_RUNTIME_H

#include "boundary/wire.h"
#include "coroutine.h"
#include "p2p_backend.h"
#include "student.h"

/* A communicator of the student's program: the wire id the harness gave it. */
typedef struct st_comm {
    cl_comm base; /* first: cl_comm * casts to st_comm * */
    int id;       /* 0: the world */
    int local;    /* the local rank that owns it */
} st_comm;

enum { ST_IDLE, ST_RUNNABLE, ST_WAITING };

typedef struct st_rank {
    int local;
    int state;
    cl_coro coro;
    st_comm world;
    cl_entry_fn fn;
    void *args;
    cl_wire reply; /* the RESUME that ended the last wait */
    double time;   /* the clock the harness sent with the last CALL or RESUME */
    int next_req;  /* last request id handed out */
} st_rank;

/* The rank whose code is running. This function can't fail. */
st_rank *cl_rt_current(void);

/* Queue a record of the running rank for the harness; it leaves with the
 * next packet (at once with `now`). */
void cl_rt_emit(cl_wire *w, int now);

/* Send the queued records and give up control until the harness answers the
 * rank's last operation; returns its RESUME. */
const cl_wire *cl_rt_wait(st_rank *r);

/* What HELLO said: the backend, whether buffers are host memory, real time. */
int cl_rt_backend(void);
int cl_rt_host_buffers(void);

/* The forwarding backend (forward.c) and the world communicator it starts from. */
extern const cl_backend_ops cl_forward_ops;
void cl_rt_init_world(st_rank *r, int world_rank, int world_size);

#endif /* COMMLAB_STUDENT_RUNTIME_H */
