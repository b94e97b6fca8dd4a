/* patterns.c: the message patterns of the classic collective algorithms (patterns.h). */
#include <stdio.h>

#include "patterns.h"

#define MAXX 256 /* transfers one rank may make in one call */

typedef struct xfers {
    int n;
    int peer[MAXX];
    size_t bytes[MAXX];
} xfers;

typedef struct shape {
    int p, r, p2, rem;
    size_t count, es, n; /* n: the whole vector in bytes */
} shape;

static shape shape_of(const cl_comm *comm, const cl_coll_args *a)
{
    shape s = {.p = cl_comm_size(comm),
               .r = cl_comm_rank(comm),
               .count = a->count,
               .es = cl_dtype_size(a->dtype)};
    s.n = s.count * s.es;
    for (s.p2 = 1; s.p2 * 2 <= s.p; s.p2 *= 2) {
    }
    s.rem = s.p - s.p2;
    return s;
}

/* The rank's non-empty sends and receives, in order; 0 with a reason when a
 * transfer used another communicator or there were too many. */
static int transfers(const cl_trace_event *ev, int n, xfers *snd, xfers *rcv, char *why, size_t len)
{
    snd->n = rcv->n = 0;
    for (int i = 0; i < n; i++) {
        if (ev[i].op != CL_WOP_ISEND && ev[i].op != CL_WOP_IRECV)
            continue;
        if (ev[i].comm != 0) {
            snprintf(why, len, "a transfer on a communicator of its own (use the one given)");
            return 0;
        }
        if (ev[i].bytes == 0)
            continue;
        xfers *x = ev[i].op == CL_WOP_ISEND ? snd : rcv;
        if (x->n == MAXX) {
            snprintf(why, len, "more than %d transfers", MAXX);
            return 0;
        }
        x->peer[x->n] = ev[i].peer;
        x->bytes[x->n++] = ev[i].bytes;
    }
    return 1;
}

static int real_rank(const shape *s, int newrank)
{
    return newrank < s->rem ? 2 * newrank + 1 : newrank + s->rem;
}

/* Whether transfer k of x goes to peer and its size is lo..hi bytes. */
static int is(const xfers *x, int k, int peer, size_t lo, size_t hi)
{
    return k < x->n && x->peer[k] == peer && x->bytes[k] >= lo && x->bytes[k] <= hi;
}

#define FAIL(...) return (snprintf(why, len, __VA_ARGS__), 0)

/* The fold of a non-power-of-two p (the handout's scheme): sets *nr to the
 * rank's number among the p2 that run the algorithm (-1: it sits out) and
 * [*s0, *s1), [*r0, *r1) to the core's sends and receives in the trace. */
static int folded(const shape *s, const xfers *snd, const xfers *rcv, int *nr, int *s0, int *s1,
                  int *r0, int *r1, char *why, size_t len)
{
    *s0 = *r0 = 0, *s1 = snd->n, *r1 = rcv->n;
    if (s->r >= 2 * s->rem) {
        *nr = s->r - s->rem;
        return 1;
    }
    int even = s->r % 2 == 0, other = even ? s->r + 1 : s->r - 1;
    if (even) {
        *nr = -1;
        if (snd->n != 1 || rcv->n != 1 || !is(snd, 0, other, s->n, s->n) ||
            !is(rcv, 0, other, s->n, s->n))
            FAIL("p=%d is not a power of two: rank %d should only send its whole vector to "
                 "rank %d and get the result back from it",
                 s->p, s->r, other);
        return 1;
    }
    *nr = s->r / 2;
    if (!is(rcv, 0, other, s->n, s->n) || !is(snd, snd->n - 1, other, s->n, s->n))
        FAIL("p=%d is not a power of two: rank %d should first receive rank %d's whole vector "
             "and finally send it the result",
             s->p, s->r, other);
    *r0 = 1, *s1 = snd->n - 1;
    return 1;
}

