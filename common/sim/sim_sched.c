/* sim_sched.c: schedules: collectives compiled into phases of flows, timed on the flow engine.
 *
 * Ring (all collectives): C channels, channel c a ring over all ranks that
 * enters and leaves every node through NIC c (rail-aligned, as NCCL's rings).
 *   One ring step = every rank sends one chunk to its successor on every
 *   channel. All 2(p-1) (allreduce) or p-1 (allgather, reducescatter) steps
 *   move the same chunk over the same routes, so one step's flows are solved
 *   on the engine and the step time multiplied by the number of steps
 *   (symmetric-step reuse). Broadcast is a pipelined chain, one phase.
 * Tree (allreduce): NCCL's double binary tree over nodes, a chain inside each
 *   node; every edge carries its share up and down at once (pipelined).
 * NVLS (allreduce): in-switch reduction; each GPU moves S(G+1)/G bytes up and
 *   down its NVSwitch port at nvls_eff of the port bandwidth. Across nodes:
 *   NVLS reduce-scatter, a ring per rail on the shard, NVLS allgather.
 * Hier (allreduce): ring reduce-scatter in each node, ring allreduce of the
 *   shard across nodes on each GPU's rail, ring allgather in each node.
 * Alltoall: every pair at once, through the destination's rail (PXN).
 *
 * Time = launch + base(algo, proto) + sum of per-edge latencies along the
 * pipelined traversal + bytes time / protocol efficiency, capped for LL.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "sim_engine.h"

#define US 1e-6

/* ---- ring orders ---------------------------------------------------------- */

static int route_len(const cl_sim_machine *m, int a, int b)
{
    int nd = m->gpus + m->nics;
    return m->troute_off[a * nd + b + 1] - m->troute_off[a * nd + b];
}

/* Directed Hamiltonian cycles over NVLink pairs (NCCL's intra-node ring
 * search, simplified): each cycle takes one link of every bonded pair it uses. */
static int nvlink_rings(const cl_sim_machine *m, int rings[][CL_SIM_MAX_LOCAL], int maxr)
{
    int G = m->gpus;
    static int cnt[CL_SIM_MAX_LOCAL][CL_SIM_MAX_LOCAL];
    memset(cnt, 0, sizeof cnt);
    for (int i = 0; i < m->sys.nnvpairs; i++) {
        const cl_sim_nvpair *p = &m->sys.nvpairs[i];
        if (p->a < G && p->b < G) {
            cnt[p->a][p->b] += p->count;
            cnt[p->b][p->a] += p->count;
        }
    }
    int nr = 0;
    while (nr < maxr) {
        int path[CL_SIM_MAX_LOCAL], next[CL_SIM_MAX_LOCAL], used[CL_SIM_MAX_LOCAL] = {0};
        int depth = 0;
        path[0] = 0;
        used[0] = 1;
        next[0] = 0;
        int found = 0;
        long budget = 200000;
        while (depth >= 0 && budget-- > 0) {
            int v = path[depth];
            if (depth == G - 1) {
                if (cnt[v][0] > 0) {
                    found = 1;
                    break;
                }
                used[v] = 0;
                depth--;
                continue;
            }
            int w = next[depth]++;
            if (w >= G) {
                used[v] = 0;
                depth--;
                continue;
            }
            if (!used[w] && cnt[v][w] > 0) {
                path[++depth] = w;
                used[w] = 1;
                next[depth] = 0;
            }
        }
        if (!found)
            break;
        for (int i = 0; i < G; i++) {
            cnt[path[i]][path[(i + 1) % G]]--;
            rings[nr][i] = path[i];
        }
        nr++;
    }
    return nr;
}

int cl_sim_ring_channels(const cl_sim_machine *m)
{
    if (m->nodes > 1)
        return m->nics;
    if (m->sys.node == CL_SIM_NODE_NVLINK) {
        int rings[16][CL_SIM_MAX_LOCAL];
        int n = nvlink_rings(m, rings, 16);
        return n > 0 ? n : 1;
    }
    return 1;
}

