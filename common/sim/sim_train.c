/* sim_train.c: a training step's communication on a simulated server, and the best plan on it. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim_train.h"

#define ALPHA_NVLINK 3.4e-6 /* tuning.cc hwLat, Ring, Simple */
#define ALPHA_PCI    5.7e-6
#define ALPHA_NET    14.0e-6

typedef struct entry {
    uint64_t mask; /* 0: empty */
    cl_sim_channels *ch;
} entry;

struct cl_sim_train {
    const cl_sim_topo_net *net;
    int sm;
    entry *tab;
    int cap, used;
    long evals;
};

cl_result cl_sim_train_new(const cl_sim_topo_net *net, int sm, cl_sim_train **out)
{
    cl_sim_train *t = calloc(1, sizeof *t);
    if (!t)
        return CL_ERR_NOMEM;
    t->net = net;
    t->sm = sm;
    t->cap = 1024;
    t->tab = calloc((size_t)t->cap, sizeof *t->tab);
    if (!t->tab) {
        free(t);
        return CL_ERR_NOMEM;
    }
    *out = t;
    return CL_OK;
}

void cl_sim_train_free(cl_sim_train *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->cap; i++)
        free(t->tab[i].ch);
    free(t->tab);
    free(t);
}

long cl_sim_train_evaluations(const cl_sim_train *t) { return t->evals; }

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

static cl_result grow_table(cl_sim_train *t)
{
    entry *old = t->tab;
    int oldcap = t->cap;
    t->cap *= 2;
    t->tab = calloc((size_t)t->cap, sizeof *t->tab);
    if (!t->tab) {
        t->tab = old;
        t->cap = oldcap;
        return CL_ERR_NOMEM;
    }
    for (int i = 0; i < oldcap; i++)
        if (old[i].mask) {
            int j = (int)(mix(old[i].mask) & (uint64_t)(t->cap - 1));
            while (t->tab[j].mask)
                j = (j + 1) & (t->cap - 1);
            t->tab[j] = old[i];
        }
    free(old);
    return CL_OK;
}

/* NCCL's channels over the GPUs of mask (searched once per set). */
static cl_result channels(cl_sim_train *t, uint64_t mask, const cl_sim_channels **out)
{
    int j = (int)(mix(mask) & (uint64_t)(t->cap - 1));
    while (t->tab[j].mask && t->tab[j].mask != mask)
        j = (j + 1) & (t->cap - 1);
    if (t->tab[j].mask) {
        *out = t->tab[j].ch;
        return CL_OK;
    }
    if (2 * (t->used + 1) > t->cap) {
        CL_CHECK(grow_table(t));
        return channels(t, mask, out);
    }
    int members[CL_SIM_TOPO_MAX_GPUS], k = 0;
    for (int g = 0; g < t->net->ngpus; g++)
        if (mask & (1ull << g))
            members[k++] = g;
    cl_sim_channels *ch = malloc(sizeof *ch);
    if (!ch)
        return CL_ERR_NOMEM;
    cl_result rc = cl_sim_channels_search(t->net, members, k, t->sm, CL_SIM_CHANNELS_MAX, ch);
    if (rc != CL_OK) {
        free(ch);
        return rc;
    }
    t->tab[j] = (entry){mask, ch};
    t->used++;
    *out = ch;
    return CL_OK;
}

void cl_sim_train_coords(const cl_sim_train_plan *p, int r, int *t, int *d, int *s)
{
    *t = r % p->tp;
    int rest = r / p->tp;
    if (p->order == CL_SIM_ORDER_TP_PP_DP) {
        *s = rest % p->pp;
        *d = rest / p->pp;
    } else {
        *d = rest % p->dp;
        *s = rest / p->dp;
    }
}

int cl_sim_train_rank(const cl_sim_train_plan *p, int t, int d, int s)
{
    return p->order == CL_SIM_ORDER_TP_PP_DP ? t + p->tp * (s + p->pp * d)
                                             : t + p->tp * (d + p->dp * s);
}

double cl_sim_train_memory(const cl_sim_train_model *m, int tp, int pp)
{
    double states = 16.0 * m->params / ((double)tp * pp);
    double act = 34.0 * m->seq_len * m->micro_batch * (double)m->hidden * m->layers / tp;
    return states + act;
}

