/* driver.c: lab 14's plug-in: fabrics, forwarding tables, deadlock, link loads, placement.
 *
 *   lab14 build    kind=fattree k=8 | kind=leafspine leaves=8 hosts=16 spines=4 uplinks=8
 *                  | kind=rail sus=2 nodes=32 rails=8 spines=8
 *   lab14 route    fabric=FILE algo=dmodk|updown [root=SWITCH]
 *   lab14 deadlock fabric=FILE routes=FILE
 *   lab14 loads    fabric=FILE routes=FILE pattern=ring|shift|alltoall [shift=K] [hosts=all|A-B]
 *   lab14 plan     fabric=FILE job=FILE
 *
 * A fabric is an ibnetdiscover topology file (common/fabric.h); routes files
 * are forwarding tables ("lft SWITCHES HOSTS", then one line of ports per
 * switch); a job file names the servers, their HCAs, the busy ones and the
 * other jobs' flows. Every mode hands the student a fresh copy of its inputs
 * and checks what comes back with the harness's own code: routes are walked,
 * the channel dependency graph is built and searched, loads are recomputed,
 * and a plan's AllReduce is timed by the simulator's flow engine on the
 * student's own routes (common/sim/sim_paths.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness.h"
#include "lab14.h"

enum { BUILD_FATTREE, BUILD_LEAFSPINE, BUILD_RAIL };
enum { ROUTE_DMODK, ROUTE_UPDOWN };

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct build_args {
    int kind, p[4];
    lab14_fabric *f;
    int *hca;
} build_args;

typedef struct route_args {
    int algo, root;
    const lab14_fabric *f;
    lab14_routes *r;
} route_args;

typedef struct deadlock_args {
    const lab14_fabric *f;
    const lab14_routes *r;
    int acyclic, len;           /* out */
    int cycle[LAB14_MAX_CYCLE]; /* out */
} deadlock_args;

typedef struct loads_args {
    const lab14_fabric *f;
    const lab14_routes *r;
    int pattern, shift, n;
    const int *hosts;
    double bytes;
    lab14_flow *flows; /* out */
    int nflows;        /* out */
    double *load;      /* out */
} loads_args;

typedef struct plan_args {
    const lab14_fabric *f;
    const lab14_job *job;
    int *order;      /* out */
    lab14_routes *r; /* out */
} plan_args;

#ifdef CL_STUDENT_SIDE

static cl_result build(cl_comm *c, void *args)
{
    (void)c;
    build_args *a = args;
    if (a->kind == BUILD_FATTREE)
        return lab14_build_fat_tree(a->p[0], a->f);
    if (a->kind == BUILD_LEAFSPINE)
        return lab14_build_leaf_spine(a->p[0], a->p[1], a->p[2], a->p[3], a->f);
    return lab14_build_rail(a->p[0], a->p[1], a->p[2], a->p[3], a->f, a->hca);
}

static cl_result route(cl_comm *c, void *args)
{
    (void)c;
    route_args *a = args;
    return a->algo == ROUTE_DMODK ? lab14_route_dmodk(a->f, a->r)
                                  : lab14_route_updown(a->f, a->root, a->r);
}

static cl_result deadlock(cl_comm *c, void *args)
{
    (void)c;
    deadlock_args *a = args;
    return lab14_deadlock_free(a->f, a->r, &a->acyclic, a->cycle, &a->len);
}

static cl_result loads(cl_comm *c, void *args)
{
    (void)c;
    loads_args *a = args;
    a->nflows = lab14_pattern_flows(a->pattern, a->shift, a->hosts, a->n, a->bytes, a->flows,
                                    LAB14_MAX_FLOWS);
    if (a->nflows < 0 || a->nflows > LAB14_MAX_FLOWS)
        return CL_ERR_INVALID;
    return lab14_link_loads(a->f, a->r, a->flows, a->nflows, a->load);
}

static cl_result plan(cl_comm *c, void *args)
{
    (void)c;
    plan_args *a = args;
    return lab14_plan(a->f, a->job, a->order, a->r);
}

CL_STUDENT_ENTRIES({"build", build}, {"route", route}, {"deadlock", deadlock}, {"loads", loads},
                   {"plan", plan});

#else

#include "boundary/arena.h"
#include "fabric.h"
#include "sim/sim_paths.h"

#define HOP_S 0.5e-6 /* per switch crossed: SimAI's link hop (datasets/systems/dgx-h100.conf) */

/* --- memory the student's program shares ------------------------------------------------ */

static void *shared(size_t bytes)
{
    void *p;
    if (cl_host_alloc(bytes, &p) != CL_OK)
        return NULL;
    memset(p, 0, bytes);
    return p;
}