/* Local GPU order of channel c: enter near NIC c, leave near NIC c. */
static void local_order(const cl_sim_machine *m, int c, int *ord)
{
    int G = m->gpus;
    if (m->nodes == 1) {
        if (m->sys.node == CL_SIM_NODE_NVLINK) {
            int rings[16][CL_SIM_MAX_LOCAL];
            int n = nvlink_rings(m, rings, 16);
            if (n > 0) {
                memcpy(ord, rings[c % n], (size_t)G * sizeof *ord);
                return;
            }
        }
        for (int i = 0; i < G; i++)
            ord[i] = i;
        return;
    }
    if (m->ring_order == CL_SIM_RING_NAIVE) {
        for (int i = 0; i < G; i++)
            ord[i] = (c + i) % G;
        return;
    }
    int nic = m->gpus + c % m->nics;
    int pref = (c % m->nics) * G / m->nics;
    int entry = pref;
    for (int i = 0; i < G; i++)
        if (route_len(m, nic, i) < route_len(m, nic, entry))
            entry = i;
    int exit = -1;
    for (int i = 0; i < G; i++)
        if (i != entry && (exit < 0 || route_len(m, i, nic) < route_len(m, exit, nic)))
            exit = i;
    int k = 0;
    ord[k++] = entry;
    for (int i = 0; i < G; i++)
        if (i != entry && i != exit)
            ord[k++] = i;
    if (exit >= 0)
        ord[k++] = exit;
}

void cl_sim_ring_order(const cl_sim_machine *m, int c, int *ranks)
{
    int ord[CL_SIM_MAX_LOCAL];
    local_order(m, c, ord);
    for (int n = 0; n < m->nodes; n++)
        for (int i = 0; i < m->gpus; i++)
            ranks[n * m->gpus + i] = n * m->gpus + ord[i];
}

/* ---- phases --------------------------------------------------------------- */

typedef struct fspec {
    int src, dst, nic, nic2, link; /* link >= 0: a one-link flow on that link */
    double bytes;                  /* nic2: the NIC it enters the far node by */
} fspec;

typedef struct phase {
    fspec *f;
    int n, cap;
} phase;

static int add2(phase *ph, int src, int dst, int nic, int nic2, int link, double bytes)
{
    if (ph->n == ph->cap) {
        int nc = ph->cap ? ph->cap * 2 : 1024;
        fspec *q = realloc(ph->f, (size_t)nc * sizeof *q);
        if (!q)
            return -1;
        ph->f = q;
        ph->cap = nc;
    }
    ph->f[ph->n++] = (fspec){src, dst, nic, nic2, link, bytes};
    return 0;
}

static int add(phase *ph, int src, int dst, int nic, int link, double bytes)
{
    return add2(ph, src, dst, nic, nic, link, bytes);
}

/* Completion time (s) of all flows of ph started together, no latency. */
static cl_result run_phase(cl_sim_machine *m, const phase *ph, double *t, long *nflows)
{
    cl_sim_engine e;
    cl_result rc = cl_sim_engine_init(&e, &m->g, 1.0);
    int path[CL_SIM_MAX_PATH];
    for (int i = 0; rc == CL_OK && i < ph->n; i++) {
        const fspec *f = &ph->f[i];
        int len;
        if (f->link >= 0) {
            path[0] = f->link;
            len = 1;
        } else {
            cl_sim_pclass cls;
            len = f->nic >= 0 ? cl_sim_route_nics(m, f->src, f->dst, f->nic, f->nic2, i, path,
                                                  CL_SIM_MAX_PATH, &cls)
                              : cl_sim_route(m, f->src, f->dst, -1, i, path, CL_SIM_MAX_PATH, &cls);
            if (len < 0) {
                rc = CL_ERR_INVALID;
                break;
            }
        }
        if (cl_sim_engine_add(&e, path, len, f->bytes, 0, 0, i) < 0)
            rc = CL_ERR_NOMEM;
    }
    if (rc == CL_OK)
        rc = cl_sim_engine_run(&e);
    *t = e.now;
    *nflows += ph->n;
    cl_sim_engine_free(&e);
    return rc;
}

