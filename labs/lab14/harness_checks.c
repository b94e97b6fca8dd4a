/* harness_checks.c: lab 14's build, route, deadlock and loads modes. Each hands the
 * student a fresh copy of its inputs in shared memory and checks what comes back with the
 * harness's own code: a built fabric is validated and its cables reported, routes are walked
 * for every pair, the channel dependency graph is built and searched and a reported cycle
 * checked channel by channel, and a pattern's flows and link loads are recomputed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boundary/arena.h"
#include "lab14_harness.h"

/* --- build ---------------------------------------------------------------------------------- */

cl_result build_case(cl_case *c)
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

cl_result route_case(cl_case *c)
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

cl_result deadlock_case(cl_case *c)
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

cl_result loads_case(cl_case *c)
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
