/* harness_trace.c: what the harness's trace of a rank's last call says it did (every
 * cl_send, cl_mem_alloc, cl_mem_free): the bytes it sent and the most memory it held. */
#include "lab22_harness.h"

/* Bytes the rank sent in its last call, from the trace. */
size_t sent_bytes(const cl_comm *c)
{
    int n;
    const cl_trace_event *ev = cl_student_trace(c, &n);
    size_t sum = 0;
    for (int i = 0; i < n; i++)
        if (ev[i].op == CL_WOP_ISEND)
            sum += ev[i].bytes;
    return sum;
}

/* The most memory the rank held at once in its last call: cl_mem_alloc less cl_mem_free. */
size_t peak_bytes(const cl_comm *c)
{
    int n;
    const cl_trace_event *ev = cl_student_trace(c, &n);
    long long live = 0, peak = 0;
    for (int i = 0; i < n; i++) {
        if (ev[i].op == CL_WOP_ALLOC)
            live += (long long)ev[i].bytes;
        else if (ev[i].op == CL_WOP_FREE)
            live -= (long long)ev[i].bytes;
        if (live > peak)
            peak = live;
    }
    return (size_t)peak;
}