/* --- conversions between the harness's fabric and the student's -------------------------- */

static void to_student(const cl_fabric *f, lab14_fabric *s)
{
    memset(s, 0, sizeof *s);
    s->nhosts = f->nhosts;
    s->nnodes = f->nnodes;
    for (int a = 0; a < f->nnodes; a++) {
        s->nports[a] = f->nports[a];
        s->level[a] = f->level[a];
        for (int p = 0; p < LAB14_MAX_PORTS; p++) {
            s->link[a][p] = (lab14_end){f->link[a][p].node, f->link[a][p].port};
            if (f->gbps[a][p] > s->gbps)
                s->gbps = f->gbps[a][p];
        }
    }
    for (int a = f->nnodes; a < LAB14_MAX_NODES; a++)
        for (int p = 0; p < LAB14_MAX_PORTS; p++)
            s->link[a][p] = (lab14_end){-1, -1};
}

/* The student's fabric, checked: CL_ERR_INVALID with a reason. */
static cl_result from_student(const lab14_fabric *s, cl_fabric *f)
{
    memset(f, 0, sizeof *f);
    if (s->nhosts < 1 || s->nhosts > LAB14_MAX_HOSTS || s->nnodes <= s->nhosts ||
        s->nnodes > LAB14_MAX_NODES || s->nnodes - s->nhosts > LAB14_MAX_SWITCHES) {
        cl_set_error("nhosts %d, nnodes %d: outside the limits", s->nhosts, s->nnodes);
        return CL_ERR_INVALID;
    }
    f->nhosts = s->nhosts;
    f->nnodes = s->nnodes;
    for (int a = 0; a < s->nnodes; a++) {
        f->nports[a] = s->nports[a];
        for (int p = 0; p < CL_FABRIC_MAX_PORTS; p++) {
            f->link[a][p] = (cl_fabric_end){s->link[a][p].node, s->link[a][p].port};
            if (p >= s->nports[a])
                f->link[a][p] = (cl_fabric_end){-1, -1};
            f->gbps[a][p] = s->gbps;
        }
    }
    return cl_fabric_finish(f);
}

static cl_result read_fabric(cl_case *c, cl_fabric **out)
{
    const char *path;
    CL_CHECK(cl_case_str(c, "fabric", &path));
    cl_fabric *f = malloc(sizeof *f);
    if (!f)
        return CL_ERR_NOMEM;
    cl_result rc = cl_fabric_read(path, 100, f);
    if (rc != CL_OK) {
        free(f);
        return rc;
    }
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "hosts", f->nhosts);
    cl_col_int(row, "switches", f->nnodes - f->nhosts);
    *out = f;
    return CL_OK;
}

static void routes_to_student(const cl_fabric_routes *r, lab14_routes *s)
{
    for (int w = 0; w < r->nswitches; w++)
        for (int d = 0; d < r->nhosts; d++)
            s->out[w][d] = r->out[(size_t)w * r->nhosts + d];
}

static void routes_from_student(const lab14_routes *s, cl_fabric_routes *r)
{
    for (int w = 0; w < r->nswitches; w++)
        for (int d = 0; d < r->nhosts; d++)
            r->out[(size_t)w * r->nhosts + d] = s->out[w][d];
}

/* Call the student's function for the case (the row gets its status); *ok says
 * whether it returned CL_OK. Returns CL_OK unless the student's program died,
 * which ends the mode. */
static cl_result call(cl_case *c, const char *entry, void *args, size_t bytes, int *ok)
{
    cl_result rc = cl_case_call(c, entry, args, bytes);
    *ok = rc == CL_OK;
    return rc == CL_ERR_CRASHED || rc == CL_ERR_TIMEOUT ? rc : CL_OK;
}

/* The route check's columns. */
static void report_check(cl_row *row, const cl_fabric_check *k)
{
    cl_col_int(row, "pairs", k->pairs);
    cl_col_int(row, "delivered", k->delivered);
    cl_col_str(row, "bad_route", k->why);
    cl_col_int(row, "max_hops", k->max_hops);
    cl_col_int(row, "dependencies", k->dependencies);
    cl_col_int(row, "acyclic", k->acyclic);
}

/* The fabric and the load on each direction of each cable, for the picture;
 * with job, also the part of it that is the job's own. */
