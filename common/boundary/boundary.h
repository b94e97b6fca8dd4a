/* boundary.h: the harness's side of the trust boundary: start the student's program, call it.
 *
 * The student's code never runs in the harness's process. The harness starts
 * the student's program (student/) once per process, before MPI or CUDA are
 * initialised, under a system-call filter and, when it runs as root, as the
 * user "nobody" (sandbox.c). To run one of the student's functions on a rank,
 * a rank body calls cl_student_call(): the call's arguments go to the shared
 * arena, the function runs in the student's program, and every operation it
 * asks for (a send, a reduction, a split) comes back here, is checked against
 * the rank's buffers and the call's allowed operations, recorded in the
 * rank's trace, performed on the harness's own communicator, and answered.
 * The harness times the call from its own side (the rank's clock before the
 * call starts and after it returns), so nothing the student's program reports
 * is needed to grade it.
 *
 * One student program per process. On "cpu" and "gpu" it hosts the one rank
 * of this process; on "sim" it hosts every simulated rank.
 */
#ifndef COMMLAB_BOUNDARY_H
#define COMMLAB_BOUNDARY_H

#include <stddef.h>

#include "boundary/wire.h"
#include "p2p.h"
#include "result.h"

/* What the student's program may do beyond computing and calling the
 * interface (a lab asks for these in its plug-in). */
enum cl_permit {
    CL_PERMIT_THREADS = 1u << 0,  /* threads (clone with CLONE_THREAD) */
    CL_PERMIT_AFFINITY = 1u << 1, /* sched_setaffinity and friends: binding */
    CL_PERMIT_MLOCK = 1u << 2,    /* mlock: page-locked memory */
    CL_PERMIT_NET = 1u << 3,      /* TCP/IP sockets */
    CL_PERMIT_FILES = 1u << 4,    /* open files read-only */
    CL_PERMIT_DEVICES = 1u << 5,  /* open files read-write (never create or truncate), any
                                     ioctl, and RLIMIT_MEMLOCK raised where the harness may:
                                     a user-space driver (libibverbs on an RDMA NIC) */
};

/* The operations a call may ask for; anything else is refused with
 * CL_ERR_FORBIDDEN and reported in cl_call_result.forbidden. */
enum cl_allow {
    CL_ALLOW_P2P = 1u << 0,     /* send, recv, isend, irecv, wait, test, groups */
    CL_ALLOW_LOCAL = 1u << 1,   /* cl_reduce_local, cl_copy_local */
    CL_ALLOW_MEMORY = 1u << 2,  /* cl_mem_alloc, cl_mem_free */
    CL_ALLOW_HOST = 1u << 3,    /* cl_mem_upload, cl_mem_download */
    CL_ALLOW_BARRIER = 1u << 4, /* cl_barrier */
    CL_ALLOW_SPLIT = 1u << 5,   /* cl_comm_split, cl_comm_free */
    CL_ALLOW_AGREE = 1u << 6,   /* cl_agree */
    CL_ALLOW_LAB = 1u << 7,     /* cl_lab_call: the lab's own operations */
    CL_ALLOW_ALL = 0xffu,
    /* What a collective may use: transfers, local work and its own buffers. */
    CL_ALLOW_COLLECTIVE = CL_ALLOW_P2P | CL_ALLOW_LOCAL | CL_ALLOW_MEMORY,
    /* Not a class of operations: keep no trace of this call (cl_student_trace is
     * then empty). Thousands of simulated ranks' traces would cost gigabytes. */
    CL_CALL_UNTRACED = 1u << 16,
};

typedef struct cl_student_opts {
    const char *program; /* path of the student's program */
    unsigned permits;    /* CL_PERMIT_* */
    size_t arena_bytes;  /* shared memory, slots and heap; 0: 64 MiB */
    int nlocal;          /* ranks it will host */
    const char *env[4];  /* extra NAME=VALUE settings for its environment (NULL: none),
                            e.g. the folder of a library that stands in for a device */
} cl_student_opts;

