/* netem.c: lab 11's emulated network link under MPI_Iallreduce, on MPI's PMPI entry points.
 *
 * On a 2-core machine two MPI ranks that both compute leave no core for the
 * AllReduce: Open MPI's shared-memory path is memory copies done by the very
 * cores that compute, so nothing could overlap. A real NIC (or NVLink with
 * its copy engines) moves the bytes by DMA while the cores compute. This file
 * stands in for such a link, honestly and visibly:
 *
 * - MPI_Iallreduce, MPI_Test, MPI_Wait, MPI_Testall and MPI_Waitall are
 *   macros of lab11.h that land here (lab11_net_*; the real calls are MPI's
 *   PMPI_* entry points). MPI_Iallreduce returns a generalised request at once. The buffer
 *   is cut into NETEM_SEGMENTS segments that cross a link of `gbps` one after
 *   another: segment k occupies the wire for latency + bytes x 2(n-1)/n / bw.
 * - The wire is a queue of NETEM_DEPTH segments, refilled only when the
 *   process calls into MPI (MPI_Iallreduce, MPI_Test, MPI_Wait, MPI_Testall,
 *   MPI_Waitall): like an MPI library without an asynchronous progress thread
 *   driving a rendezvous protocol, no call means no new segment on the wire.
 * - When a segment's wire time is over, its data really moves: a real
 *   PMPI_Iallreduce of that segment, posted then (so grad is read then, as a
 *   NIC reads a buffer by DMA while sending) and completed in later calls.
 * - The wire costs no CPU (it is a clock); the real copies cost what they
 *   cost, a few percent of the wire time at the link speeds the driver uses.
 *
 * Without lab11_netem_configure() everything passes straight to MPI.
 */
#include <string.h>

#include "lab11.h"
#include "lab11_netem.h"

#define NETEM_SEGMENTS 16
#define NETEM_DEPTH 2
#define NETEM_MAX_OPS 8

enum { SEG_WAITING, SEG_ON_WIRE, SEG_MOVING, SEG_DONE };

typedef struct netem_seg {
    int state;
    double wire_end;
    MPI_Request req;
} netem_seg;

typedef struct netem_op {
    int used;       /* slot taken until the generalised request is freed */
    int complete;   /* MPI_Grequest_complete called */
    MPI_Request greq;
    const char *send; /* NULL for MPI_IN_PLACE */
    char *recv;
    int count, elem;
    double wire_factor; /* 2(n-1)/n: bytes each rank sends per byte reduced */
    MPI_Datatype type;
    MPI_Op op;
    MPI_Comm comm;
    int nseg, next, done;
    netem_seg seg[NETEM_SEGMENTS];
} netem_op;

static struct {
    int on;
    double bytes_per_s, latency_s;
    double wire_free; /* when the wire finishes what is queued */
    netem_op ops[NETEM_MAX_OPS];
} net;

void lab11_netem_configure(double gbps, double latency_s)
{
    net.on = gbps > 0;
    net.bytes_per_s = gbps * 1e9;
    net.latency_s = latency_s;
    net.wire_free = 0;
}

double lab11_netem_segment_s(size_t bytes, int nranks)
{
    double seg = (double)bytes / NETEM_SEGMENTS;
    return net.latency_s + seg * 2.0 * (nranks - 1) / nranks / net.bytes_per_s;
}

static void seg_range(const netem_op *o, int k, int *first, int *n)
{
    int base = o->count / o->nseg, extra = o->count % o->nseg;
    *first = k * base + (k < extra ? k : extra);
    *n = base + (k < extra);
}

/* Advance every operation to the present: finished wire slots start their real
 * data movement, finished movements retire, free wire slots take new segments. */