/* Latency (s) of the edge src -> dst for algorithm table `tree` and protocol p. */
static double edge_lat2(cl_sim_machine *m, int src, int dst, int nic, int nic2, int tree, int p)
{
    int path[CL_SIM_MAX_PATH];
    cl_sim_pclass cls;
    int len = nic >= 0 ? cl_sim_route_nics(m, src, dst, nic, nic2, 0, path, CL_SIM_MAX_PATH, &cls)
                       : cl_sim_route(m, src, dst, -1, 0, path, CL_SIM_MAX_PATH, &cls);
    if (len < 0)
        return 0;
    const cl_sim_system *s = &m->sys;
    double hw;
    if (cls == CL_SIM_P_NVL)
        hw = tree ? s->lat_tree_nvl[p] : s->lat_ring_nvl[p];
    else if (cls == CL_SIM_P_PCI)
        hw = tree ? s->lat_tree_pci[p] : s->lat_ring_pci[p];
    else {
        hw = tree ? s->lat_tree_net[p] : s->lat_ring_net[p];
        if (p == CL_PROTO_SIMPLE)
            hw *= s->simple_net_lat_factor;
    }
    return hw * US + cl_sim_path_latency(m, path, len);
}

static double edge_lat(cl_sim_machine *m, int src, int dst, int nic, int tree, int p)
{
    return edge_lat2(m, src, dst, nic, nic, tree, p);
}

/* What a schedule costs before the protocol is applied. */
typedef struct cost {
    double bw_s;                  /* bytes time at full link bandwidth */
    double lat_s[CL_PROTO_COUNT]; /* base + hops, per protocol */
    int protos_ok[CL_PROTO_COUNT];
    int nch;
    long nflows;
    double busbw_cap; /* GB/s, a bus bandwidth the algorithm never exceeds; 0 none */
} cost;

/* The NICs a ring edge a -> b of channel ch leaves and enters by: NIC ch on
 * both sides for rail-aligned rings; the GPUs' own NICs for naive rings. */
static void ring_nics(const cl_sim_machine *m, int ch, int a, int b, int *na, int *nb)
{
    int r = m->nics ? m->nics : 1;
    if (m->ring_order == CL_SIM_RING_NAIVE && m->nics) {
        *na = m->gpu_nic[a % m->gpus];
        *nb = m->gpu_nic[b % m->gpus];
    } else {
        *na = *nb = ch % r;
    }
}

/* Ring over `ranks` (n of them) on channel-set of nch rings given by orders. */
static cl_result ring_cost(cl_sim_machine *m, cl_coll_kind coll, double bytes, cost *c)
{
    int p = m->nranks, nch = cl_sim_ring_channels(m);
    int *ord = malloc((size_t)p * nch * sizeof *ord);
    if (!ord)
        return CL_ERR_NOMEM;
    for (int ch = 0; ch < nch; ch++)
        cl_sim_ring_order(m, ch, ord + (size_t)ch * p);
    int bcast = coll == CL_COLL_BROADCAST;
    int nsteps = coll == CL_COLL_ALLREDUCE ? 2 * (p - 1) : p - 1;
    double chunk = bcast ? bytes / nch : bytes / ((double)p * nch);
    phase ph = {0};
    cl_result rc = CL_OK;
    for (int ch = 0; ch < nch && rc == CL_OK; ch++)
        for (int i = 0; i < p - (bcast ? 1 : 0); i++) {
            int a = ord[(size_t)ch * p + i], b = ord[(size_t)ch * p + (i + 1) % p];
            int na, nb;
            ring_nics(m, ch, a, b, &na, &nb);
            if (add2(&ph, a, b, na, nb, -1, chunk))
                rc = CL_ERR_NOMEM;
        }
    double t = 0;
    if (rc == CL_OK)
        rc = run_phase(m, &ph, &t, &c->nflows);
    c->bw_s = bcast ? t : t * nsteps;
    c->nch = nch;
    for (int pr = 0; pr < CL_PROTO_COUNT && rc == CL_OK; pr++) {
        double sum = 0;
        for (int i = 0; i < p; i++) {
            int na, nb;
            ring_nics(m, 0, ord[i], ord[(i + 1) % p], &na, &nb);
            sum += edge_lat2(m, ord[i], ord[(i + 1) % p], na, nb, 0, pr);
        }
        double avg = sum / p;
        int hops = bcast ? p - 1 : nsteps;
        c->lat_s[pr] = m->sys.lat_ring_base[pr] * US + hops * avg;
        c->protos_ok[pr] = m->sys.proto_enabled[pr];
    }
    free(ord);
    free(ph.f);
    return rc;
}