int cl_pattern_recursive_doubling(const cl_comm *comm, const cl_coll_args *a,
                                  const cl_trace_event *ev, int n, char *why, size_t len)
{
    shape s = shape_of(comm, a);
    xfers snd, rcv;
    int nr, s0, s1, r0, r1;
    if (!transfers(ev, n, &snd, &rcv, why, len) ||
        !folded(&s, &snd, &rcv, &nr, &s0, &s1, &r0, &r1, why, len))
        return 0;
    if (nr < 0)
        return 1;
    int k = 0;
    for (int mask = 1; mask < s.p2; mask <<= 1, k++) {
        int partner = real_rank(&s, nr ^ mask);
        if (!is(&snd, s0 + k, partner, s.n, s.n) || !is(&rcv, r0 + k, partner, s.n, s.n))
            FAIL("exchange %d should swap the whole vector (%zu B) with rank %d (newrank %d "
                 "xor %d)",
                 k + 1, s.n, partner, nr, mask);
    }
    if (s1 - s0 != k || r1 - r0 != k)
        FAIL("%d sends and %d receives where recursive doubling makes %d of each", s1 - s0, r1 - r0,
             k);
    return 1;
}

/* A contiguous range of k of the p2 blocks of count elements: its size in bytes. */
static int blocks_of(const shape *s, size_t bytes, int k)
{
    size_t lo = (size_t)k * (s->count / (size_t)s->p2) * s->es;
    size_t hi = (size_t)k * ((s->count + (size_t)s->p2 - 1) / (size_t)s->p2) * s->es;
    return bytes >= lo && bytes <= hi;
}

int cl_pattern_halving_doubling(const cl_comm *comm, const cl_coll_args *a,
                                const cl_trace_event *ev, int n, char *why, size_t len)
{
    shape s = shape_of(comm, a);
    xfers snd, rcv;
    int nr, s0, s1, r0, r1;
    if (!transfers(ev, n, &snd, &rcv, why, len) ||
        !folded(&s, &snd, &rcv, &nr, &s0, &s1, &r0, &r1, why, len))
        return 0;
    if (nr < 0 || s.count < (size_t)s.p2) /* tiny vectors: empty blocks send nothing */
        return 1;
    int steps = 0;
    for (int m = 1; m < s.p2; m <<= 1)
        steps++;
    if (s1 - s0 != 2 * steps || r1 - r0 != 2 * steps)
        FAIL("%d sends and %d receives where halving-doubling makes %d of each", s1 - s0, r1 - r0,
             2 * steps);
    /* Halving: step j moves p2/2^j blocks; doubling: 2^(j-1). Each partner is
     * newrank xor a power of two, each power once per phase. */
    for (int phase = 0; phase < 2; phase++) {
        unsigned used = 0;
        for (int j = 1; j <= steps; j++) {
            int k = phase == 0 ? j - 1 : steps + j - 1;
            int blocks = phase == 0 ? s.p2 >> j : 1 << (j - 1);
            int partner = snd.peer[s0 + k], mask = -1;
            for (int m = 1; m < s.p2; m <<= 1)
                if (real_rank(&s, nr ^ m) == partner)
                    mask = m;
            if (mask < 0 || (used & (unsigned)mask) || rcv.peer[r0 + k] != partner)
                FAIL("%s step %d exchanges with rank %d, not with newrank %d xor a distance "
                     "not yet used",
                     phase ? "doubling" : "halving", j, partner, nr);
            used |= (unsigned)mask;
            if (!blocks_of(&s, snd.bytes[s0 + k], blocks) ||
                !blocks_of(&s, rcv.bytes[r0 + k], blocks))
                FAIL("%s step %d moves %zu B out and %zu B in, not %d of the %d blocks",
                     phase ? "doubling" : "halving", j, snd.bytes[s0 + k], rcv.bytes[r0 + k],
                     blocks, s.p2);
        }
    }
    return 1;
}

/* The binomial tree of the handout, rooted at root: parent and children of
 * rank r (children as a bit set of distances). */
static int tree_parent(int p, int r, int root, unsigned *children)
{
    int vr = (r - root + p) % p, low = 1;
    while (low < p && !(vr & low))
        low <<= 1;
    *children = 0;
    for (int m = 1; m < low && vr + m < p; m <<= 1)
        *children |= (unsigned)m;
    return vr == 0 ? -1 : (vr - low + root) % p;
}

/* Transfers [k0, k1) of x are whole vectors to or from every child once. */
static int each_child(const xfers *x, int k0, int k1, int p, int r, int root, unsigned children,
                      size_t n)
{
    unsigned seen = 0;
    int vr = (r - root + p) % p;
    for (int k = k0; k < k1; k++) {
        int d = (x->peer[k] - root + p) % p - vr;
        if (d <= 0 || (d & (d - 1)) || !((unsigned)d & children) || ((unsigned)d & seen) ||
            x->bytes[k] != n)
            return 0;
        seen |= (unsigned)d;
    }
    return seen == children;
}