static void report_drawing(cl_row *row, const cl_fabric *f, const double *load, const double *job)
{
    long long *lv = malloc((size_t)f->nnodes * sizeof *lv);
    int ncab = 0;
    for (int a = 0; a < f->nnodes; a++)
        for (int p = 0; p < f->nports[a]; p++)
            ncab += f->link[a][p].node > a;
    long long *ca = malloc(((size_t)ncab + 1) * sizeof *ca),
              *cb = malloc(((size_t)ncab + 1) * sizeof *cb);
    double *up = malloc(((size_t)ncab + 1) * sizeof *up),
           *down = malloc(((size_t)ncab + 1) * sizeof *down);
    double *jup = malloc(((size_t)ncab + 1) * sizeof *jup),
           *jdown = malloc(((size_t)ncab + 1) * sizeof *jdown);
    if (lv && ca && cb && up && down && jup && jdown) {
        int k = 0;
        for (int a = 0; a < f->nnodes; a++) {
            lv[a] = f->level[a];
            for (int p = 0; p < f->nports[a]; p++) {
                cl_fabric_end e = f->link[a][p];
                if (e.node <= a)
                    continue;
                ca[k] = a;
                cb[k] = e.node;
                up[k] = load[CL_FABRIC_CHANNEL(a, p)];
                down[k] = load[CL_FABRIC_CHANNEL(e.node, e.port)];
                jup[k] = job ? job[CL_FABRIC_CHANNEL(a, p)] : 0;
                jdown[k++] = job ? job[CL_FABRIC_CHANNEL(e.node, e.port)] : 0;
            }
        }
        cl_col_ints(row, "level", lv, (size_t)f->nnodes);
        cl_col_ints(row, "cable_a", ca, (size_t)ncab);
        cl_col_ints(row, "cable_b", cb, (size_t)ncab);
        cl_col_nums(row, "load_ab", up, (size_t)ncab, "%.0f");
        cl_col_nums(row, "load_ba", down, (size_t)ncab, "%.0f");
        if (job) {
            cl_col_nums(row, "job_ab", jup, (size_t)ncab, "%.0f");
            cl_col_nums(row, "job_ba", jdown, (size_t)ncab, "%.0f");
        }
    }
    free(jup);
    free(jdown);
    free(lv);
    free(ca);
    free(cb);
    free(up);
    free(down);
}

/* --- build ---------------------------------------------------------------------------------- */

static cl_result build_case(cl_case *c)
{
    const char *kind;
    CL_CHECK(cl_case_str(c, "kind", &kind));
    static const char *keys[3][4] = {
        {"k"}, {"leaves", "hosts", "spines", "uplinks"}, {"sus", "nodes", "rails", "spines"}};
    build_args a = {0};
    a.kind = strcmp(kind, "fattree") == 0     ? BUILD_FATTREE
             : strcmp(kind, "leafspine") == 0 ? BUILD_LEAFSPINE
             : strcmp(kind, "rail") == 0      ? BUILD_RAIL
                                              : -1;
    if (a.kind < 0) {
        cl_set_error("kind=%s: fattree, leafspine or rail", kind);
        return CL_ERR_INVALID;
    }
    for (int i = 0; i < 4 && keys[a.kind][i]; i++) {
        long long v;
        CL_CHECK(cl_case_int(c, keys[a.kind][i], &v));
        a.p[i] = (int)v;
    }
    a.f = shared(sizeof *a.f);
    a.hca = shared(LAB14_MAX_HOSTS * sizeof *a.hca);
    cl_fabric *mine = malloc(sizeof *mine);
    cl_result rc = CL_ERR_NOMEM;
    if (!a.f || !a.hca || !mine)
        goto done;
    memset(a.hca, 0xff, LAB14_MAX_HOSTS * sizeof *a.hca);
    int ok;
    rc = call(c, "build", &a, sizeof a, &ok);
    if (rc != CL_OK || !ok)
        goto done;
    /* what came back: the fabric, checked, and its cables */
    lab14_fabric *s = malloc(sizeof *s);
    int hca[LAB14_MAX_HOSTS];
    if (!s) {
        rc = CL_ERR_NOMEM;
        goto done;
    }
    memcpy(s, a.f, sizeof *s);
    memcpy(hca, a.hca, sizeof hca);
    cl_row *row = cl_case_row(c);
    cl_result valid = from_student(s, mine);
    cl_col_str(row, "valid", valid == CL_OK ? "yes" : cl_last_error());
    if (valid == CL_OK) {
        int nlink = 0, levels_off = 0;
        for (int n = 0; n < s->nnodes; n++) {
            nlink += s->nports[n];
            levels_off += s->level[n] != mine->level[n];
        }
        cl_col_int(row, "hosts", s->nhosts);
        cl_col_int(row, "switches", s->nnodes - s->nhosts);
        cl_col_int(row, "levels_off", levels_off);
        long long *ports = malloc((size_t)s->nnodes * sizeof *ports);
        long long *links = malloc((size_t)nlink * 2 * sizeof *links);
        if (ports && links) {
            int k = 0;
            for (int n = 0; n < s->nnodes; n++) {
                ports[n] = s->nports[n];
                for (int p = 0; p < s->nports[n]; p++) {
                    links[k++] = s->link[n][p].node;
                    links[k++] = s->link[n][p].port;
                }
            }
            cl_col_ints(row, "nports", ports, (size_t)s->nnodes);
            cl_col_ints(row, "links", links, (size_t)k);
        }
        free(ports);
        free(links);
        if (a.kind == BUILD_RAIL) {
            int n = a.p[0] * a.p[1] * a.p[2];
            long long v[LAB14_MAX_HOSTS];
            for (int i = 0; i < n && i < LAB14_MAX_HOSTS; i++)
                v[i] = hca[i];
            cl_col_ints(row, "hca", v, (size_t)(n < LAB14_MAX_HOSTS ? n : LAB14_MAX_HOSTS));
        }
    }
    free(s);
done:
    cl_host_free(a.f);
    cl_host_free(a.hca);
    free(mine);
    return rc;
}