static void progress(void)
{
    double now = PMPI_Wtime();
    for (int i = 0; i < NETEM_MAX_OPS; i++) {
        netem_op *o = &net.ops[i];
        if (!o->used || o->complete)
            continue;
        int on_wire = 0;
        for (int k = 0; k < o->nseg; k++) {
            netem_seg *s = &o->seg[k];
            if (s->state == SEG_ON_WIRE && s->wire_end <= now) {
                int first, n;
                seg_range(o, k, &first, &n);
                size_t off = (size_t)first * (size_t)o->elem;
                PMPI_Iallreduce(o->send ? o->send + off : MPI_IN_PLACE, o->recv + off, n, o->type,
                                o->op, o->comm, &s->req);
                s->state = SEG_MOVING;
            }
            if (s->state == SEG_MOVING) {
                int flag = 0;
                PMPI_Test(&s->req, &flag, MPI_STATUS_IGNORE);
                if (flag) {
                    s->state = SEG_DONE;
                    o->done++;
                }
            }
            on_wire += s->state == SEG_ON_WIRE;
        }
        while (on_wire < NETEM_DEPTH && o->next < o->nseg) {
            netem_seg *s = &o->seg[o->next++];
            int first, n;
            seg_range(o, (int)(s - o->seg), &first, &n);
            double start = net.wire_free > now ? net.wire_free : now;
            s->wire_end = start + net.latency_s +
                          (double)n * o->elem * o->wire_factor / net.bytes_per_s;
            net.wire_free = s->wire_end;
            s->state = SEG_ON_WIRE;
            on_wire++;
        }
        if (o->done == o->nseg) {
            o->complete = 1;
            PMPI_Grequest_complete(o->greq);
        }
    }
}

static netem_op *find(MPI_Request r)
{
    for (int i = 0; i < NETEM_MAX_OPS; i++)
        if (net.ops[i].used && !net.ops[i].complete && net.ops[i].greq == r)
            return &net.ops[i];
    return NULL;
}

static int query_fn(void *state, MPI_Status *status)
{
    (void)state;
    PMPI_Status_set_elements(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int free_fn(void *state)
{
    ((netem_op *)state)->used = 0;
    return MPI_SUCCESS;
}

static int cancel_fn(void *state, int complete)
{
    (void)state, (void)complete;
    return MPI_SUCCESS;
}

int lab11_net_iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                         MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (!net.on)
        return PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request);
    netem_op *o = NULL;
    for (int i = 0; i < NETEM_MAX_OPS && !o; i++)
        if (!net.ops[i].used)
            o = &net.ops[i];
    if (!o || count < 0)
        return MPI_ERR_OTHER;
    int size = 0, n = 0;
    PMPI_Type_size(type, &size);
    PMPI_Comm_size(comm, &n);
    memset(o, 0, sizeof *o);
    o->used = 1;
    o->send = sendbuf == MPI_IN_PLACE ? NULL : sendbuf;
    o->recv = recvbuf;
    o->count = count;
    o->elem = size;
    o->type = type;
    o->op = op;
    o->comm = comm;
    o->wire_factor = n > 1 ? 2.0 * (n - 1) / n : 0;
    o->nseg = count < NETEM_SEGMENTS ? (count > 0 ? count : 1) : NETEM_SEGMENTS;
    int err = PMPI_Grequest_start(query_fn, free_fn, cancel_fn, o, &o->greq);
    if (err != MPI_SUCCESS) {
        o->used = 0;
        return err;
    }
    *request = o->greq;
    progress();
    return MPI_SUCCESS;
}

int lab11_net_test(MPI_Request *request, int *flag, MPI_Status *status)
{
    if (net.on)
        progress();
    return PMPI_Test(request, flag, status);
}

int lab11_net_testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    if (net.on)
        progress();
    return PMPI_Testall(count, requests, flag, statuses);
}

/* Block until o completes, polling as MPI_Wait does (a sleeping rank would wake
 * late on a loaded machine and hold up its peer's half of each segment). */
static void wait_op(netem_op *o)
{
    while (!o->complete)
        progress();
}

int lab11_net_wait(MPI_Request *request, MPI_Status *status)
{
    if (net.on) {
        netem_op *o = find(*request);
        if (o)
            wait_op(o);
    }
    return PMPI_Wait(request, status);
}

int lab11_net_waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    if (net.on)
        for (int i = 0; i < count; i++) {
            netem_op *o = find(requests[i]);
            if (o)
                wait_op(o);
        }
    return PMPI_Waitall(count, requests, statuses);
}
