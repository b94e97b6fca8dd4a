/* lab07.c: lab 07, topology optimisation of one or two 8-GPU servers.
 *
 * Chapter 1's case: a TP group of 8 spread over two NVLink domains is slow;
 * keeping each TP group inside one domain and running DP across is faster.
 * You write the communicator split of a TP x PP x DP layout, the
 * CUDA_VISIBLE_DEVICES that put every rank on its GPU, and the planner that
 * chooses the layout, the rank order and the mapping for a model on a node
 * (or two), with a limited number of calls of the harness's step model.
 * Read labs/lab07/README.md first; the TODOs below follow its sections.
 * Build with `make lab07`, grade with `./grade lab07`.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab07.h"

cl_result lab07_split_colors(int tp, int pp, int dp, int tp_pp_dp, int rank, lab07_split *out)
{
    /* BEGIN SOLUTION */
    if (tp < 1 || pp < 1 || dp < 1 || rank < 0 || rank >= tp * pp * dp) {
        cl_set_error("rank %d of tp x pp x dp = %d x %d x %d", rank, tp, pp, dp);
        return CL_ERR_INVALID;
    }
    int t = rank % tp, rest = rank / tp, d, s;
    if (tp_pp_dp) {
        s = rest % pp;
        d = rest / pp;
    } else {
        d = rest % dp;
        s = rest / dp;
    }
    out->tp_color = d + dp * s; /* one TP group per (d, s) */
    out->tp_key = t;
    out->dp_color = t + tp * s; /* one DP group per (t, s) */
    out->dp_key = d;
    out->pp_color = t + tp * d; /* one pipeline per (t, d) */
    out->pp_key = s;
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab07) 1: the colours and keys for ncclCommSplit.
    //   Find rank's TP index, DP index and stage in the rank order tp_pp_dp selects
    //   (lab07.h). Ranks of one TP group share (DP index, stage), of one DP group (TP
    //   index, stage), of one pipeline (TP index, DP index): one colour (>= 0) per
    //   group, and keys that order a group by its own index.
    (void)tp, (void)pp, (void)dp, (void)tp_pp_dp, (void)rank, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab07_visible_devices(const int *gpu_of_rank, int nodes, int gpus_per_node, lab07_plan *p)
{
    /* BEGIN SOLUTION */
    int G = gpus_per_node, N = nodes * G, taken[LAB07_MAX_RANKS] = {0};
    if (nodes < 1 || nodes > LAB07_MAX_NODES || G < 1 || G > LAB07_MAX_GPUS) {
        cl_set_error("%d nodes of %d GPUs", nodes, G);
        return CL_ERR_INVALID;
    }
    for (int r = 0; r < N; r++) {
        int g = gpu_of_rank[r];
        if (g < 0 || g >= N || g / G != r / G || taken[g]) {
            cl_set_error("rank %d on GPU %d: not a GPU of its node %d, or taken", r, g, r / G);
            return CL_ERR_INVALID;
        }
        taken[g] = 1;
    }
    for (int n = 0; n < nodes; n++) {
        size_t len = 0;
        for (int i = 0; i < G; i++)
            len += (size_t)snprintf(p->visible[n] + len, LAB07_VISIBLE_LEN - len, "%s%d",
                                    i ? "," : "", gpu_of_rank[n * G + i] % G);
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab07) 2: CUDA_VISIBLE_DEVICES of every node.
    //   Rank r is local rank r % gpus_per_node of node r / gpus_per_node, and a local
    //   rank runs on the GPU its position in CUDA_VISIBLE_DEVICES names. Reject a
    //   mapping that moves a rank to another node or puts two ranks on one GPU.
    (void)gpu_of_rank, (void)nodes, (void)gpus_per_node, (void)p;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* BEGIN SOLUTION */
/* The planner. Calls of the harness's model are few, so candidates come from
 * a cheap estimate of our own, computed for every mapping:
 *   - a GPU pair's bandwidth from its topo -m class (NV# x nvlink; through a
 *     common NVLink neighbour at half, since it lends links others may need;
 *     PCIe; the socket link);
 *   - a group moves what its weakest member pushes into the rest of it over
 *     direct NVLinks (NCCL's channels use them all), or over slower routes
 *     when it has too few; groups that cross the socket link or the network
 *     share it;
 *   - the handout's step formula on top.
 * The best few mappings (with different groups) of every layout and order go
 * to the harness's model, and the best of them is improved by swapping two
 * ranks of a node while the harness says it helps. */
#define ALPHA_NV  3.4e-6
#define ALPHA_PCI 5.7e-6
#define ALPHA_NET 14.0e-6
#define KEEP      4 /* mappings per layout and order sent to the harness */

typedef struct cand {
    double est;
    unsigned long long key;
    int gpu[LAB07_MAX_RANKS];
} cand;

typedef struct planner {
    const lab07_case *k;
    int G, N, nodes;
    double B[LAB07_MAX_GPUS][LAB07_MAX_GPUS]; /* pair estimate, GB/s */
    double out_bw[LAB07_MAX_GPUS];            /* what one GPU can push */
    int socket[LAB07_MAX_GPUS];               /* its CPU */
    int nic[LAB07_MAX_GPUS];                  /* its nearest NIC */
    int nvlink;                               /* the node has NVLink */
    double *group;                            /* estimate by GPU mask (-1: not yet) */
} planner;

static int pcie_level(const cl_link *l)
{
    switch (l->kind) {
    case CL_LINK_PIX: return 0;
    case CL_LINK_PXB: return 1;
    case CL_LINK_PHB:
    case CL_LINK_NODE: return 2;
    default: return 3;
    }
}

static void pair_estimates(planner *pl)
{
    const lab07_node *nd = &pl->k->node;
    int G = pl->G;
    double nvl[LAB07_MAX_GPUS][LAB07_MAX_GPUS] = {{0}};
    for (int a = 0; a < G; a++) {
        pl->out_bw[a] = 0;
        for (int b = 0; b < G; b++)
            if (a != b && nd->gpu[a][b].kind == CL_LINK_NVLINK) {
                nvl[a][b] = nd->gpu[a][b].nvlinks * nd->nvlink_gbps;
                pl->out_bw[a] += nvl[a][b];
                pl->nvlink = 1;
            }
        int links = 0;
        for (int b = 0; b < G; b++)
            links += a != b && nd->gpu[a][b].kind == CL_LINK_NVLINK ? nd->gpu[a][b].nvlinks : 0;
        if (links > 18) /* NV12/NV18 to everyone: one NVSwitch port */
            pl->out_bw[a] = nd->gpu[a][(a + 1) % G].nvlinks * nd->nvlink_gbps;
        if (pl->out_bw[a] == 0)
            pl->out_bw[a] = nd->pcie_gbps;
    }
    /* Sockets: GPUs not printed SYS to each other share one. */
    for (int a = 0; a < G; a++) {
        pl->socket[a] = a;
        for (int b = 0; b < a; b++)
            if (nd->gpu[a][b].kind != CL_LINK_SYS) {
                pl->socket[a] = pl->socket[b];
                break;
            }
    }
    for (int a = 0; a < G; a++)
        for (int b = 0; b < G; b++) {
            double x = nvl[a][b];
            /* Through a common NVLink neighbour (NVB): it lends two of its links, which
             * other groups may need at the same time: count half. */
            for (int c = 0; c < G && x == 0; c++)
                if (c != a && c != b && nvl[a][c] > 0 && nvl[c][b] > 0)
                    x = fmax(x, fmin(nvl[a][c], nvl[c][b]) / 2);
            if (x == 0)
                x = nd->gpu[a][b].kind == CL_LINK_SYS ? fmin(nd->pcie_gbps, nd->sys_gbps)
                                                      : nd->pcie_gbps;
            pl->B[a][b] = a == b ? 0 : x;
        }
    for (int a = 0; a < G; a++) {
        int best = 4;
        pl->nic[a] = -1;
        for (int n = 0; n < nd->nnics; n++)
            if (pcie_level(&nd->nic[a][n]) < best)
                best = pcie_level(&nd->nic[a][n]), pl->nic[a] = n;
    }
}

/* The estimate of one group (a mask over all GPUs of all nodes), GB/s: a
 * GPU's direct NVLinks into the group carry its channels; a GPU with fewer
 * direct neighbours in it than a ring needs (two; one for a pair) also
 * sends through a third GPU or over PCIe, and the slower way sets its pace. */
static double group_bw(planner *pl, unsigned mask)
{
    if (pl->group[mask] >= 0)
        return pl->group[mask];
    const lab07_node *nd = &pl->k->node;
    int G = pl->G, m[LAB07_MAX_RANKS], k = 0, nodes_used = 0;
    for (int g = 0; g < pl->N; g++)
        if (mask & (1u << g))
            m[k++] = g;
    double bw = INFINITY;
    for (int i = 0; i < k; i++) {
        double sum = 0, other = 0;
        int nb = 0, local = 0;
        for (int j = 0; j < k; j++) {
            if (j == i || m[j] / G != m[i] / G)
                continue;
            int a = m[i] % G, b = m[j] % G;
            local++;
            if (nd->gpu[a][b].kind == CL_LINK_NVLINK) {
                sum += nd->gpu[a][b].nvlinks * nd->nvlink_gbps;
                nb++;
            } else {
                other = fmax(other, pl->B[a][b]);
            }
        }
        if (local == 0)
            continue;
        int need = local < 2 ? local : 2;
        double x = nb >= need ? sum : nb ? fmin(sum, other) : other;
        bw = fmin(bw, fmin(x, pl->out_bw[m[i] % G]));
        nodes_used |= 1 << (m[i] / G);
    }
    for (int i = 0; i < k; i++)
        nodes_used |= 1 << (m[i] / G);
    if (nodes_used != 1 && nodes_used != 2 && k > 1) {
        /* across nodes: the NICs near the members on one node */
        unsigned nics = 0;
        for (int i = 0; i < k; i++)
            if (m[i] / G == m[0] / G && pl->nic[m[i] % G] >= 0)
                nics |= 1u << pl->nic[m[i] % G];
        bw = fmin(bw, __builtin_popcount(nics) * pl->k->node.net_gbps);
    }
    if (isinf(bw))
        bw = 0;
    pl->group[mask] = bw;
    return bw;
}

static double ring_time(int k, double bytes, double bw, double alpha)
{
    return k < 2 ? 0 : 2.0 * (k - 1) * alpha + 2.0 * (k - 1) / k * bytes / (bw * 1e9);
}

static int rank_of(const lab07_plan *p, int t, int d, int s)
{
    return p->tp_pp_dp ? t + p->tp * (s + p->pp * d) : t + p->tp * (d + p->dp * s);
}

/* The worst group of a kind, all groups at once: each a ring of k GPUs moving
 * bytes (k == 0: a pair sending bytes once each way). Without NVLink, groups
 * that span the two sockets share the socket link. */
static double kind_time(planner *pl, const unsigned *groups, int n, int k, double bytes)
{
    int G = pl->G, crossing = 0, spans[LAB07_MAX_RANKS] = {0};
    for (int i = 0; i < n; i++) {
        int first = __builtin_ctz(groups[i]);
        for (int g = 0; g < pl->N; g++)
            if ((groups[i] & (1u << g)) && g / G == first / G &&
                pl->socket[g % G] != pl->socket[first % G])
                spans[i] = 1;
        crossing += spans[i];
    }
    double worst = 0;
    for (int i = 0; i < n; i++) {
        double bw = group_bw(pl, groups[i]);
        int first = __builtin_ctz(groups[i]), multi = 0;
        for (int g = 0; g < pl->N; g++)
            multi |= (groups[i] & (1u << g)) && g / G != first / G;
        if (spans[i] && !pl->nvlink)
            bw = fmin(bw, pl->k->node.sys_gbps / crossing);
        if (bw <= 0)
            return INFINITY;
        double alpha = multi ? ALPHA_NET : pl->nvlink ? ALPHA_NV : ALPHA_PCI;
        worst = fmax(worst, k ? ring_time(k, bytes, bw, alpha) : alpha + bytes / (bw * 1e9));
    }
    return worst;
}

/* Our estimate of a step: the handout's formula with our bandwidths. */
static double estimate(planner *pl, const lab07_plan *p, const int *gpu)
{
    const lab07_model *m = &pl->k->model;
    int mb = m->global_batch / (p->dp * m->micro_batch);
    double act = (double)m->seq_len * m->micro_batch * m->hidden * m->bytes;
    unsigned groups[LAB07_MAX_RANKS] = {0};
    double t = m->compute_s * (p->pp - 1) / mb;
    int n = 0;
    for (int s = 0; s < p->pp; s++)
        for (int d = 0; d < p->dp; d++, n++) {
            groups[n] = 0;
            for (int x = 0; x < p->tp; x++)
                groups[n] |= 1u << gpu[rank_of(p, x, d, s)];
        }
    if (p->tp > 1)
        t += 4.0 * m->layers / p->pp * mb * kind_time(pl, groups, n, p->tp, act);
    n = 0;
    for (int s = 0; s < p->pp; s++)
        for (int x = 0; x < p->tp; x++, n++) {
            groups[n] = 0;
            for (int d = 0; d < p->dp; d++)
                groups[n] |= 1u << gpu[rank_of(p, x, d, s)];
        }
    if (p->dp > 1)
        t += kind_time(pl, groups, n, p->dp, m->params * m->bytes / (p->tp * p->pp));
    n = 0;
    for (int x = 0; x < p->tp; x++)
        for (int d = 0; d < p->dp; d++)
            for (int s = 0; s + 1 < p->pp; s++, n++)
                groups[n] = (1u << gpu[rank_of(p, x, d, s)]) | (1u << gpu[rank_of(p, x, d, s + 1)]);
    if (n)
        t += 2.0 * mb * kind_time(pl, groups, n, 0, act);
    return t;
}

static double memory(const lab07_model *m, int tp, int pp)
{
    return 16.0 * m->params / ((double)tp * pp) +
           34.0 * m->seq_len * m->micro_batch * (double)m->hidden * m->layers / tp;
}

static int next_perm(int *a, int n)
{
    int i = n - 2;
    while (i >= 0 && a[i] >= a[i + 1])
        i--;
    if (i < 0)
        return 0;
    int j = n - 1;
    while (a[j] <= a[i])
        j--;
    int x = a[i];
    a[i] = a[j], a[j] = x;
    for (int l = i + 1, r = n - 1; l < r; l++, r--)
        x = a[l], a[l] = a[r], a[r] = x;
    return 1;
}

static int cmp_unsigned(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? -1 : x > y;
}

/* Mappings that make the same groups cost the same: a key of the groups. */
static unsigned long long structure(const lab07_plan *p, const int *gpu)
{
    unsigned v[3 * (LAB07_MAX_RANKS + 1)]; /* each kind: its groups and a separator */
    int n = 0;
    unsigned long long h = 1469598103934665603ULL;
    for (int kind = 0; kind < 3; kind++) {
        int first = n;
        for (int x = 0; x < p->tp; x++)
            for (int d = 0; d < p->dp; d++)
                for (int s = 0; s < p->pp; s++) {
                    unsigned g = 0;
                    if (kind == 0 && x == 0)
                        for (int y = 0; y < p->tp; y++)
                            g |= 1u << gpu[rank_of(p, y, d, s)];
                    if (kind == 1 && d == 0)
                        for (int e = 0; e < p->dp; e++)
                            g |= 1u << gpu[rank_of(p, x, e, s)];
                    if (kind == 2 && s + 1 < p->pp)
                        g = (1u << gpu[rank_of(p, x, d, s)]) | (1u << gpu[rank_of(p, x, d, s + 1)]);
                    if (g)
                        v[n++] = g;
                }
        qsort(v + first, (size_t)(n - first), sizeof *v, cmp_unsigned);
        v[n++] = ~0u;
    }
    for (int i = 0; i < n; i++)
        h = (h ^ v[i]) * 1099511628211ULL;
    return h;
}

/* Keep the KEEP lowest estimates among mappings that make different groups. */
static void keep(cand *best, int *n, double est, unsigned long long key, const int *gpu, int N)
{
    for (int i = 0; i < *n; i++)
        if (best[i].key == key)
            return;
    if (*n == KEEP && est >= best[KEEP - 1].est)
        return;
    int i = *n < KEEP ? (*n)++ : KEEP - 1;
    for (; i > 0 && best[i - 1].est > est; i--)
        best[i] = best[i - 1];
    best[i].est = est;
    best[i].key = key;
    memcpy(best[i].gpu, gpu, (size_t)N * sizeof *gpu);
}

typedef struct trial {
    lab07_plan plan;
    int gpu[LAB07_MAX_RANKS];
    double step;
} trial;

/* Ask the harness; *step = INFINITY for a plan that does not fit. */
static cl_result ask(cl_comm *comm, const planner *pl, trial *t, int *left)
{
    lab07_cost c;
    t->step = INFINITY;
    if (*left <= 0)
        return CL_OK;
    CL_CHECK(lab07_visible_devices(t->gpu, pl->nodes, pl->G, &t->plan));
    CL_CHECK(lab07_step_time(comm, &t->plan, &c));
    *left = c.calls_left;
    if (c.fits)
        t->step = c.step_s;
    return CL_OK;
}
/* END SOLUTION */

cl_result lab07_choose_plan(cl_comm *comm, const lab07_case *k, lab07_plan *out)
{
    /* BEGIN SOLUTION */
    static planner pl;
    static double group[1 << LAB07_MAX_RANKS];
    memset(&pl, 0, sizeof pl);
    pl.k = k;
    pl.G = k->node.ngpus;
    pl.nodes = k->nodes;
    pl.N = pl.G * pl.nodes;
    pl.group = group;
    if (pl.G < 1 || pl.G > LAB07_MAX_GPUS || pl.nodes < 1 || pl.nodes > LAB07_MAX_NODES) {
        cl_set_error("%d nodes of %d GPUs: out of range", pl.nodes, pl.G);
        return CL_ERR_INVALID;
    }
    for (int i = 0; i < (1 << pl.N); i++)
        group[i] = -1;
    pair_estimates(&pl);
    int G = pl.G, N = pl.N, left = k->budget;
    static trial best, t;
    best.step = INFINITY;
    const lab07_model *m = &k->model;
    for (int tp = 1; tp <= G; tp++)
        for (int pp = 1; tp * pp <= N; pp++) {
            if (N % (tp * pp) || G % tp)
                continue;
            int dp = N / (tp * pp);
            if (m->global_batch % (dp * m->micro_batch) ||
                memory(m, tp, pp) > k->node.gpu_mem_bytes)
                continue;
            for (int order = 0; order < 2 - (pp == 1 || dp == 1); order++) {
                lab07_plan p = {.tp = tp, .pp = pp, .dp = dp, .tp_pp_dp = order};
                cand kept[KEEP];
                int nk = 0, perm[LAB07_MAX_GPUS], gpu[LAB07_MAX_RANKS];
                for (int i = 0; i < G; i++)
                    perm[i] = i;
                do { /* the same mapping on every node */
                    for (int r = 0; r < N; r++)
                        gpu[r] = r / G * G + perm[r % G];
                    double est = estimate(&pl, &p, gpu);
                    if (nk < KEEP || est < kept[nk - 1].est)
                        keep(kept, &nk, est, structure(&p, gpu), gpu, N);
                } while (next_perm(perm, G));
                for (int i = 0; i < nk; i++) {
                    t.plan = p;
                    memcpy(t.gpu, kept[i].gpu, sizeof t.gpu);
                    CL_CHECK(ask(comm, &pl, &t, &left));
                    if (t.step < best.step)
                        best = t;
                }
            }
        }
    if (isinf(best.step)) {
        cl_set_error("no layout of %d GPUs fits (or the budget ran out)", N);
        return CL_ERR_INVALID;
    }
    /* Swaps of two ranks of one node, while the harness says one helps. */
    for (int improved = 1; improved && left > 0;) {
        improved = 0;
        for (int a = 0; a < N && !improved && left > 0; a++)
            for (int b = a + 1; b < N && b / G == a / G && !improved && left > 0; b++) {
                t = best;
                t.gpu[a] = best.gpu[b];
                t.gpu[b] = best.gpu[a];
                if (estimate(&pl, &t.plan, t.gpu) > 1.05 * estimate(&pl, &best.plan, best.gpu))
                    continue; /* not worth a call */
                CL_CHECK(ask(comm, &pl, &t, &left));
                if (t.step < best.step * (1 - 1e-9)) {
                    best = t;
                    improved = 1;
                }
            }
    }
    *out = best.plan;
    out->p2p_level[0] = '\0'; /* NCCL's default (PXB) keeps P2P over NVLink and NVB */
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab07) 3: the plan with the shortest step.
    //   Choose tp, pp, dp (the model must fit in a GPU's memory; the global batch must
    //   split into whole micro-batches over dp), the rank order and every rank's GPU,
    //   and fill *out with what a user would set (TODO 2 writes CUDA_VISIBLE_DEVICES).
    //   lab07_step_time() gives the harness's cost of a plan, at most k->budget times:
    //   far fewer than the mappings of one node (8! = 40320), so reason about the
    //   topology (k->node) to decide which plans are worth a call.
    (void)comm, (void)k, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