static int btree_parent(int r, int n)
{
    if (r == 0)
        return -1;
    int bit = r & -r;
    int up = (r ^ bit) | (bit << 1);
    return up >= n ? (r ^ bit) : up;
}

static cl_result tree_cost(cl_sim_machine *m, double bytes, cost *c)
{
    int N = m->nodes, G = m->gpus;
    int nch = N > 1 ? m->nics : 1;
    phase ph = {0};
    cl_result rc = CL_OK;
    for (int ch = 0; ch < nch && rc == CL_OK; ch++) {
        int ord[CL_SIM_MAX_LOCAL];
        local_order(m, ch, ord);
        double share = bytes / nch;
        for (int n = 0; n < N; n++)
            for (int i = 0; i + 1 < G; i++) {
                int a = n * G + ord[i], b = n * G + ord[i + 1];
                if (add(&ph, b, a, -1, -1, share) || add(&ph, a, b, -1, -1, share))
                    rc = CL_ERR_NOMEM;
            }
        for (int t = 0; t < 2 && N > 1; t++)
            for (int x = 0; x < N; x++) {
                int px = btree_parent(t == 0 ? x : (N % 2 == 0 ? N - 1 - x : (x + N - 1) % N), N);
                if (px < 0)
                    continue;
                int py = t == 0 ? px : (N % 2 == 0 ? N - 1 - px : (px + 1) % N);
                int a = x * G + ord[0], b = py * G + ord[0];
                if (add(&ph, a, b, ch, -1, share / 2) || add(&ph, b, a, ch, -1, share / 2))
                    rc = CL_ERR_NOMEM;
            }
    }
    double t = 0;
    if (rc == CL_OK)
        rc = run_phase(m, &ph, &t, &c->nflows);
    free(ph.f);
    c->bw_s = t;
    c->nch = nch;
    int levels = 0;
    while ((1 << levels) < N)
        levels++;
    /* NCCL's per-channel tree ceiling (tuning.cc perChMaxTreeBws): the pipelined
     * chains and trees stall on their own synchronisation before the links fill. */
    int scale = N == 1 ? 0 : N == 2 ? 1 : 2;
    if (m->sys.tree_ch_max_gbps[scale] > 0)
        c->busbw_cap = nch * m->sys.tree_ch_max_gbps[scale];
    for (int pr = 0; pr < CL_PROTO_COUNT; pr++) {
        double intra = G > 1 ? edge_lat(m, 0, 1, -1, 1, pr) : 0;
        double inter = N > 1 ? edge_lat(m, 0, G, 0, 1, pr) : 0;
        c->lat_s[pr] = m->sys.lat_tree_base[pr] * US + 2 * ((G - 1) * intra + levels * inter);
        c->protos_ok[pr] = m->sys.proto_enabled[pr];
    }
    return rc;
}

/* Ring allreduce (or RS/AG when steps given) among `k` ranks first + i*stride,
 * for every group, all groups at once. Returns bytes time of one step x steps. */