static double alpha_of(int path)
{
    return path <= CL_SIM_PATH_NVB ? ALPHA_NVLINK : path == CL_SIM_PATH_NET ? ALPHA_NET : ALPHA_PCI;
}

/* The slowest group of one kind: groups[i] are GPU masks, all communicating
 * at once; each moves bytes with a ring AllReduce. */
static cl_result kind_time(cl_sim_train *t, const uint64_t *groups, int n, double bytes,
                           double *time, double *busbw)
{
    const cl_sim_channels *sets[CL_SIM_TOPO_MAX_GPUS] = {0};
    double bw[CL_SIM_TOPO_MAX_GPUS];
    for (int i = 0; i < n; i++)
        CL_CHECK(channels(t, groups[i], &sets[i]));
    CL_CHECK(cl_sim_channels_busbw(t->net, sets, n, bw));
    *time = 0;
    *busbw = INFINITY;
    for (int i = 0; i < n; i++) {
        int k = sets[i]->k;
        if (k < 2)
            continue;
        if (!(bw[i] > 0)) {
            cl_set_error("a group of %d GPUs has no bandwidth", k);
            return CL_ERR_INVALID;
        }
        double a = alpha_of(cl_sim_channels_worst_path(t->net, sets[i]));
        double ti = 2.0 * (k - 1) * a + 2.0 * (k - 1) / k * bytes / (bw[i] * 1e9);
        *time = fmax(*time, ti);
        *busbw = fmin(*busbw, bw[i]);
    }
    if (isinf(*busbw))
        *busbw = 0;
    return CL_OK;
}

cl_result cl_sim_train_cost_of(cl_sim_train *t, const cl_sim_train_model *m,
                               const cl_sim_train_plan *p, cl_sim_train_cost *out)
{
    const cl_sim_topo_net *net = t->net;
    int N = net->ngpus;
    memset(out, 0, sizeof *out);
    if (p->tp < 1 || p->pp < 1 || p->dp < 1 || p->tp * p->pp * p->dp != N) {
        cl_set_error("tp x pp x dp = %d x %d x %d is not the %d GPUs", p->tp, p->pp, p->dp, N);
        return CL_ERR_INVALID;
    }
    if (m->micro_batch < 1 || m->global_batch % (p->dp * m->micro_batch) != 0) {
        cl_set_error("a global batch of %d sequences does not split into micro-batches of %d "
                     "over dp = %d",
                     m->global_batch, m->micro_batch, p->dp);
        return CL_ERR_INVALID;
    }
    uint64_t seen = 0;
    for (int r = 0; r < N; r++) {
        int g = p->gpu_of_rank[r];
        if (g < 0 || g >= N || (seen & (1ull << g))) {
            cl_set_error("rank %d on GPU %d: not a permutation of the %d GPUs", r, g, N);
            return CL_ERR_INVALID;
        }
        seen |= 1ull << g;
    }
    t->evals++;
    int mb = m->global_batch / (p->dp * m->micro_batch);
    double act = (double)m->seq_len * m->micro_batch * m->hidden * m->bytes;
    out->micro_batches = mb;
    out->mem_bytes = cl_sim_train_memory(m, p->tp, p->pp);
    out->fits = out->mem_bytes <= m->gpu_mem_bytes;
    out->compute_s = m->compute_s;
    out->bubble_s = m->compute_s * (p->pp - 1) / mb;
    uint64_t groups[CL_SIM_TOPO_MAX_GPUS];
    double time;
    int n = 0;
    if (p->tp > 1) {
        for (int s = 0; s < p->pp; s++)
            for (int d = 0; d < p->dp; d++, n++) {
                groups[n] = 0;
                for (int x = 0; x < p->tp; x++)
                    groups[n] |= 1ull << p->gpu_of_rank[cl_sim_train_rank(p, x, d, s)];
            }
        CL_CHECK(kind_time(t, groups, n, act, &time, &out->tp_busbw));
        out->tp_s = 4.0 * m->layers / p->pp * mb * time;
    }
    if (p->dp > 1) {
        n = 0;
        for (int s = 0; s < p->pp; s++)
            for (int x = 0; x < p->tp; x++, n++) {
                groups[n] = 0;
                for (int d = 0; d < p->dp; d++)
                    groups[n] |= 1ull << p->gpu_of_rank[cl_sim_train_rank(p, x, d, s)];
            }
        CL_CHECK(
            kind_time(t, groups, n, m->params * m->bytes / (p->tp * p->pp), &time, &out->dp_busbw));
        out->dp_s = time;
    }
    if (p->pp > 1) {
        /* Every pair of neighbouring stages at once, each way: a ring of two. */
        static cl_sim_channels pair[CL_SIM_TOPO_MAX_GPUS];
        const cl_sim_channels *sets[CL_SIM_TOPO_MAX_GPUS];
        double bw[CL_SIM_TOPO_MAX_GPUS];
        n = 0;
        for (int x = 0; x < p->tp; x++)
            for (int d = 0; d < p->dp; d++)
                for (int s = 0; s + 1 < p->pp; s++, n++) {
                    pair[n].k = 2;
                    pair[n].n = 1;
                    pair[n].cap = 0;
                    pair[n].ring[0][0] = p->gpu_of_rank[cl_sim_train_rank(p, x, d, s)];
                    pair[n].ring[0][1] = p->gpu_of_rank[cl_sim_train_rank(p, x, d, s + 1)];
                    sets[n] = &pair[n];
                }
        CL_CHECK(cl_sim_channels_busbw(net, sets, n, bw));
        double worst = 0;
        out->pp_gbps = INFINITY;
        for (int i = 0; i < n; i++) {
            int a = pair[i].ring[0][0], b = pair[i].ring[0][1];
            double ti = alpha_of(net->path_type[a][b]) + act / (bw[i] * 1e9);
            worst = fmax(worst, ti);
            out->pp_gbps = fmin(out->pp_gbps, bw[i]);
        }
        out->pp_s = 2.0 * mb * worst;
    }
    out->step_s = out->compute_s + out->bubble_s + out->tp_s + out->dp_s + out->pp_s;
    return CL_OK;
}

