/* xfer.c: lab03_op(), the transfer the lab gives you: one operation of a pair.
 *
 * The harness answers LAB03_OP_BEGIN with the buffers of operation k, filled
 * with fresh data; the operation then moves them with the point-to-point
 * interface, as p2pBandwidthLatencyTest's copies and ping-pongs do. The
 * harness checks every buffer that arrived, and records when each operation
 * began and ended.
 */
#include <stdint.h>

#include "lab03.h"
#include "student/student.h"
#include "xfer.h"

cl_result lab03_op(cl_comm *comm, lab03_kind kind, int i, int j, size_t bytes, int k)
{
    lab03_begin b = {.kind = (int32_t)kind, .i = i, .j = j, .k = k, .bytes = bytes};
    CL_CHECK(cl_lab_call(comm, LAB03_OP_BEGIN, &b, sizeof b));
    void *send = (void *)(uintptr_t)b.send, *recv = (void *)(uintptr_t)b.recv;
    int me = cl_comm_rank(comm), peer = me == i ? j : i;
    cl_request r[2];
    switch (kind) {
    case LAB03_UNI: return me == i ? cl_send(comm, send, bytes, j) : cl_recv(comm, recv, bytes, i);
    case LAB03_BIDIR: /* both directions in flight at once */
        CL_CHECK(cl_irecv(comm, recv, bytes, peer, &r[0]));
        CL_CHECK(cl_isend(comm, send, bytes, peer, &r[1]));
        return cl_waitall(comm, 2, r);
    case LAB03_LATENCY: /* i's message, then j's answer */
        if (me == i) {
            CL_CHECK(cl_send(comm, send, bytes, j));
            return cl_recv(comm, recv, bytes, j);
        }
        CL_CHECK(cl_recv(comm, recv, bytes, i));
        return cl_send(comm, send, bytes, i);
    }
    cl_set_error("lab03_op: unknown kind %d", (int)kind);
    return CL_ERR_INVALID;
}