static cl_result group_ring(cl_sim_machine *m, int ngroups, int k,
                            int (*rank_of)(const cl_sim_machine *, int, int), int nsteps,
                            double chunk, int nic_by_local, double *t_out, long *nflows)
{
    phase ph = {0};
    cl_result rc = CL_OK;
    for (int g = 0; g < ngroups && rc == CL_OK; g++)
        for (int i = 0; i < k; i++) {
            int a = rank_of(m, g, i), b = rank_of(m, g, (i + 1) % k);
            int nic = nic_by_local ? m->gpu_nic[a % m->gpus] : -1;
            if (add(&ph, a, b, nic, -1, chunk))
                rc = CL_ERR_NOMEM;
        }
    double t = 0;
    if (rc == CL_OK && k > 1)
        rc = run_phase(m, &ph, &t, nflows);
    free(ph.f);
    *t_out = t * nsteps;
    return rc;
}

static int intra_rank(const cl_sim_machine *m, int node, int i) { return node * m->gpus + i; }

static int inter_rank(const cl_sim_machine *m, int local, int i) { return i * m->gpus + local; }

/* NVLS port flows: every GPU of every node sends `up` and receives `down` bytes. */
static cl_result nvls_phase(cl_sim_machine *m, double up, double down, double *t, long *nf)
{
    phase ph = {0};
    cl_result rc = CL_OK;
    for (int n = 0; n < m->nodes && rc == CL_OK; n++)
        for (int i = 0; i < m->gpus; i++) {
            /* the first two template links of GPU i are its NVSwitch port (see sim_node.c) */
            int l = n * m->tl + 2 * i;
            if (add(&ph, 0, 0, -1, l, up) || add(&ph, 0, 0, -1, l + 1, down))
                rc = CL_ERR_NOMEM;
        }
    if (rc == CL_OK)
        rc = run_phase(m, &ph, t, nf);
    free(ph.f);
    return rc;
}

static cl_result hier_cost(cl_sim_machine *m, double bytes, int nvls, cost *c)
{
    int N = m->nodes, G = m->gpus;
    double t1 = 0, t2 = 0, t3 = 0;
    cl_result rc;
    double eff = nvls ? m->sys.nvls_eff : 1.0;
    if (nvls) {
        rc = nvls_phase(m, bytes, bytes / G, &t1, &c->nflows);
        if (rc == CL_OK)
            rc = nvls_phase(m, bytes / G, bytes, &t3, &c->nflows);
        t1 /= eff;
        t3 /= eff;
    } else {
        rc = group_ring(m, N, G, intra_rank, G - 1, bytes / G, 0, &t1, &c->nflows);
        t3 = t1;
    }
    if (rc == CL_OK && N > 1)
        rc = group_ring(m, G, N, inter_rank, 2 * (N - 1), bytes / G / N, 1, &t2, &c->nflows);
    c->bw_s = t1 + t2 + t3;
    c->nch = 1;
    for (int pr = 0; pr < CL_PROTO_COUNT; pr++) {
        double intra = G > 1 ? edge_lat(m, 0, 1, -1, 0, pr) : 0;
        double inter = N > 1 ? edge_lat(m, 0, G, m->gpu_nic[0], 0, pr) : 0;
        double l = m->sys.lat_ring_base[pr] * US + 2 * (N - 1) * inter;
        l += nvls ? 2 * m->sys.lat_nvls_us * US : 2 * (G - 1) * intra;
        c->lat_s[pr] = l;
        c->protos_ok[pr] = nvls ? pr == CL_PROTO_SIMPLE : m->sys.proto_enabled[pr];
    }
    return rc;
}

/* NVLS across nodes, pipelined as NCCL runs it: every GPU moves S(G+1)/G up
 * and down its NVSwitch port (in-switch reduce-scatter and multicast
 * all-gather, at nvls_eff), while GPU i of every node exchanges the reduced
 * shard S/G with GPU i of the other nodes through its own NIC: a ring per rail
 * (NVLS, 2(N-1)/N x S/G per edge) or a double binary tree per rail
 * (NVLS-Tree, S/2G per tree edge and direction). One engine phase carries
 * both, so the slower side sets the time and shared links are shared. */
