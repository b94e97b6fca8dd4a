/* wire.h: the messages between the harness and the student's program (both sides include it).
 *
 * The student's functions run in a program of their own (student/), started
 * by the harness (boundary/spawn.c) under a system-call filter and, when the
 * harness runs as root, another user. The two processes share:
 *   - a SOCK_SEQPACKET socket, fd CL_WIRE_FD in the student's program, which
 *     carries packets of fixed-size records (cl_wire);
 *   - the arena: shared memory mapped at CL_ARENA_BASE in both processes, so
 *     that a pointer into it means the same thing on both sides. It holds one
 *     slot per local rank (text, call arguments, staging for small copies)
 *     and, on "cpu", the ranks' buffers.
 * Nothing else: the harness's own memory (inputs it will check, timings,
 * results) is out of the student program's reach.
 *
 * A conversation: the harness sends HELLO; the student program maps the
 * arena and answers READY. To run a function the harness sends CALL for a
 * rank; the student program runs it and sends, for that rank, OP records (the
 * rank's calls of the p2p.h interface) and finally RETURN. Posting operations
 * (ISEND, IRECV, COMM_FREE) get no answer; every other OP waits for a RESUME. A
 * packet whose `last` is 1 means "now I wait for you"; the student program
 * also sends posts at once, with last = 0, when the harness runs in real time
 * (cpu, gpu), so that a transfer starts when it is posted.
 *
 * The harness trusts nothing in a record from the student program: every
 * field is checked before use (boundary/proxy.c).
 */
#ifndef COMMLAB_WIRE_H
#define COMMLAB_WIRE_H

#include <stdint.h>

#define CL_WIRE_FD       3 /* the socket, in the student's program */
#define CL_WIRE_ARENA_FD 4 /* the arena's memfd, in the student's program */
#define CL_WIRE_MAGIC    0x434c5732u
#define CL_WIRE_BATCH    128 /* records per packet */

#define CL_ARENA_BASE  ((uintptr_t)0x200000000000ULL)
#define CL_REGION_BASE ((uintptr_t)0x240000000000ULL) /* the ranks' shared region */

/* A local rank's slot in the arena. */
#define CL_SLOT_TEXT       4096        /* entry name (CALL), error text (RETURN, RESUME) */
#define CL_SLOT_ARGS       (60 * 1024) /* the call's argument block */
#define CL_SLOT_STAGE      (64 * 1024) /* UPLOAD/DOWNLOAD data, WAIT ids, AGREE values */
#define CL_SLOT_BYTES      (CL_SLOT_TEXT + CL_SLOT_ARGS + CL_SLOT_STAGE)
#define CL_ARENA_SLOTS_OFF 4096 /* slots start here; the heap follows them */

enum cl_wire_kind {
    CL_W_HELLO = 1, /* harness: rank = local ranks, peer = first world rank, aux = world size,
                       bytes = arena bytes, op = backend (CL_WIRE_CPU...), arg = flags */
    CL_W_READY,     /* student: the arena is mapped */
    CL_W_CALL,      /* harness: rank starts the entry named in its text slot, args at addr,
                       bytes long; time = its clock */
    CL_W_RESUME,    /* harness: the rank's waiting OP finished with status; reason in its
                       text slot when status != 0; addr/bytes/aux/arg: results; time */
    CL_W_EXIT,      /* harness: end the program */
    CL_W_OP,        /* student: an operation (op) of the rank */
    CL_W_RETURN,    /* student: the rank's entry returned status (reason in its text slot) */
    CL_W_FAULT,     /* student: the program is dying: aux = signal, addr = fault address,
                       arg = system call number (SIGSYS), rank = the rank that was running */
    CL_W_REGION,    /* harness: map the region whose descriptor comes with this packet
                       (SCM_RIGHTS) at addr, bytes long; alone in its packet */
};

enum cl_wire_backend { CL_WIRE_CPU, CL_WIRE_GPU, CL_WIRE_SIM };

#define CL_WIRE_HOST_BUFFERS 2u /* HELLO flag: buffers are host memory in the arena */