/* --- route ----------------------------------------------------------------------------------- */

static cl_result route_case(cl_case *c)
{
    const char *algo;
    long long root = -1;
    CL_CHECK(cl_case_str(c, "algo", &algo));
    route_args a = {0};
    a.algo = strcmp(algo, "dmodk") == 0    ? ROUTE_DMODK
             : strcmp(algo, "updown") == 0 ? ROUTE_UPDOWN
                                           : -1;
    if (a.algo < 0) {
        cl_set_error("algo=%s: dmodk or updown", algo);
        return CL_ERR_INVALID;
    }
    if (a.algo == ROUTE_UPDOWN)
        CL_CHECK(cl_case_int(c, "root", &root));
    cl_fabric *f;
    CL_CHECK(read_fabric(c, &f));
    cl_fabric_routes mine = {0};
    lab14_fabric *sf = shared(sizeof *sf);
    lab14_routes *sr = shared(sizeof *sr);
    cl_result rc = CL_ERR_NOMEM;
    if (!sf || !sr)
        goto done;
    if (root >= 0 && (root < f->nhosts || root >= f->nnodes)) {
        cl_set_error("root=%lld is not a switch (%d..%d)", root, f->nhosts, f->nnodes - 1);
        rc = CL_ERR_INVALID;
        goto done;
    }
    a.root = (int)root;
    to_student(f, sf);
    memset(sr->out, 0xff, sizeof sr->out);
    a.f = sf;
    a.r = sr;
    int ok;
    rc = call(c, "route", &a, sizeof a, &ok);
    if (rc != CL_OK || !ok)
        goto done;
    CL_TRY(cl_fabric_routes_init(f, &mine));
    routes_from_student(sr, &mine);
    cl_fabric_check k;
    CL_TRY(cl_fabric_check_routes(f, &mine, &k));
    cl_row *row = cl_case_row(c);
    report_check(row, &k);
    size_t n = (size_t)mine.nswitches * mine.nhosts;
    long long *lft = malloc(n * sizeof *lft);
    if (lft) {
        for (size_t i = 0; i < n; i++)
            lft[i] = mine.out[i];
        cl_col_ints(row, "lft", lft, n);
    }
    free(lft);
done:
    cl_fabric_routes_free(&mine);
    cl_host_free(sf);
    cl_host_free(sr);
    free(f);
    return rc;
}

/* --- deadlock -------------------------------------------------------------------------------- */

/* Whether the student's cycle is one: cabled channels, each depending on the next. */
static int cycle_valid(const cl_fabric *f, const int *cyc, int len, char *why, size_t n)
{
    if (len < 2 || len > LAB14_MAX_CYCLE) {
        snprintf(why, n, "a cycle of %d channels", len);
        return 0;
    }
    for (int i = 0; i < len; i++) {
        int ch = cyc[i], node = ch / LAB14_MAX_PORTS, port = ch % LAB14_MAX_PORTS;
        if (ch < 0 || node >= f->nnodes || port >= f->nports[node] ||
            f->link[node][port].node < 0) {
            snprintf(why, n, "cycle[%d] = %d is not a cabled channel", i, ch);
            return 0;
        }
        int next = cyc[(i + 1) % len];
        if (!cl_fabric_depends(ch, next)) {
            snprintf(why, n, "no route uses channel %d right after %d (cycle[%d], cycle[%d])", next,
                     ch, (i + 1) % len, i);
            return 0;
        }
    }
    snprintf(why, n, "yes");
    return 1;
}

