/* harness_trace.c: what the harness's trace of a rank's last call says it did (every
 * cl_mem_alloc, cl_mem_free): the most memory it held. The bytes it sent are
 * cl_student_sent_bytes()'s (boundary.h). */
#include "lab22_harness.h"

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