/* Operations. "id" is the student program's request id (arg), unique per rank. */
enum cl_wire_op {
    CL_WOP_ISEND = 1, /* comm, peer, addr, bytes, arg = id (no answer) */
    CL_WOP_IRECV,     /* comm, peer, addr, bytes, arg = id (no answer) */
    CL_WOP_WAIT,      /* comm, arg = n ids, as int32 in the stage area */
    CL_WOP_TEST,      /* comm, arg = id; answer aux = 1 when done */
    CL_WOP_BARRIER,   /* comm */
    CL_WOP_SPLIT,     /* comm, peer = color, arg = key; answer arg = new comm id (0: none),
                         aux = rank in it, bytes = its size */
    CL_WOP_COMM_FREE, /* comm */
    CL_WOP_AGREE,     /* comm, peer = cl_op, arg = n; int64 values in the stage area, both ways */
    CL_WOP_ALLOC,     /* bytes; answer addr */
    CL_WOP_FREE,      /* addr */
    CL_WOP_UPLOAD,    /* addr = buffer, bytes <= CL_SLOT_STAGE, data in the stage area */
    CL_WOP_DOWNLOAD,  /* addr = buffer, bytes <= CL_SLOT_STAGE; answer data in the stage area */
    CL_WOP_REDUCE,    /* addr = inout, addr2 = in, bytes = count, arg = dtype << 8 | op */
    CL_WOP_COPY,      /* addr = dst, addr2 = src, bytes */
    CL_WOP_TIME,      /* answer time: the rank's clock once its device is idle ("gpu") */
    CL_WOP_LAB,       /* comm, arg = the lab's operation code, bytes <= CL_SLOT_STAGE of
                         arguments in the stage area, both ways (cl_lab_call) */
    CL_WOP_COUNT
};

typedef struct cl_wire {
    uint16_t kind, op;
    int32_t rank; /* local rank: 0 .. local ranks - 1 */
    int32_t comm; /* communicator id, 0 for the world */
    int32_t peer;
    uint64_t addr, addr2;
    uint64_t bytes;
    int64_t arg;
    int32_t status; /* a cl_result */
    int32_t aux;
    double time;
} cl_wire;

typedef struct cl_wire_packet {
    uint32_t n;    /* records that follow */
    uint32_t last; /* 1: the sender now waits for an answer */
    cl_wire rec[CL_WIRE_BATCH];
} cl_wire_packet;

/* Bytes of a packet of n records, as sent. */
#define CL_WIRE_PACKET_BYTES(n) (2 * sizeof(uint32_t) + (size_t)(n) * sizeof(cl_wire))

/* Address of local rank r's slot in an arena mapped at CL_ARENA_BASE. */
#define CL_SLOT(r)          ((char *)CL_ARENA_BASE + CL_ARENA_SLOTS_OFF + (size_t)(r)*CL_SLOT_BYTES)
#define CL_SLOT_TEXT_OF(r)  (CL_SLOT(r))
#define CL_SLOT_ARGS_OF(r)  (CL_SLOT(r) + CL_SLOT_TEXT)
#define CL_SLOT_STAGE_OF(r) (CL_SLOT(r) + CL_SLOT_TEXT + CL_SLOT_ARGS)

/* Name of an operation, for messages ("cl_isend"); "?" when out of range. */
static inline const char *cl_wire_op_name(int op)
{
    static const char *const names[CL_WOP_COUNT] = {"?",
                                                    "cl_isend",
                                                    "cl_irecv",
                                                    "cl_wait",
                                                    "cl_test",
                                                    "cl_barrier",
                                                    "cl_comm_split",
                                                    "cl_comm_free",
                                                    "cl_agree",
                                                    "cl_mem_alloc",
                                                    "cl_mem_free",
                                                    "cl_mem_upload",
                                                    "cl_mem_download",
                                                    "cl_reduce_local",
                                                    "cl_copy_local",
                                                    "cl_comm_time",
                                                    "cl_lab_call"};
    return op > 0 && op < CL_WOP_COUNT ? names[op] : "?";
}

#endif /* COMMLAB_WIRE_H */