static cl_result nvls_multi_cost(cl_sim_machine *m, double bytes, int tree, cost *c)
{
    int N = m->nodes, G = m->gpus;
    double eff = m->sys.nvls_eff > 0 ? m->sys.nvls_eff : 1;
    double v = bytes * (G + 1) / G / eff;
    phase ph = {0};
    cl_result rc = CL_OK;
    for (int n = 0; n < N && rc == CL_OK; n++)
        for (int i = 0; i < G; i++) {
            int l = n * m->tl + 2 * i; /* GPU i's NVSwitch port (see sim_node.c) */
            if (add(&ph, 0, 0, -1, l, v) || add(&ph, 0, 0, -1, l + 1, v))
                rc = CL_ERR_NOMEM;
        }
    double shard = bytes / G;
    for (int i = 0; i < G && rc == CL_OK && N > 1; i++) {
        int nic = m->gpu_nic[i];
        if (!tree) {
            for (int x = 0; x < N; x++)
                if (add(&ph, x * G + i, (x + 1) % N * G + i, nic, -1, 2.0 * (N - 1) / N * shard))
                    rc = CL_ERR_NOMEM;
            continue;
        }
        for (int t = 0; t < 2; t++)
            for (int x = 0; x < N; x++) {
                int px = btree_parent(t == 0 ? x : (N % 2 == 0 ? N - 1 - x : (x + N - 1) % N), N);
                if (px < 0)
                    continue;
                int py = t == 0 ? px : (N % 2 == 0 ? N - 1 - px : (px + 1) % N);
                int a = x * G + i, b = py * G + i;
                if (add(&ph, a, b, nic, -1, shard / 2) || add(&ph, b, a, nic, -1, shard / 2))
                    rc = CL_ERR_NOMEM;
            }
    }
    double t = 0;
    if (rc == CL_OK)
        rc = run_phase(m, &ph, &t, &c->nflows);
    free(ph.f);
    c->bw_s = t;
    c->nch = 1;
    int levels = 0;
    while ((1 << levels) < N)
        levels++;
    for (int pr = 0; pr < CL_PROTO_COUNT; pr++) {
        double inter = edge_lat(m, 0, G, m->gpu_nic[0], tree, CL_PROTO_SIMPLE);
        c->lat_s[pr] = m->sys.lat_nvls_us * US + (tree ? 2 * levels : 2 * (N - 1)) * inter;
        c->protos_ok[pr] = pr == CL_PROTO_SIMPLE;
    }
    return rc;
}

static cl_result nvls_cost(cl_sim_machine *m, double bytes, int tree, cost *c)
{
    if (!m->sys.nvls || m->sys.node != CL_SIM_NODE_NVSWITCH) {
        cl_set_error("%s has no NVLink SHARP (nvls = 0)", m->sys.name);
        return CL_ERR_UNSUPPORTED;
    }
    if (tree && m->nodes < 2) {
        cl_set_error("NVLSTree needs at least 2 nodes (NVLS covers one)");
        return CL_ERR_UNSUPPORTED;
    }
    if (m->nodes > 1)
        return nvls_multi_cost(m, bytes, tree, c);
    int G = m->gpus;
    double v = bytes * (G + 1) / G;
    double t = 0;
    cl_result rc = nvls_phase(m, v, v, &t, &c->nflows);
    c->bw_s = t / m->sys.nvls_eff;
    c->nch = 1;
    for (int pr = 0; pr < CL_PROTO_COUNT; pr++) {
        c->lat_s[pr] = m->sys.lat_nvls_us * US;
        c->protos_ok[pr] = pr == CL_PROTO_SIMPLE;
    }
    return rc;
}