/* --- the best plan ------------------------------------------------------------------------------
 */

typedef struct seen_set {
    uint64_t *k; /* pairs of hashes; 0,0 empty */
    int cap, used;
} seen_set;

static int seen_add(seen_set *s, uint64_t h1, uint64_t h2)
{
    if (2 * (s->used + 1) > s->cap) {
        int cap = s->cap ? 2 * s->cap : 4096;
        uint64_t *k = calloc((size_t)cap * 2, sizeof *k);
        if (!k)
            return -1;
        for (int i = 0; i < s->cap; i++)
            if (s->k[2 * i] | s->k[2 * i + 1]) {
                int j = (int)(s->k[2 * i] & (uint64_t)(cap - 1));
                while (k[2 * j] | k[2 * j + 1])
                    j = (j + 1) & (cap - 1);
                k[2 * j] = s->k[2 * i], k[2 * j + 1] = s->k[2 * i + 1];
            }
        free(s->k);
        s->k = k;
        s->cap = cap;
    }
    h1 |= 1; /* never the empty key */
    int j = (int)(h1 & (uint64_t)(s->cap - 1));
    while (s->k[2 * j] | s->k[2 * j + 1]) {
        if (s->k[2 * j] == h1 && s->k[2 * j + 1] == h2)
            return 0;
        j = (j + 1) & (s->cap - 1);
    }
    s->k[2 * j] = h1, s->k[2 * j + 1] = h2;
    s->used++;
    return 1;
}

/* Sorts v[0..n) ascending. The lists are a few dozen masks, and the search sorts
 * three per plan it meets: insertion sort, without qsort's calls and copies. */