static cl_result deadlock_case(cl_case *c)
{
    const char *path;
    CL_CHECK(cl_case_str(c, "routes", &path));
    cl_fabric *f;
    CL_CHECK(read_fabric(c, &f));
    cl_fabric_routes r = {0};
    deadlock_args a = {0};
    lab14_fabric *sf = shared(sizeof *sf);
    lab14_routes *sr = shared(sizeof *sr);
    cl_result rc = CL_ERR_NOMEM;
    if (!sf || !sr)
        goto done;
    CL_TRY(cl_fabric_read_routes(path, f, &r));
    to_student(f, sf);
    routes_to_student(&r, sr);
    a.f = sf;
    a.r = sr;
    a.acyclic = -1;
    int ok;
    rc = call(c, "deadlock", &a, sizeof a, &ok);
    if (rc != CL_OK)
        goto done;
    cl_fabric_check k;
    cl_result kc = cl_fabric_check_routes(f, &r, &k);
    if (kc != CL_OK) {
        rc = kc;
        goto done;
    }
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "harness_delivered_all", k.delivered == k.pairs);
    cl_col_int(row, "harness_acyclic", k.acyclic);
    if (!ok)
        goto done;
    cl_col_int(row, "acyclic", a.acyclic);
    cl_col_int(row, "cycle_len", a.len);
    char why[160] = "-";
    if (a.acyclic == 0)
        cycle_valid(f, a.cycle, a.len, why, sizeof why);
    cl_col_str(row, "cycle_valid", why);
done:
    cl_fabric_routes_free(&r);
    cl_host_free(sf);
    cl_host_free(sr);
    free(f);
    return rc;
}

/* --- loads ------------------------------------------------------------------------------------ */

static cl_result hosts_of(cl_case *c, const cl_fabric *f, int *hosts, int *n)
{
    const char *spec = "all";
    cl_case_str(c, "hosts", &spec);
    cl_clear_error();
    int lo = 0, hi = f->nhosts - 1;
    if (strcmp(spec, "all") != 0 &&
        (sscanf(spec, "%d-%d", &lo, &hi) != 2 || lo < 0 || hi >= f->nhosts || lo >= hi)) {
        cl_set_error("hosts=%s: all, or A-B with 0 <= A < B < %d", spec, f->nhosts);
        return CL_ERR_INVALID;
    }
    *n = 0;
    for (int h = lo; h <= hi; h++)
        hosts[(*n)++] = h;
    return CL_OK;
}

/* The pattern's flows, as the handout defines them. */
static int pattern_flows(int pattern, int shift, const int *h, int n, int *src, int *dst)
{
    int k = 0;
    if (pattern == LAB14_ALLTOALL) {
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                if (i != j && k < LAB14_MAX_FLOWS) {
                    src[k] = h[i];
                    dst[k++] = h[j];
                }
        return k;
    }
    int s = pattern == LAB14_RING ? 1 : ((shift % n) + n) % n;
    for (int i = 0; s && i < n; i++) {
        src[k] = h[i];
        dst[k++] = h[(i + s) % n];
    }
    return k;
}