static int popcount(unsigned v) { return __builtin_popcount(v); }

/* One tree phase: a Broadcast (receive from the parent, send to the
 * children) or a Reduce (receive from the children, send to the parent),
 * starting at transfers *ks and *kr. */
static int tree_phase(const shape *s, int root, int bcast, const xfers *snd, const xfers *rcv,
                      int *ks, int *kr, char *why, size_t len)
{
    unsigned ch;
    int parent = tree_parent(s->p, s->r, root, &ch), nc = popcount(ch);
    const xfers *up = bcast ? rcv : snd, *down = bcast ? snd : rcv;
    int *ku = bcast ? kr : ks, *kd = bcast ? ks : kr;
    if (parent >= 0 && !is(up, (*ku)++, parent, s->n, s->n))
        FAIL("the %s should %s the whole vector (%zu B) %s its parent, rank %d",
             bcast ? "Broadcast" : "Reduce", bcast ? "receive" : "send", s->n,
             bcast ? "from" : "to", parent);
    if (*kd + nc > down->n || !each_child(down, *kd, *kd + nc, s->p, s->r, root, ch, s->n))
        FAIL("the %s should %s the whole vector %s each of its %d children in the binomial "
             "tree rooted at %d",
             bcast ? "Broadcast" : "Reduce", bcast ? "send" : "receive", bcast ? "to" : "from", nc,
             root);
    *kd += nc;
    return 1;
}

static int pattern_tree_rooted(const cl_comm *comm, const cl_coll_args *a, const cl_trace_event *ev,
                               int n, int reduce, int bcast, char *why, size_t len)
{
    shape s = shape_of(comm, a);
    xfers snd, rcv;
    int ks = 0, kr = 0, root = reduce && bcast ? 0 : a->root;
    if (!transfers(ev, n, &snd, &rcv, why, len))
        return 0;
    if (reduce && !tree_phase(&s, root, 0, &snd, &rcv, &ks, &kr, why, len))
        return 0;
    if (bcast && !tree_phase(&s, root, 1, &snd, &rcv, &ks, &kr, why, len))
        return 0;
    if (ks != snd.n || kr != rcv.n)
        FAIL("%d sends and %d receives beyond the binomial tree's", snd.n - ks, rcv.n - kr);
    return 1;
}

int cl_pattern_binomial_allreduce(const cl_comm *c, const cl_coll_args *a, const cl_trace_event *ev,
                                  int n, char *why, size_t len)
{
    return pattern_tree_rooted(c, a, ev, n, 1, 1, why, len);
}

int cl_pattern_binomial_bcast(const cl_comm *c, const cl_coll_args *a, const cl_trace_event *ev,
                              int n, char *why, size_t len)
{
    return pattern_tree_rooted(c, a, ev, n, 0, 1, why, len);
}

int cl_pattern_binomial_reduce(const cl_comm *c, const cl_coll_args *a, const cl_trace_event *ev,
                               int n, char *why, size_t len)
{
    return pattern_tree_rooted(c, a, ev, n, 1, 0, why, len);
}

/* The given ring: 2(p-1) blocks to the right, 2(p-1) from the left. */
int cl_pattern_ring_allreduce(const cl_comm *comm, const cl_coll_args *a, const cl_trace_event *ev,
                              int n, char *why, size_t len)
{
    shape s = shape_of(comm, a);
    xfers snd, rcv;
    if (!transfers(ev, n, &snd, &rcv, why, len))
        return 0;
    int right = (s.r + 1) % s.p, left = (s.r - 1 + s.p) % s.p, steps = 2 * (s.p - 1);
    size_t lo = s.count / (size_t)s.p * s.es, hi = (s.count + (size_t)s.p - 1) / (size_t)s.p * s.es;
    if (s.count >= (size_t)s.p && (snd.n != steps || rcv.n != steps))
        FAIL("%d sends and %d receives where the ring makes %d of each", snd.n, rcv.n, steps);
    for (int k = 0; k < snd.n || k < rcv.n; k++)
        if ((k < snd.n && !is(&snd, k, right, lo, hi)) || (k < rcv.n && !is(&rcv, k, left, lo, hi)))
            FAIL("ring step %d should send one block to rank %d and receive one from rank %d",
                 k + 1, right, left);
    return 1;
}

#undef FAIL