/* Start the student's program (fork and exec; nothing else runs in it yet).
 * CL_ERR_IO with the reason when it cannot be started. */
cl_result cl_student_start(const cl_student_opts *o);

/* Say hello once the ranks are known: backend is CL_WIRE_CPU/GPU/SIM, the
 * local ranks are world ranks first .. first + nlocal - 1 of world_size. Waits
 * (until the process's deadline, deadline.h) for the program to map the arena. */
cl_result cl_student_hello(int backend, int first, int world_size, unsigned flags);

/* Tell the program to exit, wait briefly, then kill it; unmap the arena.
 * Safe to call when nothing was started. Returns how it ended, for messages. */
void cl_student_stop(void);

/* Whether a student program is running in this process. */
int cl_student_running(void);

/* One call of an entry of the student's program on the rank of comm (a world
 * communicator of the harness). args (args_bytes, at most the slot's size) is
 * copied to the rank's slot; after the call, out_bytes of the slot are copied
 * to out (the entry writes its results back into its argument block). */
typedef struct cl_call {
    const char *entry;
    const void *args;
    size_t args_bytes;
    void *out;
    size_t out_bytes;
    unsigned allow; /* CL_ALLOW_* */
} cl_call;

typedef struct cl_call_result {
    cl_result status;   /* what the entry returned; CL_ERR_CRASHED, CL_ERR_TIMEOUT */
    char error[320];    /* its reason */
    char forbidden[48]; /* the first operation refused, "" if none */
    double seconds;     /* the call's duration on the rank's clock, measured by the harness */
} cl_call_result;

/* Run the call and serve its operations until it returns. Returns CL_OK when
 * the harness did its part, whatever the entry did (see res->status);
 * CL_ERR_CRASHED or CL_ERR_TIMEOUT when the student's program died or went
 * silent (res says how), after which no further call can run. */
cl_result cl_student_call(cl_comm *comm, const cl_call *call, cl_call_result *res);

/* Where the argument block of the rank of comm lies in the student's program
 * during a call (its slot in the arena), for argument blocks that point into
 * themselves (an array after the struct). NULL without a student program. */
void *cl_student_args_home(const cl_comm *comm);

/* The operations the rank of comm asked for in its last call, in order. */
typedef struct cl_trace_event {
    int op;         /* CL_WOP_* of boundary/wire.h: a cl_send is an ISEND (then a WAIT) */
    int comm;       /* communicator id (0: the world) */
    int peer;       /* in that communicator; -1 for local operations */
    int peer_world; /* the peer's world rank; -1 */
    size_t bytes;   /* transfer or local work size (elements for reductions); an ALLOC's or
                       a FREE's buffer size */
    double time;    /* the rank's clock when the harness performed it */
    long long code; /* CL_WOP_LAB: the lab's operation code; else 0 */
} cl_trace_event;

const cl_trace_event *cl_student_trace(const cl_comm *comm, int *n);

/* The bytes the rank of comm sent in its last call (its ISENDs), from its trace; with
 * received, also the bytes it received (its IRECVs). */
size_t cl_student_sent_bytes(const cl_comm *comm, size_t *received);

/* Map the memory of descriptor fd (bytes long) into the student's program at
 * base too (CL_REGION_BASE, where the harness has it mapped already): the
 * region the ranks share (harness/region.c). */
cl_result cl_student_region(int fd, void *base, size_t bytes);

/* The handler of cl_lab_call (the lab's own operations): code, and a private
 * copy of the argument block that goes back when it returns CL_OK. */
typedef cl_result (*cl_lab_handler)(cl_comm *comm, int code, void *args, size_t bytes);
void cl_student_set_lab_handler(cl_lab_handler h);

/* Whether the student program's ranks may read buffers directly: the
 * backend's buffers are host memory (cpu). */
int cl_student_host_buffers(void);

#endif /* COMMLAB_BOUNDARY_H */
