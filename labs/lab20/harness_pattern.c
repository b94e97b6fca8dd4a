/* harness_pattern.c: lab 20's message patterns, read from a rank's trace: the pairwise
 * exchange's schedule (the suite's AlltoAll and AlltoAllv, the pairwise calls of hier and
 * compare) and the two-level AlltoAll's messages inside and across nodes.
 */
#include <stdio.h>

#include "lab20_harness.h"

/* --- the pairwise schedule, read from a rank's trace ----------------------------------- */

/* Step s's partners: (r + s, r - s) mod p, or r xor s for both when p is a power of two. */
static int partner(int r, int p, int s, int xor_, int sends)
{
    if (xor_)
        return r ^ s;
    return sends ? (r + s) % p : (r - s + p) % p;
}

/* The sends (or receives) of a trace, other than to itself: their peers in the
 * order posted follow one schedule, each peer at most once, and never two in
 * flight: a wait comes between consecutive ones. For a uniform AlltoAll
 * (block >= 0) every peer appears once with `block` bytes; for AlltoAllv
 * (block < 0) a step may be left out when it has nothing to move. */
static int follows(const cl_comm *c, const cl_trace_event *ev, int n, int sends, long long block,
                   char *why, size_t len)
{
    int p = cl_comm_size(c), r = cl_comm_rank(c), op = sends ? CL_WOP_ISEND : CL_WOP_IRECV;
    const char *what = sends ? "sends to" : "receives from";
    int pow2 = (p & (p - 1)) == 0, fits[2] = {1, pow2};
    for (int x = 0; x < 2; x++) {
        int step = 1, waited = 1, seen = 0;
        for (int i = 0; i < n && fits[x]; i++) {
            if (ev[i].op == CL_WOP_WAIT)
                waited = 1;
            if (ev[i].op != op || ev[i].peer == r)
                continue;
            if (block >= 0 && ev[i].bytes == 0 && block == 0)
                continue;
            while (step < p && partner(r, p, step, x, sends) != ev[i].peer && block < 0)
                step++;
            if (step >= p || partner(r, p, step, x, sends) != ev[i].peer || !waited ||
                (block >= 0 && ev[i].bytes != (size_t)block))
                fits[x] = 0;
            step++;
            waited = 0;
            seen++;
        }
        if (fits[x] && block > 0 && seen != p - 1)
            fits[x] = 0;
        if (fits[x])
            return 1;
    }
    /* Say what went wrong in the shift schedule's terms. */
    int step = 1, waited = 1;
    for (int i = 0; i < n; i++) {
        if (ev[i].op == CL_WOP_WAIT)
            waited = 1;
        if (ev[i].op != op || ev[i].peer == r || (block == 0 && ev[i].bytes == 0))
            continue;
        if (!waited) {
            snprintf(why, len,
                     "%s rank %d while the exchange with the previous partner was "
                     "still in flight (pairwise exchange: one partner at a time)",
                     what, ev[i].peer);
            return 0;
        }
        if (block >= 0 && ev[i].bytes != (size_t)block) {
            snprintf(why, len, "%s rank %d: %zu bytes, not one block (%lld bytes)", what,
                     ev[i].peer, ev[i].bytes, block);
            return 0;
        }
        waited = 0;
        step++;
    }
    if (block > 0 && step != p)
        snprintf(why, len, "%s %d other ranks, not %d", what, step - 1, p - 1);
    else
        snprintf(why, len,
                 "%s its partners out of a pairwise order (rank r meets r+s and r-s, "
                 "or r xor s, at step s)",
                 what);
    return 0;
}

int pairwise_pattern(const cl_comm *c, const cl_coll_args *a, const cl_trace_event *ev, int n,
                     char *why, size_t len)
{
    long long block = (long long)(a->count / (size_t)cl_comm_size(c) * cl_dtype_size(a->dtype));
    return follows(c, ev, n, 1, block, why, len) && follows(c, ev, n, 0, block, why, len);
}

int pairwise_v_pattern(const cl_comm *c, const cl_coll_args *a, const cl_trace_event *ev, int n,
                       char *why, size_t len)
{
    (void)a;
    return follows(c, ev, n, 1, -1, why, len) && follows(c, ev, n, 0, -1, why, len);
}

int lab20_pairwise_fits(const cl_comm *c, size_t block_bytes, const cl_trace_event *ev, int n,
                        char *why, size_t len)
{
    return follows(c, ev, n, 1, (long long)block_bytes, why, len) &&
           follows(c, ev, n, 0, (long long)block_bytes, why, len);
}

/* --- the two-level pattern ------------------------------------------------------------- */

int lab20_hier_fits(const cl_comm *c, int local, size_t block_bytes, const cl_trace_event *ev,
                    int n, char *why, size_t len)
{
    int p = cl_comm_size(c), r = cl_comm_rank(c), g = p / local;
    size_t intra = 0, inter_n = 0;
    for (int i = 0; i < n; i++) {
        if (ev[i].op != CL_WOP_ISEND || ev[i].peer == r || ev[i].bytes == 0)
            continue;
        int q = ev[i].peer;
        if (q / local == r / local) {
            intra += ev[i].bytes;
        } else if (q % local != r % local) {
            snprintf(why, len,
                     "sends %zu bytes to rank %d, on another node and another local "
                     "index: across nodes a rank talks to its own local index only",
                     ev[i].bytes, q);
            return 0;
        } else if (ev[i].bytes != (size_t)local * block_bytes) {
            snprintf(why, len,
                     "sends %zu bytes to rank %d on another node, not the %d blocks "
                     "(%zu bytes) its node has for that rank",
                     ev[i].bytes, q, local, (size_t)local * block_bytes);
            return 0;
        } else {
            inter_n++;
        }
    }
    if (block_bytes && inter_n != (size_t)(g - 1)) {
        snprintf(why, len, "%zu messages across nodes, not one to each of the other %d nodes",
                 inter_n, g - 1);
        return 0;
    }
    if (intra != (size_t)(local - 1) * (size_t)g * block_bytes) {
        snprintf(why, len,
                 "moves %zu bytes inside its node, not the %zu of the aggregation "
                 "(%d blocks to each of the %d other local ranks)",
                 intra, (size_t)(local - 1) * (size_t)g * block_bytes, g, local - 1);
        return 0;
    }
    return 1;
}
