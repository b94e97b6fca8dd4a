/* driver.c: lab 09's plug-in: the student's rings in shared memory, stressed, raced, timed.
 *
 *   lab09 stress    [--nslots 4] [--chunk 4104] [--messages 3000]          (2 ranks)
 *   lab09 race      --student build/labs/lab09/lab09-student-tsan          (1 rank)
 *   lab09 allreduce                                                       (1-64 ranks)
 *   lab09 bench     [--bytes 64M] [--repeats R] [--nslots K --chunk B]     (2 ranks)
 *
 * The rings live in the region every rank's student program shares
 * (cl_shared_region): ring k goes from rank k to rank k+1. The harness lays
 * them out and starts their counters just below 2^64, so that they wrap. The
 * payloads are fresh bytes in the sender's private buffer, which the
 * receiving program cannot see, and the harness checks every byte that
 * arrives. race runs the same exchange between two ends of one program built
 * with ThreadSanitizer (tsan.c), as fibers that take turns (fibers.c); a
 * report ends it with status 66. bench times rank 0 -> rank 1 through the
 * student's ring, in the geometry the student chose (lab09_geometry), against
 * MPI's send/receive and memcpy. The argument blocks are in exchange.h; the
 * student program's side of the exchanges in exchange.c.
 *
 * This file holds the student's entries and the lab's table; the stress and race modes are
 * in harness_exchange.c, the allreduce mode in harness_allreduce.c and the bench mode in
 * harness_bench.c; the payloads they send are made and checked in harness_payload.c, the
 * rings laid out in harness_rings.c (lab09_harness.h).
 */
#include "lab09_harness.h"

#ifdef CL_STUDENT_SIDE

static cl_result stress(cl_comm *c, void *args)
{
    (void)c;
    stress_args *a = args;
    lab09_ring tx, rx;
    return lab09_exchange(lab09_ring_of(&a->L, a->tx, &tx), lab09_ring_of(&a->L, a->rx, &rx),
                          a->sbuf, a->rbuf, a->n, a->ssize, a->rsize, a->pause_us);
}

static cl_result race(cl_comm *c, void *args)
{
    (void)c;
    return lab09_race_ends(args);
}

static cl_result transfer(cl_comm *c, void *args)
{
    (void)c;
    transfer_args *a = args;
    lab09_ring r;
    lab09_ring_of(&a->L, 0, &r);
    return a->send ? lab09_sendrecv(&r, a->buf, a->bytes, NULL, NULL, 0)
                   : lab09_sendrecv(NULL, NULL, 0, &r, a->buf, a->bytes);
}

static cl_result geometry(cl_comm *c, void *args)
{
    (void)c;
    geometry_args *a = args;
    lab09_geometry(a->budget, &a->nslots, &a->chunk);
    return CL_OK;
}

static cl_result allreduce(cl_comm *c, void *args)
{
    allreduce_args *a = args;
    int p = cl_comm_size(c), r = cl_comm_rank(c);
    lab09_ring right, left;
    lab09_comm lc = {.rank = r,
                     .size = p,
                     .to_right = lab09_ring_of(&a->L, r, &right),
                     .from_left = lab09_ring_of(&a->L, (r - 1 + p) % p, &left),
                     .scratch = a->scratch,
                     .scratch_bytes = a->scratch_bytes};
    return lab09_allreduce(&lc, a->buf, a->count, a->t, a->op);
}

CL_STUDENT_ENTRIES({"stress", stress}, {"race", race}, {"transfer", transfer},
                   {"geometry", geometry}, {"allreduce", allreduce});

#else

const cl_lab cl_lab_def = {
    .name = "lab09",
    .title = "共享内存通信: a lock-free SPSC chunked ring and an AllReduce on it",
    .modes =
        (const cl_mode[]){
            {.name = "stress",
             .help = "2 ranks send each other messages of every size at once",
             .ranks = stress_mode,
             .min_ranks = 2,
             .backends = "cpu"},
            {.name = "race",
             .help = "the same between two ends of one program (the ThreadSanitizer build)",
             .ranks = race_mode,
             .backends = "cpu"},
            {.name = "allreduce",
             .help = "your AllReduce on the rings: 7 counts, 4 types, 4 ops",
             .ranks = allreduce_mode,
             .backends = "cpu"},
            {.name = "bench",
             .help = "rank 0 to rank 1 at --bytes: your ring, MPI, memcpy",
             .ranks = bench_mode,
             .min_ranks = 2,
             .backends = "cpu"},
            {0}},
    .options =
        (const cl_option[]){
            {.name = "nslots", .help = "slots per ring (stress, race, allreduce: 4; bench: yours)"},
            {.name = "chunk",
             .help = "bytes per slot (stress 1000, race 200, allreduce 4104; "
                     "bench: yours)"},
            {.name = "messages", .help = "stress and race: messages each way (3000)"},
            {0}},
};

#endif