static void sort_u64(uint64_t *v, int n)
{
    for (int i = 1; i < n; i++) {
        uint64_t x = v[i];
        int j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

/* Two hashes of the groups a plan makes: plans with the same groups cost the same. */
static void plan_key(const cl_sim_train_plan *p, int N, uint64_t *h1, uint64_t *h2)
{
    uint64_t v[3 * CL_SIM_TOPO_MAX_GPUS + 3];
    int n = 0;
    for (int kind = 0; kind < 3; kind++) {
        int first = n;
        for (int x = 0; x < p->tp; x++)
            for (int d = 0; d < p->dp; d++)
                for (int s = 0; s < p->pp; s++) {
                    uint64_t g = 0;
                    int own = kind == 0 ? x == 0 : kind == 1 ? d == 0 : s + 1 < p->pp;
                    if (!own)
                        continue;
                    if (kind == 0)
                        for (int y = 0; y < p->tp; y++)
                            g |= 1ull << p->gpu_of_rank[cl_sim_train_rank(p, y, d, s)];
                    else if (kind == 1)
                        for (int e = 0; e < p->dp; e++)
                            g |= 1ull << p->gpu_of_rank[cl_sim_train_rank(p, x, e, s)];
                    else
                        g = (1ull << p->gpu_of_rank[cl_sim_train_rank(p, x, d, s)]) |
                            (1ull << p->gpu_of_rank[cl_sim_train_rank(p, x, d, s + 1)]);
                    v[n++] = g;
                }
        sort_u64(v + first, n - first);
        v[n++] = ~0ull; /* separator */
    }
    (void)N;
    *h1 = 1469598103934665603ULL, *h2 = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < n; i++) {
        *h1 = mix(*h1 ^ v[i]);
        *h2 = mix(*h2 + v[i] * 0x2545f4914f6cdd1dULL);
    }
}

/* Next permutation in lexicographic order; 0 after the last. */
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

/* Keep p if it fits and beats *best. */
static cl_result consider(cl_sim_train *t, const cl_sim_train_model *m, const cl_sim_train_plan *p,
                          cl_sim_train_plan *best, cl_sim_train_cost *bc, int *have)
{
    cl_sim_train_cost c;
    CL_CHECK(cl_sim_train_cost_of(t, m, p, &c));
    if (c.fits && (!*have || c.step_s < bc->step_s * (1 - 1e-12))) {
        *best = *p;
        *bc = c;
        *have = 1;
    }
    return CL_OK;
}

cl_result cl_sim_train_best(cl_sim_train *t, const cl_sim_train_model *m,
                            const cl_sim_train_plan *only, cl_sim_train_plan *best,
                            cl_sim_train_cost *cost)
{
    const cl_sim_topo_net *net = t->net;
    int N = net->ngpus, G = net->gpus_per_node, have = 0;
    seen_set seen = {0};
    cl_result rc = CL_OK;
    for (int tp = 1; tp <= N; tp++)
        for (int pp = 1; tp * pp <= N; pp++) {
            if (N % (tp * pp) != 0)
                continue;
            int dp = N / (tp * pp);
            if (m->global_batch % (dp * m->micro_batch) != 0 ||
                cl_sim_train_memory(m, tp, pp) > m->gpu_mem_bytes ||
                (only && (only->tp != tp || only->pp != pp || only->dp != dp)))
                continue;
            for (int order = 0; order < 2; order++) {
                if (order == 1 && (pp == 1 || dp == 1))
                    continue; /* the same ranks either way */
                cl_sim_train_plan p = {.tp = tp, .pp = pp, .dp = dp, .order = order};
                int perm[CL_SIM_TOPO_MAX_GPUS];
                for (int i = 0; i < G; i++)
                    perm[i] = i;
                do {
                    for (int r = 0; r < N; r++)
                        p.gpu_of_rank[r] = r / G * G + perm[r % G];
                    uint64_t h1, h2;
                    plan_key(&p, N, &h1, &h2);
                    int fresh = seen_add(&seen, h1 ^ (uint64_t)(tp * 131 + pp * 7 + order), h2);
                    if (fresh < 0) {
                        rc = CL_ERR_NOMEM;
                        goto done;
                    }
                    if (fresh)
                        CL_TRY(consider(t, m, &p, best, cost, &have));
                } while (next_perm(perm, G));
            }
        }
    if (!have) {
        cl_set_error("no layout of %d GPUs fits %.3g GB per GPU", N, m->gpu_mem_bytes / 1e9);
        rc = CL_ERR_INVALID;
        goto done;
    }
    /* Several nodes: swaps of two ranks of one node while one helps. */
    for (int improved = net->nodes > 1; improved;) {
        improved = 0;
        for (int a = 0; a < N && !improved; a++)
            for (int b = a + 1; b < N && b / G == a / G && !improved; b++) {
                cl_sim_train_plan p = *best;
                int x = p.gpu_of_rank[a];
                p.gpu_of_rank[a] = p.gpu_of_rank[b];
                p.gpu_of_rank[b] = x;
                double before = cost->step_s;
                CL_TRY(consider(t, m, &p, best, cost, &have));
                improved = cost->step_s < before;
            }
    }
done:
    free(seen.k);
    return rc;
}
