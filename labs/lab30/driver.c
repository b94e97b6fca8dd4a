/* driver.c: lab 30's plug-in: the torus AllReduce, and the algorithm of each fabric and size.
 *
 *   lab30 verify|bench|sweep   the student's torus AllReduce (coll_suite.h), every message
 *                              checked to go to a torus neighbour
 *   lab30 choose FABRIC points=G:B,...   the student's algorithm of each point, and the time
 *                              of every algorithm there
 *   lab30 table  FABRIC points=G:B,...   the time of every algorithm at each point
 * FABRIC: fabric=superpod|superpod-sharp|torus2d|torus3d.
 *
 * Switched fabrics are simulated (common/sim: a DGX H100 rail fabric built for the job,
 * routed flows, NCCL's latencies). The simulator has no torus and no reduction in the
 * network's switches (its NVLS across servers is a ring per rail): a torus and SHARP are
 * timed by the handout's formulas (torus_time, sharp_time below).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/coll_suite.h"
#include "lab30_op.h"

typedef struct choose_args {
    lab30_fabric f;
    int n;
    lab30_point pts[LAB30_MAX_POINTS];
    int algo[LAB30_MAX_POINTS]; /* out */
} choose_args;

#ifdef CL_STUDENT_SIDE

static cl_result torus(cl_comm *c, void *args)
{
    const cl_coll_args *a = args;
    return lab30_torus_allreduce(c, a->sendbuf, a->recvbuf, a->count, a->dtype, a->op, a->scratch);
}

static cl_result choose(cl_comm *c, void *args)
{
    choose_args *a = args;
    return lab30_choose(c, &a->f, a->n, a->pts, a->algo);
}

CL_STUDENT_ENTRIES({"torus", torus}, {"choose", choose});

#else

#include "sim/sim.h"

#define A(x) (1 << (x))

static const char *const ALGO_NAMES[LAB30_NALGOS] = {"ring", "tree", "nvlstree", "nvls", "torus"};
static const cl_algo SIM_ALGO[LAB30_NALGOS] = {CL_ALGO_RING, CL_ALGO_TREE, CL_ALGO_NVLS_TREE,
                                               CL_ALGO_NVLS, CL_ALGO_AUTO};

/* The fabrics; sources in datasets/lab30/README.md. Both switched ones are a DGX H100 SuperPOD
 * (with SHARP or without), both tori the same chips and links in 2 or 3 dimensions. */
#define DGX_H100_SUPERPOD                                                                          \
    .kind = LAB30_SWITCHED, .gpus_per_node = 8, .nvlink_gbps = 18 * 20.6, .nic_gbps = 48,          \
    .probe_max_gpus = 1024, .budget = 20
#define TORUS                                                                                      \
    .kind = LAB30_TORUS_FABRIC, .algos = A(LAB30_RING) | A(LAB30_TORUS), .link_gbps = 45,          \
    .hop_us = 1.0, .launch_us = 10, .probe_max_gpus = 1024, .budget = 20
static const struct fabric_def {
    lab30_fabric f;
    const char *system; /* switched: the simulator's system */
} FABRICS[] = {
    {{.name = "superpod",
      .algos = A(LAB30_RING) | A(LAB30_TREE) | A(LAB30_NVLS_TREE),
      DGX_H100_SUPERPOD},
     "dgx-h100"},
    {{.name = "superpod-sharp",
      .algos = A(LAB30_RING) | A(LAB30_TREE) | A(LAB30_NVLS_TREE) | A(LAB30_NVLS),
      .sharp = 1,
      DGX_H100_SUPERPOD},
     "dgx-h100"},
    {{.name = "torus2d", .ndims = 2, TORUS}, NULL},
    {{.name = "torus3d", .ndims = 3, TORUS}, NULL},
};
#define NFABRICS ((int)(sizeof FABRICS / sizeof FABRICS[0]))