static cl_result alltoall_cost(cl_sim_machine *m, double bytes, cost *c)
{
    int p = m->nranks;
    if (p > 2048) {
        cl_set_error("alltoall is simulated flow by flow: at most 2048 ranks, not %d", p);
        return CL_ERR_UNSUPPORTED;
    }
    phase ph = {0};
    cl_result rc = CL_OK;
    for (int a = 0; a < p && rc == CL_OK; a++)
        for (int b = 0; b < p; b++)
            if (a != b && add(&ph, a, b, m->gpu_nic[b % m->gpus], -1, bytes / p))
                rc = CL_ERR_NOMEM;
    double t = 0;
    if (rc == CL_OK)
        rc = run_phase(m, &ph, &t, &c->nflows);
    free(ph.f);
    c->bw_s = t;
    c->nch = 1;
    for (int pr = 0; pr < CL_PROTO_COUNT; pr++) {
        double worst = p > 1 ? edge_lat(m, 0, p - 1, m->gpu_nic[(p - 1) % m->gpus], 0, pr) : 0;
        c->lat_s[pr] = m->sys.lat_ring_base[pr] * US + worst;
        c->protos_ok[pr] = m->sys.proto_enabled[pr];
    }
    return rc;
}

static cl_result algo_cost(cl_sim_machine *m, cl_coll_kind coll, cl_algo algo, double bytes,
                           cost *c)
{
    memset(c, 0, sizeof *c);
    if (coll == CL_COLL_ALLTOALL) {
        if (algo != CL_ALGO_RING && algo != CL_ALGO_AUTO) {
            cl_set_error("alltoall has no '%s' algorithm", cl_algo_name(algo));
            return CL_ERR_UNSUPPORTED;
        }
        return alltoall_cost(m, bytes, c);
    }
    switch (algo) {
    case CL_ALGO_RING: return ring_cost(m, coll, bytes, c);
    case CL_ALGO_TREE:
    case CL_ALGO_NVLS:
    case CL_ALGO_NVLS_TREE:
    case CL_ALGO_HIER:
        if (coll != CL_COLL_ALLREDUCE) {
            cl_set_error("algorithm '%s' is modelled for allreduce only", cl_algo_name(algo));
            return CL_ERR_UNSUPPORTED;
        }
        if (algo == CL_ALGO_TREE)
            return tree_cost(m, bytes, c);
        if (algo == CL_ALGO_NVLS || algo == CL_ALGO_NVLS_TREE)
            return nvls_cost(m, bytes, algo == CL_ALGO_NVLS_TREE, c);
        return hier_cost(m, bytes, 0, c);
    default: return CL_ERR_INVALID;
    }
}

/* Best protocol for a cost; returns the time in seconds. */
static double best_proto(const cl_sim_machine *m, const cost *c, cl_coll_kind coll, double bytes,
                         int *proto)
{
    const cl_sim_system *s = &m->sys;
    double best = INFINITY;
    int idx = m->nodes == 1 ? 0 : m->nodes == 2 ? 1 : 2;
    double busbytes = bytes * cl_coll_busbw_factor(coll, m->nranks);
    for (int p = 0; p < CL_PROTO_COUNT; p++) {
        if (!c->protos_ok[p])
            continue;
        double bw = c->bw_s / (s->proto_eff[p] > 0 ? s->proto_eff[p] : 1);
        if (c->busbw_cap > 0 && busbytes / (c->busbw_cap * 1e9) > bw)
            bw = busbytes / (c->busbw_cap * 1e9);
        if (p == CL_PROTO_LL && s->ll_max_gbps[idx] > 0 &&
            busbytes / (s->ll_max_gbps[idx] * 1e9) > bw)
            bw = busbytes / (s->ll_max_gbps[idx] * 1e9);
        double t = s->launch_us * US + c->lat_s[p] + bw;
        if (t < best) {
            best = t;
            *proto = p;
        }
    }
    return best;
}