static cl_result loads_case(cl_case *c)
{
    const char *path, *pat;
    long long shift = 0;
    double bytes = 1;
    CL_CHECK(cl_case_str(c, "routes", &path));
    CL_CHECK(cl_case_str(c, "pattern", &pat));
    int pattern = strcmp(pat, "ring") == 0       ? LAB14_RING
                  : strcmp(pat, "shift") == 0    ? LAB14_SHIFT
                  : strcmp(pat, "alltoall") == 0 ? LAB14_ALLTOALL
                                                 : -1;
    if (pattern < 0) {
        cl_set_error("pattern=%s: ring, shift or alltoall", pat);
        return CL_ERR_INVALID;
    }
    if (pattern == LAB14_SHIFT)
        CL_CHECK(cl_case_int(c, "shift", &shift));
    if (cl_case_num(c, "bytes", &bytes) != CL_OK)
        bytes = 1;
    cl_clear_error();
    cl_fabric *f;
    CL_CHECK(read_fabric(c, &f));
    cl_fabric_routes r = {0};
    loads_args a = {0};
    int *hosts = shared(LAB14_MAX_HOSTS * sizeof *hosts);
    int *src = malloc(LAB14_MAX_FLOWS * sizeof *src), *dst = malloc(LAB14_MAX_FLOWS * sizeof *dst);
    double *w = malloc(LAB14_MAX_FLOWS * sizeof *w);
    double *load = calloc(CL_FABRIC_CHANNELS, sizeof *load);
    lab14_fabric *sf = shared(sizeof *sf);
    lab14_routes *sr = shared(sizeof *sr);
    a.flows = shared(LAB14_MAX_FLOWS * sizeof *a.flows);
    a.load = shared(LAB14_CHANNELS * sizeof *a.load);
    cl_result rc = CL_ERR_NOMEM;
    if (!hosts || !src || !dst || !w || !load || !sf || !sr || !a.flows || !a.load)
        goto done;
    int n;
    CL_TRY(hosts_of(c, f, hosts, &n));
    CL_TRY(cl_fabric_read_routes(path, f, &r));
    to_student(f, sf);
    routes_to_student(&r, sr);
    a.f = sf;
    a.r = sr;
    a.pattern = pattern;
    a.shift = (int)shift;
    a.hosts = hosts;
    a.n = n;
    a.bytes = bytes;
    int nf = pattern_flows(pattern, (int)shift, hosts, n, src, dst);
    for (int i = 0; i < nf; i++)
        w[i] = bytes;
    rc = cl_fabric_loads(f, &r, src, dst, w, nf, load);
    if (rc != CL_OK)
        goto done;
    int ok;
    rc = call(c, "loads", &a, sizeof a, &ok);
    if (rc != CL_OK || !ok)
        goto done;
    /* the flows and loads that came back, against the harness's */
    cl_row *row = cl_case_row(c);
    int flows_off = a.nflows != nf;
    for (int i = 0; !flows_off && i < nf; i++)
        flows_off =
            a.flows[i].src != src[i] || a.flows[i].dst != dst[i] || a.flows[i].bytes != bytes;
    long off = 0;
    double max = 0;
    int hot = -1;
    for (int ch = 0; ch < CL_FABRIC_CHANNELS; ch++) {
        double want = load[ch], got = a.load[ch];
        if (!(fabs(got - want) <= 1e-9 * (want > 1 ? want : 1)))
            off++;
        if (want > max) {
            max = want;
            hot = ch;
        }
    }
    cl_col_int(row, "flows", nf);
    cl_col_int(row, "flows_off", flows_off);
    cl_col_int(row, "loads_off", off);
    cl_col_num(row, "max_load", max, "%.6g");
    cl_col_int(row, "hot_node", hot / CL_FABRIC_MAX_PORTS);
    cl_col_int(row, "hot_port", hot % CL_FABRIC_MAX_PORTS);
    report_drawing(row, f, load, NULL);
done:
    cl_fabric_routes_free(&r);
    cl_host_free(hosts);
    cl_host_free(sf);
    cl_host_free(sr);
    cl_host_free(a.flows);
    cl_host_free(a.load);
    free(src);
    free(dst);
    free(w);
    free(load);
    free(f);
    return rc;
}

/* --- plan ------------------------------------------------------------------------------------- */

/* A job file: "servers J", "rails R", "bytes S", "hca H0 H1 ...", "busy S0 S1 ...",
 * and "bg SRC DST" lines. */
static cl_result read_job(const char *path, const cl_fabric *f, lab14_job *j)
{
    FILE *in = fopen(path, "r");
    if (!in) {
        cl_set_error("cannot read %s", path);
        return CL_ERR_IO;
    }
    memset(j, 0, sizeof *j);
    char key[16];
    int nhca = 0, bad = 0;
    while (!bad && fscanf(in, " %15s", key) == 1) {
        int v, w;
        if (strcmp(key, "servers") == 0)
            bad = fscanf(in, "%d", &j->servers) != 1;
        else if (strcmp(key, "rails") == 0)
            bad = fscanf(in, "%d", &j->rails) != 1;
        else if (strcmp(key, "bytes") == 0)
            bad = fscanf(in, "%lf", &j->bytes) != 1;
        else if (strcmp(key, "hca") == 0)
            while (nhca < LAB14_MAX_HOSTS && fscanf(in, "%d", &v) == 1)
                j->hca[nhca++] = v;
        else if (strcmp(key, "busy") == 0)
            while (!bad && fscanf(in, "%d", &v) == 1) {
                bad = v < 0 || v >= LAB14_MAX_HOSTS;
                if (!bad)
                    j->busy[v] = 1;
            }
        else if (strcmp(key, "bg") == 0 && j->nbg < 4096 && fscanf(in, "%d %d", &v, &w) == 2)
            j->bg[j->nbg++] = (lab14_flow){v, w, 0};
        else
            bad = 1;
        if (!bad && !feof(in))
            clearerr(in);
    }
    fclose(in);
    int R = j->rails;
    j->nservers = R > 0 ? nhca / R : 0;
    for (int i = 0; !bad && i < nhca; i++)
        bad = j->hca[i] < 0 || j->hca[i] >= f->nhosts;
    for (int i = 0; !bad && i < j->nbg; i++)
        bad = j->bg[i].src < 0 || j->bg[i].src >= f->nhosts || j->bg[i].dst < 0 ||
              j->bg[i].dst >= f->nhosts || j->bg[i].src == j->bg[i].dst;
    if (bad || R < 1 || nhca % R || j->servers < 2 || j->servers > j->nservers || !(j->bytes > 0)) {
        cl_set_error("%s: a malformed job (servers, rails, bytes, hca, busy, bg)", path);
        return CL_ERR_PARSE;
    }
    return CL_OK;
}

