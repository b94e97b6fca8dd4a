/* harness_pattern.c: lab 30's check of the torus AllReduce's messages, for the collective
 * suite (cl_coll_entry.pattern).
 */
#include <stdio.h>

#include "lab30_harness.h"

/* --- the torus AllReduce's messages --------------------------------------------------------- */

/* Every transfer goes to a torus neighbour, and (when every block is non-empty) each rank
 * sends 2(k - 1) messages in each dimension of size k. */
int torus_pattern(const cl_comm *c, const cl_coll_args *a, const cl_trace_event *ev, int n,
                  char *why, size_t len)
{
    enum { MAX = 4096 };
    static int peer[MAX];
    static size_t bytes[MAX];
    int p = cl_comm_size(c), r = cl_comm_rank(c), dims[LAB30_MAX_DIMS], want = 0;
    lab30_torus_dims(p, LAB30_MAX_DIMS, dims);
    for (int d = 0; d < LAB30_MAX_DIMS; d++)
        want += dims[d] > 1 ? 2 * (dims[d] - 1) : 0;
    for (int sends = 0; sends < 2; sends++) {
        int m = cl_trace_transfers(ev, n, sends, peer, bytes, MAX);
        for (int i = 0; i < m; i++) {
            int differ = 0, near = 1;
            for (int d = 0, x = r, y = peer[i]; d < LAB30_MAX_DIMS; d++) {
                int k = dims[d], cx = x % k, cy = y % k;
                x /= k, y /= k;
                if (cx != cy) {
                    differ++;
                    near = near && ((cx + 1) % k == cy || (cy + 1) % k == cx);
                }
            }
            if (differ != 1 || !near) {
                snprintf(why, len,
                         "rank %d %s rank %d, which is not its neighbour on the %dx%dx%d torus", r,
                         sends ? "sent to" : "received from", peer[i], dims[0], dims[1], dims[2]);
                return 0;
            }
        }
        if (sends && a->count >= (size_t)p && m != want) {
            snprintf(why, len,
                     "rank %d sent %d messages; dimension-wise rings on the %dx%dx%d torus send "
                     "%d",
                     r, m, dims[0], dims[1], dims[2], want);
            return 0;
        }
    }
    return 1;
}