cl_result cl_sim_predict_machine(cl_sim_machine *m, cl_coll_kind coll, cl_algo algo, double bytes,
                                 cl_sim_result *out)
{
    memset(out, 0, sizeof *out);
    if (!(bytes >= 0) || !isfinite(bytes) || coll < 0 || coll >= CL_COLL_KIND_COUNT) {
        cl_set_error("invalid size or collective");
        return CL_ERR_INVALID;
    }
    cl_algo cands[5];
    int nc = 0;
    if (algo == CL_ALGO_AUTO) {
        cands[nc++] = CL_ALGO_RING;
        if (coll == CL_COLL_ALLREDUCE) {
            cands[nc++] = CL_ALGO_TREE;
            if (m->sys.nvls && m->sys.node == CL_SIM_NODE_NVSWITCH) {
                if (m->nodes > 1)
                    cands[nc++] = CL_ALGO_NVLS_TREE;
                /* across nodes NCCL runs NVLS only with in-network reduction
                 * (CollNet/SHARP); without it, NVLS-Tree */
                if (m->nodes == 1 || m->sys.net_sharp)
                    cands[nc++] = CL_ALGO_NVLS;
            }
        }
    } else {
        cands[nc++] = algo;
    }
    double best = INFINITY;
    for (int i = 0; i < nc; i++) {
        cost c;
        cl_result rc = algo_cost(m, coll, cands[i], bytes, &c);
        if (rc != CL_OK)
            return rc;
        int proto = CL_PROTO_SIMPLE;
        double t = best_proto(m, &c, coll, bytes, &proto);
        out->nflows += c.nflows;
        if (t < best) {
            best = t;
            out->algo = cands[i];
            out->proto = proto;
            out->nchannels = c.nch;
            out->lat_us = (m->sys.launch_us * US + c.lat_s[proto]) / US;
        }
    }
    if (isinf(best)) {
        cl_set_error("no protocol enabled for this algorithm on %s", m->sys.name);
        return CL_ERR_UNSUPPORTED;
    }
    out->time_us = best / US;
    out->algbw = best > 0 ? bytes / best / 1e9 : 0;
    out->busbw = out->algbw * cl_coll_busbw_factor(coll, m->nranks);
    return CL_OK;
}

cl_result cl_sim_predict(const char *system, const cl_sim_overrides *ov, cl_coll_kind coll,
                         cl_algo algo, double bytes, cl_sim_result *out)
{
    cl_sim_machine m;
    cl_result rc = cl_sim_machine_load(system, ov, &m);
    if (rc != CL_OK)
        return rc;
    rc = cl_sim_predict_machine(&m, coll, algo, bytes, out);
    cl_sim_machine_free(&m);
    return rc;
}

cl_result cl_sim_predict_algo_proto(cl_sim_machine *m, cl_coll_kind coll, cl_algo algo,
                                    cl_proto proto, double bytes, cl_sim_result *out)
{
    memset(out, 0, sizeof *out);
    if (!(bytes >= 0) || !isfinite(bytes) || coll < 0 || coll >= CL_COLL_KIND_COUNT || proto < 0 ||
        proto >= CL_PROTO_COUNT || algo == CL_ALGO_AUTO) {
        cl_set_error("invalid size, collective, protocol or algorithm");
        return CL_ERR_INVALID;
    }
    cost c;
    cl_result rc = algo_cost(m, coll, algo, bytes, &c);
    if (rc != CL_OK)
        return rc;
    if (!c.protos_ok[proto]) {
        cl_set_error("protocol %s is not available for %s on %s", cl_proto_name(proto),
                     cl_algo_name(algo), m->sys.name);
        return CL_ERR_UNSUPPORTED;
    }
    /* best_proto over a copy that allows only `proto` */
    for (int p = 0; p < CL_PROTO_COUNT; p++)
        c.protos_ok[p] = p == (int)proto;
    int chosen = proto;
    double t = best_proto(m, &c, coll, bytes, &chosen);
    out->algo = algo;
    out->proto = proto;
    out->nchannels = c.nch;
    out->nflows = c.nflows;
    out->lat_us = (m->sys.launch_us * US + c.lat_s[proto]) / US;
    out->time_us = t / US;
    out->algbw = t > 0 ? bytes / t / 1e9 : 0;
    out->busbw = out->algbw * cl_coll_busbw_factor(coll, m->nranks);
    return CL_OK;
}