/* The fabric as the simulator's graph, and the link of every channel. */
typedef struct timing {
    cl_sim_graph g;
    int *link_of;
} timing;

typedef struct plan_result {
    double time_s, ideal_s;
    double max_flows; /* flows on the busiest channel that carries the job */
} plan_result;

/* Time the job's AllReduce for order and routes r: 2(p-1) ring steps over
 * p = servers x rails GPUs; in a step every inter-server edge of every rail's
 * ring moves S / (rails x p) bytes while the other jobs' flows run. */
static cl_result time_plan(const cl_fabric *f, const cl_fabric_routes *r, const lab14_job *j,
                           const int *order, timing *t, double *load, double *job_load,
                           plan_result *out)
{
    int J = j->servers, R = j->rails, nj = J * R, n = nj + j->nbg;
    double p = (double)J * R, chunk = j->bytes / (R * p);
    int *paths = malloc((size_t)n * (CL_FABRIC_MAX_NODES + 1) * sizeof *paths);
    int *ch = malloc((CL_FABRIC_MAX_NODES + 1) * sizeof *ch);
    cl_sim_path_flow *fl = malloc((size_t)n * sizeof *fl);
    double *fin = malloc((size_t)n * sizeof *fin);
    double *flows_on = calloc(CL_FABRIC_CHANNELS, sizeof *flows_on);
    unsigned char *job_on = calloc(CL_FABRIC_CHANNELS, 1);
    cl_result rc = CL_ERR_NOMEM;
    if (!paths || !ch || !fl || !fin || !flows_on || !job_on)
        goto done;
    out->ideal_s = 0;
    for (int i = 0; i < n; i++) {
        int src, dst, len;
        if (i < nj) {
            int k = i / R, rail = i % R;
            src = j->hca[order[k] * R + rail];
            dst = j->hca[order[(k + 1) % J] * R + rail];
        } else {
            src = j->bg[i - nj].src;
            dst = j->bg[i - nj].dst;
        }
        rc = cl_fabric_walk(f, r, src, dst, ch, CL_FABRIC_MAX_NODES + 1, &len);
        if (rc != CL_OK)
            goto done;
        int *path = paths + (size_t)i * (CL_FABRIC_MAX_NODES + 1);
        double slowest = INFINITY;
        for (int k = 0; k < len; k++) {
            path[k] = t->link_of[ch[k]];
            flows_on[ch[k]] += 1;
            load[ch[k]] += chunk; /* the other jobs' flows too: contention shows */
            if (i < nj) {
                job_on[ch[k]] = 1;
                job_load[ch[k]] += chunk;
            }
            if (t->g.l[path[k]].bw < slowest)
                slowest = t->g.l[path[k]].bw;
        }
        /* the other jobs' flows outlast the step: they share it from start to end */
        fl[i] = (cl_sim_path_flow){path, len, i < nj ? chunk : 1e3 * chunk, (len - 1) * HOP_S};
        if (i < nj && fl[i].latency_s + chunk / slowest > out->ideal_s)
            out->ideal_s = fl[i].latency_s + chunk / slowest;
    }
    CL_TRY(cl_sim_paths_run(&t->g, fl, n, fin));
    double step = 0;
    for (int i = 0; i < nj; i++)
        step = fin[i] > step ? fin[i] : step;
    out->time_s = 2 * (p - 1) * step;
    out->ideal_s *= 2 * (p - 1);
    out->max_flows = 0;
    for (int c = 0; c < CL_FABRIC_CHANNELS; c++)
        if (job_on[c] && flows_on[c] > out->max_flows)
            out->max_flows = flows_on[c];
done:
    free(paths);
    free(ch);
    free(fl);
    free(fin);
    free(flows_on);
    free(job_on);
    return rc;
}

/* Why order is not a placement of the job, or NULL. */
static const char *order_problem(const lab14_job *j, const int *order, char *why, size_t n)
{
    unsigned char used[LAB14_MAX_HOSTS] = {0};
    for (int i = 0; i < j->servers; i++) {
        int s = order[i];
        if (s < 0 || s >= j->nservers)
            snprintf(why, n, "order[%d] = %d is not a server (0..%d)", i, s, j->nservers - 1);
        else if (j->busy[s])
            snprintf(why, n, "order[%d] = %d is a busy server", i, s);
        else if (used[s]++)
            snprintf(why, n, "server %d appears twice in order", s);
        else
            continue;
        return why;
    }
    return NULL;
}