#define CACHED 8 /* machines kept: both switched fabrics are the same DGX H100 machine */

static struct {
    const struct fabric_def *def;
    cl_sim_machine m[CACHED]; /* the machine built for m_gpus[i] GPUs */
    long m_gpus[CACHED];
    int next;
    int calls;
} cur;

/* The DGX H100 machine of gpus GPUs, built once per process. */
static cl_result machine(long gpus, cl_sim_machine **out)
{
    for (int i = 0; i < CACHED; i++)
        if (cur.m_gpus[i] == gpus) {
            *out = &cur.m[i];
            return CL_OK;
        }
    int i = cur.next;
    cur.next = (cur.next + 1) % CACHED;
    if (cur.m_gpus[i])
        cl_sim_machine_free(&cur.m[i]);
    cur.m_gpus[i] = 0;
    cl_sim_overrides ov = {.nodes = (int)(gpus / cur.def->f.gpus_per_node), .routing = -1};
    CL_CHECK(cl_sim_machine_load(cur.def->system, &ov, &cur.m[i]));
    cur.m_gpus[i] = gpus;
    *out = &cur.m[i];
    return CL_OK;
}

/* --- the formulas: a torus, and in-network reduction ------------------------------------- */

/* One AllReduce of bytes on a torus of gpus chips (handout, "四种网络"). ring: 2 x ndims
 * edge-disjoint rings through every chip, one per link of a chip, each with its share of
 * the data; torus: the dimension-wise rings, both directions of a dimension at once, each
 * with half the data. Every ring step costs one hop. */
static double torus_time(const lab30_fabric *f, int algo, long gpus, double bytes)
{
    double B = f->link_gbps * 1e9, h = f->hop_us * 1e-6, t = f->launch_us * 1e-6;
    if (gpus < 2)
        return t;
    if (algo == LAB30_RING)
        return t + 2.0 * (gpus - 1) * h + 2.0 * (gpus - 1) / gpus * bytes / (2.0 * f->ndims * B);
    int dims[LAB30_MAX_DIMS];
    lab30_torus_dims(gpus, f->ndims, dims);
    double s = bytes;
    for (int d = 0; d < f->ndims; d++) {
        int k = dims[d];
        if (k > 1)
            t += 2.0 * (k - 1) * h + 2.0 * (k - 1) / k * s / (2.0 * B);
        s /= k;
    }
    return t;
}

/* NVLS with the reduction in the InfiniBand switches too (SHARP): inside a server NVLS moves
 * S(G+1)/G over each GPU's NVSwitch port at NCCL's NVLS efficiency; each GPU's shard S/G
 * goes up its rail's two switch tiers, reduced there, and comes back; the two are
 * pipelined. Constants of datasets/systems/dgx-h100.conf (launch_us, lat_nvls_us,
 * fabric_hop_us, nvls_eff). */
static double sharp_time(const lab30_fabric *f, double bytes)
{
    const double launch = 14.67e-6, nvls_lat = 25e-6, hop = 0.5e-6, eff = 0.85;
    int G = f->gpus_per_node;
    double intra = bytes * (G + 1) / G / (f->nvlink_gbps * 1e9 * eff);
    double net = bytes / G / (f->nic_gbps * 1e9);
    return launch + nvls_lat + 4 * hop + fmax(intra, net);
}

/* --- the time of one point ------------------------------------------------------------------ */

