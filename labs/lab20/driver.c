/* driver.c: lab 20's plug-in: AlltoAll by pairwise exchange and in two levels, AlltoAllv,
 * and the plan of an MoE layer's dispatch.
 *
 *   lab20 verify  [--backend cpu|gpu|sim] [--nranks N] [--coll alltoall,alltoallv]
 *   lab20 bench   --coll alltoall --bytes 16M [--repeats R]
 *   lab20 sweep   [--coll ...] [-b 8] [-e 64M] [-f 4]
 *   lab20 hier    [--local L]                 the two-level AlltoAll, verified
 *   lab20 compare [--local L] [-b ..] [-e ..] pairwise, two-level and the library's, timed
 *   lab20 moe     [--system S] [--tokens ..] [--skew ..] [--budget ..]   MoE layers, planned
 *
 * verify, bench and sweep are the collective suite's (coll_suite.h): the
 * student's pairwise AlltoAll and AlltoAllv against MPI_Alltoall(v), NCCL's
 * grouped send/recv, or on "sim" the same group simulated. The other modes
 * are in harness_hier.c and harness_moe.c.
 */
#include <stdio.h>
#include <string.h>

#include "harness/coll_suite.h"
#include "lab20_args.h"

#ifdef CL_STUDENT_SIDE

static cl_result alltoall(cl_comm *c, void *args)
{
    const cl_coll_args *a = args;
    return lab20_pairwise_alltoall(c, a->sendbuf, a->recvbuf, a->count, a->dtype);
}

static cl_result alltoallv(cl_comm *c, void *args)
{
    const cl_coll_args *a = args;
    return lab20_pairwise_alltoallv(c, a->sendbuf, a->sendcounts, a->sdispls, a->recvbuf,
                                    a->recvcounts, a->rdispls, a->dtype);
}

static cl_result hier(cl_comm *c, void *args)
{
    const hier_args *h = args;
    return lab20_hier_alltoall(c, h->a.sendbuf, h->a.recvbuf, h->a.count, h->a.dtype, h->local,
                               h->a.scratch, h->a.scratch_bytes);
}

static cl_result plan(cl_comm *c, void *args)
{
    (void)c;
    plan_args *pa = args;
    pa->m.counts = pa->counts;
    return lab20_moe_plan(&pa->m, &pa->plan);
}

/* The dispatch as the plan says, with the student's own collectives. */
static cl_result dispatch(cl_comm *c, void *args)
{
    const dispatch_args *d = args;
    const cl_coll_args *a = &d->a;
    if (d->layout == LAB20_PADDED && d->algo == LAB20_HIER)
        return lab20_hier_alltoall(c, a->sendbuf, a->recvbuf, a->count, a->dtype, d->local,
                                   a->scratch, a->scratch_bytes);
    if (d->layout == LAB20_PADDED)
        return lab20_pairwise_alltoall(c, a->sendbuf, a->recvbuf, a->count, a->dtype);
    CL_CHECK(
        lab20_pairwise_alltoall(c, d->cnt_send, d->cnt_recv, (size_t)cl_comm_size(c), CL_INT64));
    return lab20_pairwise_alltoallv(c, a->sendbuf, a->sendcounts, a->sdispls, a->recvbuf,
                                    a->recvcounts, a->rdispls, a->dtype);
}

CL_STUDENT_ENTRIES({"alltoall", alltoall}, {"alltoallv", alltoallv}, {"hier", hier}, {"plan", plan},
                   {"dispatch", dispatch});

#else

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

static int pairwise_pattern(const cl_comm *c, const cl_coll_args *a, const cl_trace_event *ev,
                            int n, char *why, size_t len)
{
    long long block = (long long)(a->count / (size_t)cl_comm_size(c) * cl_dtype_size(a->dtype));
    return follows(c, ev, n, 1, block, why, len) && follows(c, ev, n, 0, block, why, len);
}

static int pairwise_v_pattern(const cl_comm *c, const cl_coll_args *a, const cl_trace_event *ev,
                              int n, char *why, size_t len)
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

static const cl_option options[] = {
    {"local", "ranks per node (0: the system's GPUs per node on sim, else 1)", "0"},
    {"tokens", "moe: tokens per rank, a list", "64,512,4096"},
    {"skew", "moe: Zipf exponents of the experts' popularity, a list", "0,1.2"},
    {"budget", "moe: the drop budgets, a list of fractions", "0,0.01"},
    {"experts", "moe: experts (0: twice the ranks)", "0"},
    {"topk", "moe: experts per token", "2"},
    {"token-bytes", "moe: bytes of one token's hidden state", "8K"},
    {0}};

const cl_lab cl_lab_def = {
    .name = "lab20",
    .title = "AlltoAll 与 MoE 专家并行: pairwise, two-level, AlltoAllv and the dispatch plan",
    .collectives = (const cl_coll_entry[]){{.name = "alltoall",
                                            .kind = CL_COLL_ALLTOALL,
                                            .baseline = 1,
                                            .pattern = pairwise_pattern},
                                           {.name = "alltoallv",
                                            .kind = CL_COLL_ALLTOALLV,
                                            .baseline = 1,
                                            .pattern = pairwise_v_pattern},
                                           {0}},
    .modes = (const cl_mode[]){{.name = "hier",
                                .help = "the two-level AlltoAll on many counts and types, and its "
                                        "message pattern (--local L)",
                                .ranks = lab20_hier_verify},
                               {.name = "compare",
                                .help = "pairwise, two-level and the library's AlltoAll from -b to "
                                        "-e bytes per rank, timed",
                                .ranks = lab20_compare},
                               {.name = "moe",
                                .help = "MoE layers: your plan's dispatch against every other way "
                                        "of moving the tokens",
                                .ranks = lab20_moe_mode},
                               {0}},
    .options = options,
};

#endif