static cl_result plan_case(cl_case *c)
{
    const char *path;
    CL_CHECK(cl_case_str(c, "job", &path));
    cl_fabric *f;
    CL_CHECK(read_fabric(c, &f));
    cl_fabric_routes r = {0};
    timing t = {0};
    lab14_job *job = malloc(sizeof *job);
    double *load = calloc(CL_FABRIC_CHANNELS, sizeof *load);
    double *mine_load = calloc(CL_FABRIC_CHANNELS, sizeof *mine_load);
    double *scratch = calloc(2 * (size_t)CL_FABRIC_CHANNELS, sizeof *scratch);
    plan_args a = {0};
    lab14_fabric *sf = shared(sizeof *sf);
    lab14_job *sj = shared(sizeof *sj);
    a.order = shared(LAB14_MAX_HOSTS * sizeof *a.order);
    a.r = shared(sizeof *a.r);
    int order[LAB14_MAX_HOSTS];
    cl_result rc = CL_ERR_NOMEM;
    if (!job || !load || !mine_load || !scratch || !sf || !sj || !a.order || !a.r)
        goto done;
    CL_TRY(read_job(path, f, job));
    to_student(f, sf);
    memcpy(sj, job, sizeof *sj);
    memset(a.order, 0xff, LAB14_MAX_HOSTS * sizeof *a.order);
    memset(a.r->out, 0xff, sizeof a.r->out);
    a.f = sf;
    a.job = sj;
    int ok;
    rc = call(c, "plan", &a, sizeof a, &ok);
    if (rc != CL_OK || !ok)
        goto done;
    memcpy(order, a.order, sizeof order);
    CL_TRY(cl_fabric_routes_init(f, &r));
    routes_from_student(a.r, &r);
    cl_row *row = cl_case_row(c);
    char why[160];
    const char *bad = order_problem(job, order, why, sizeof why);
    cl_col_str(row, "placement", bad ? bad : "valid");
    cl_fabric_check k;
    CL_TRY(cl_fabric_check_routes(f, &r, &k));
    report_check(row, &k);
    long long ord[LAB14_MAX_HOSTS];
    for (int i = 0; i < job->servers; i++)
        ord[i] = order[i];
    cl_col_ints(row, "order", ord, (size_t)job->servers);
    if (bad || k.delivered != k.pairs || !k.acyclic)
        goto done;
    t.link_of = malloc(CL_FABRIC_CHANNELS * sizeof *t.link_of);
    if (!t.link_of) {
        rc = CL_ERR_NOMEM;
        goto done;
    }
    CL_TRY(cl_fabric_sim_graph(f, &t.g, t.link_of));
    plan_result mine, naive;
    CL_TRY(time_plan(f, &r, job, order, &t, load, mine_load, &mine));
    /* the plan of a scheduler that knows no topology: the first free servers, in order */
    int first[LAB14_MAX_HOSTS], m = 0;
    for (int s = 0; s < job->nservers && m < job->servers; s++)
        if (!job->busy[s])
            first[m++] = s;
    CL_TRY(time_plan(f, &r, job, first, &t, scratch, scratch + CL_FABRIC_CHANNELS, &naive));
    cl_col_num(row, "time_s", mine.time_s, "%.6g");
    cl_col_num(row, "ideal_s", mine.ideal_s, "%.6g");
    cl_col_num(row, "naive_s", naive.time_s, "%.6g");
    cl_col_num(row, "max_flows", mine.max_flows, "%.0f");
    cl_col_num(row, "naive_max_flows", naive.max_flows, "%.0f");
    report_drawing(row, f, load, mine_load);
done:
    cl_fabric_routes_free(&r);
    cl_sim_graph_free(&t.g);
    free(t.link_of);
    cl_host_free(sf);
    cl_host_free(sj);
    cl_host_free(a.order);
    cl_host_free(a.r);
    free(job);
    free(load);
    free(mine_load);
    free(scratch);
    free(f);
    return rc;
}

const cl_lab cl_lab_def = {
    .name = "lab14",
    .title = "IB 路由与胖树: fabrics, forwarding tables, deadlock, link loads",
    .arena_bytes = (size_t)96 << 20,
    .modes = (const cl_mode[]){{.name = "build",
                                .help = "your fat tree, leaf-spine or rail fabric (kind=...)",
                                .cases = build_case},
                               {.name = "route",
                                .help = "your forwarding tables of fabric=FILE, checked",
                                .cases = route_case},
                               {.name = "deadlock",
                                .help = "your channel dependency check of routes=FILE",
                                .cases = deadlock_case},
                               {.name = "loads",
                                .help = "your link loads of a pattern on routes=FILE",
                                .cases = loads_case},
                               {.name = "plan",
                                .help = "your placement and routes for job=FILE, timed",
                                .cases = plan_case},
                               {0}},
};

#endif