static cl_result valid_point(const lab30_fabric *f, int algo, long gpus, double bytes)
{
    if (algo < 0 || algo >= LAB30_NALGOS || !(f->algos & A(algo))) {
        cl_set_error("%s: algorithm %d does not run on this fabric", f->name, algo);
        return CL_ERR_INVALID;
    }
    if (gpus < 2 || gpus > 65536 || (f->kind == LAB30_SWITCHED && gpus % f->gpus_per_node)) {
        cl_set_error("%s: %ld GPUs: 2 to 65536%s", f->name, gpus,
                     f->kind == LAB30_SWITCHED ? ", whole servers of 8" : "");
        return CL_ERR_INVALID;
    }
    if (!(bytes >= 8 && bytes <= 16.0 * (1 << 30))) {
        cl_set_error("%s: %g bytes: 8 B to 16 GiB", f->name, bytes);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

static cl_result time_of(int algo, long gpus, double bytes, double *out)
{
    const struct fabric_def *d = cur.def;
    CL_CHECK(valid_point(&d->f, algo, gpus, bytes));
    if (d->f.kind == LAB30_TORUS_FABRIC) {
        *out = torus_time(&d->f, algo, gpus, bytes);
        return CL_OK;
    }
    if (algo == LAB30_NVLS) {
        *out = sharp_time(&d->f, bytes);
        return CL_OK;
    }
    cl_sim_machine *m;
    cl_sim_result r;
    CL_CHECK(machine(gpus, &m));
    CL_CHECK(cl_sim_predict_machine(m, CL_COLL_ALLREDUCE, SIM_ALGO[algo], bytes, &r));
    *out = r.time_us * 1e-6;
    return CL_OK;
}

static cl_result lab_op(cl_run *run, cl_comm *comm, int code, void *args, size_t bytes)
{
    (void)run, (void)comm;
    if (code != LAB30_OP_PROBE || bytes != sizeof(lab30_probe_args) || !cur.def) {
        cl_set_error("lab30 has no operation %d of %zu bytes here", code, bytes);
        return CL_ERR_INVALID;
    }
    lab30_probe_args *a = args;
    const lab30_fabric *f = &cur.def->f;
    if (cur.calls >= f->budget) {
        cl_set_error("lab30_probe_time: this case's budget of %d calls is spent", f->budget);
        return CL_ERR_INVALID;
    }
    if (a->gpus > f->probe_max_gpus) {
        cl_set_error("lab30_probe_time: %ld GPUs; the simulator takes jobs of at most %d here",
                     a->gpus, f->probe_max_gpus);
        return CL_ERR_INVALID;
    }
    CL_CHECK(time_of(a->algo, a->gpus, a->bytes, &a->time_s));
    cur.calls++;
    return CL_OK;
}

/* --- cases -------------------------------------------------------------------------------- */

static cl_result load_case(cl_case *c, choose_args *a)
{
    const char *name, *text;
    CL_CHECK(cl_case_str(c, "fabric", &name));
    CL_CHECK(cl_case_str(c, "points", &text));
    cur.def = NULL;
    for (int i = 0; i < NFABRICS; i++)
        if (!strcmp(FABRICS[i].f.name, name))
            cur.def = &FABRICS[i];
    if (!cur.def) {
        cl_set_error("fabric=%s: superpod, superpod-sharp, torus2d or torus3d", name);
        return CL_ERR_INVALID;
    }
    cur.calls = 0;
    memset(a, 0, sizeof *a);
    a->f = cur.def->f;
    for (const char *s = text; *s;) {
        char *end;
        long g = strtol(s, &end, 10);
        if (end == s || *end != ':' || a->n == LAB30_MAX_POINTS) {
            cl_set_error("points=%s: up to %d GPUS:BYTES pairs separated by commas", text,
                         LAB30_MAX_POINTS);
            return CL_ERR_INVALID;
        }
        size_t bytes;
        char size[32];
        const char *b = end + 1, *stop = strchr(b, ',');
        size_t len = stop ? (size_t)(stop - b) : strlen(b);
        snprintf(size, sizeof size, "%.*s", (int)(len < 31 ? len : 31), b);
        CL_CHECK(cl_parse_size(size, &bytes));
        a->pts[a->n++] = (lab30_point){.gpus = g, .bytes = (double)bytes};
        s = stop ? stop + 1 : b + len;
    }
    return CL_OK;
}

/* The time of every algorithm at every point (0 where it does not run), and the best. */
static cl_result table_cols(cl_row *row, const choose_args *a, double *best)
{
    double t[LAB30_NALGOS][LAB30_MAX_POINTS];
    long long gpus[LAB30_MAX_POINTS];
    double bytes[LAB30_MAX_POINTS];
    for (int i = 0; i < a->n; i++) {
        gpus[i] = a->pts[i].gpus, bytes[i] = a->pts[i].bytes;
        best[i] = INFINITY;
        for (int k = 0; k < LAB30_NALGOS; k++) {
            t[k][i] = 0;
            if (!(a->f.algos & A(k)))
                continue;
            CL_CHECK(time_of(k, a->pts[i].gpus, a->pts[i].bytes, &t[k][i]));
            best[i] = fmin(best[i], t[k][i]);
        }
    }
    cl_col_str(row, "fabric", a->f.name);
    cl_col_ints(row, "gpus", gpus, (size_t)a->n);
    cl_col_nums(row, "bytes", bytes, (size_t)a->n, "%.0f");
    for (int k = 0; k < LAB30_NALGOS; k++) {
        char key[32];
        snprintf(key, sizeof key, "t_%s", ALGO_NAMES[k]);
        if (a->f.algos & A(k))
            cl_col_nums(row, key, t[k], (size_t)a->n, "%.6g");
    }
    cl_col_nums(row, "best_s", best, (size_t)a->n, "%.6g");
    return CL_OK;
}

static cl_result table_case(cl_case *c)
{
    static choose_args a;
    double best[LAB30_MAX_POINTS];
    CL_CHECK(load_case(c, &a));
    return table_cols(cl_case_row(c), &a, best);
}

static cl_result choose_case(cl_case *c)
{
    static choose_args a;
    double best[LAB30_MAX_POINTS], mine[LAB30_MAX_POINTS];
    CL_CHECK(load_case(c, &a));
    for (int i = 0; i < LAB30_MAX_POINTS; i++)
        a.algo[i] = -1;
    cl_result rc = cl_case_call(c, "choose", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "calls", cur.calls);
    if (rc != CL_OK)
        return rc;
    CL_CHECK(table_cols(row, &a, best));
    long long algo[LAB30_MAX_POINTS];
    for (int i = 0; i < a.n; i++) {
        algo[i] = a.algo[i];
        mine[i] = 0; /* an algorithm that does not run here */
        if (a.algo[i] >= 0 && a.algo[i] < LAB30_NALGOS && (a.f.algos & A(a.algo[i])))
            CL_CHECK(time_of(a.algo[i], a.pts[i].gpus, a.pts[i].bytes, &mine[i]));
    }
    cl_col_ints(row, "algo", algo, (size_t)a.n);
    cl_col_nums(row, "mine_s", mine, (size_t)a.n, "%.6g");
    return CL_OK;
}

/* --- the torus AllReduce's messages --------------------------------------------------------- */

/* Every transfer goes to a torus neighbour, and (when every block is non-empty) each rank
 * sends 2(k - 1) messages in each dimension of size k. */
static int torus_pattern(const cl_comm *c, const cl_coll_args *a, const cl_trace_event *ev, int n,
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

const cl_lab cl_lab_def = {
    .name = "lab30",
    .title = "未来趋势: torus、网内归约与 32K GPU 的 AllReduce",
    .collectives =
        (const cl_coll_entry[]){
            {.name = "torus", .kind = CL_COLL_ALLREDUCE, .baseline = 1, .pattern = torus_pattern},
            {0}},
    .modes = (const cl_mode[]){{.name = "choose",
                                .help = "your algorithm at each point (fabric= points=G:B,...), "
                                        "and every algorithm's time",
                                .cases = choose_case},
                               {.name = "table",
                                .help = "every algorithm's time at each point (fabric= "
                                        "points=G:B,...)",
                                .cases = table_case},
                               {0}},
    .lab_op = lab_op,
};

#endif
