/* fabric.c: ibnetdiscover topology files, forwarding tables, route checks and link loads. */
#include "fabric.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- reading an ibnetdiscover file ------------------------------------------------------- */

typedef struct rec_port {
    int port;      /* this node's port, 1-based as in the file */
    char peer[24]; /* "S-..." or "H-..." */
    int peer_port; /* 1-based */
    double gbps;   /* 0: not stated */
    int line;
} rec_port;

typedef struct rec {
    int is_switch;
    char id[24];
    char desc[48];
    int nports;
    int first, n; /* its port lines in the ports array */
    int line;
} rec;

typedef struct parse {
    const char *path;
    rec *r;
    int nr, cap_r;
    rec_port *p;
    int np, cap_p;
} parse;

static int grow(void **a, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return 0;
    int c = *cap ? *cap * 2 : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(*a, (size_t)c * elem);
    if (!q)
        return -1;
    *a = q;
    *cap = c;
    return 0;
}

/* The quoted string starting at s (after optional blanks) into out; returns
 * the character after the closing quote, or NULL. */
static const char *quoted(const char *s, char *out, size_t n)
{
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s != '"')
        return NULL;
    const char *e = strchr(s + 1, '"');
    if (!e)
        return NULL;
    size_t k = (size_t)(e - s - 1);
    if (k >= n)
        k = n - 1;
    memcpy(out, s + 1, k);
    out[k] = '\0';
    return e + 1;
}

/* The data rate of "4xEDR"-style text anywhere in s, in Gb/s (0 if none). */
static double link_rate(const char *s)
{
    static const struct {
        const char *name;
        double lane_gbps;
    } speeds[] = {{"FDR10", 10}, {"SDR", 2},  {"DDR", 4},   {"QDR", 8},  {"FDR", 13.64},
                  {"EDR", 25},   {"HDR", 50}, {"NDR", 100}, {"XDR", 200}};
    for (const char *x = strchr(s, 'x'); x; x = strchr(x + 1, 'x')) {
        const char *d = x;
        while (d > s && isdigit((unsigned char)d[-1]))
            d--;
        if (d == x)
            continue;
        int width = atoi(d);
        for (size_t i = 0; i < sizeof speeds / sizeof speeds[0]; i++)
            if (strncmp(x + 1, speeds[i].name, strlen(speeds[i].name)) == 0)
                return width * speeds[i].lane_gbps;
    }
    return 0;
}

static cl_result bad(const parse *ps, int line, const char *what)
{
    cl_set_error("%s:%d: %s", ps->path, line, what);
    return CL_ERR_PARSE;
}

/* "Switch 36 "S-..."   # "desc" ..." or "Ca 2 "H-..."  # "desc"" */
static cl_result header(parse *ps, const char *s, int is_switch, int line)
{
    if (grow((void **)&ps->r, &ps->cap_r, ps->nr + 1, sizeof *ps->r))
        return CL_ERR_NOMEM;
    rec *r = &ps->r[ps->nr];
    memset(r, 0, sizeof *r);
    r->is_switch = is_switch;
    r->line = line;
    r->first = ps->np;
    char *end;
    errno = 0;
    long n = strtol(s, &end, 10);
    if (end == s || errno || n < 1 || n > 255)
        return bad(ps, line, "expected the number of ports after the node type");
    r->nports = (int)n;
    const char *after = quoted(end, r->id, sizeof r->id);
    if (!after || r->id[0] != (is_switch ? 'S' : 'H') || r->id[1] != '-')
        return bad(ps, line, is_switch ? "expected \"S-<guid>\"" : "expected \"H-<guid>\"");
    const char *hash = strchr(after, '#');
    if (hash)
        quoted(hash + 1, r->desc, sizeof r->desc);
    ps->nr++;
    return CL_OK;
}

/* A port line of the current record:
 *   switch: [p]  "peer"[q](portguid)   # "desc" lid L 4xEDR
 *   Ca:     [p](portguid)  "peer"[q]   # lid L lmc 0 "desc" lid L 4xEDR */
static cl_result port_line(parse *ps, const char *s, int line)
{
    if (ps->nr == 0)
        return bad(ps, line, "a port line before any Switch or Ca record");
    rec *r = &ps->r[ps->nr - 1];
    char *end;
    long p = strtol(s + 1, &end, 10);
    if (end == s + 1 || *end != ']' || p < 1 || p > r->nports)
        return bad(ps, line, "expected [port] with a port of the record");
    const char *t = end + 1;
    if (*t == '(') { /* the Ca's own port guid */
        t = strchr(t, ')');
        if (!t)
            return bad(ps, line, "unterminated (port guid)");
        t++;
    }
    if (grow((void **)&ps->p, &ps->cap_p, ps->np + 1, sizeof *ps->p))
        return CL_ERR_NOMEM;
    rec_port *q = &ps->p[ps->np];
    memset(q, 0, sizeof *q);
    q->port = (int)p;
    q->line = line;
    t = quoted(t, q->peer, sizeof q->peer);
    if (!t || (q->peer[0] != 'S' && q->peer[0] != 'H') || q->peer[1] != '-')
        return bad(ps, line, "expected the peer \"S-<guid>\" or \"H-<guid>\"");
    if (*t != '[')
        return bad(ps, line, "expected [port] after the peer");
    long pp = strtol(t + 1, &end, 10);
    if (end == t + 1 || *end != ']' || pp < 1 || pp > 255)
        return bad(ps, line, "expected the peer's [port]");
    q->peer_port = (int)pp;
    const char *hash = strchr(end, '#');
    q->gbps = hash ? link_rate(hash) : 0;
    if (!r->is_switch && q->peer[0] != 'S')
        return bad(ps, line, "a host cabled to a host: only switched fabrics are read");
    ps->np++;
    r->n++;
    return CL_OK;
}

static cl_result scan(parse *ps, FILE *in)
{
    char buf[1024];
    int line = 0;
    while (fgets(buf, sizeof buf, in)) {
        line++;
        char *s = buf;
        while (*s == ' ' || *s == '\t')
            s++;
        s[strcspn(s, "\r\n")] = '\0';
        if (!*s || *s == '#')
            continue;
        if (strncmp(s, "Switch", 6) == 0 && (s[6] == ' ' || s[6] == '\t'))
            CL_CHECK(header(ps, s + 6, 1, line));
        else if (strncmp(s, "Ca", 2) == 0 && (s[2] == ' ' || s[2] == '\t'))
            CL_CHECK(header(ps, s + 2, 0, line));
        else if (strncmp(s, "Rt", 2) == 0 && (s[2] == ' ' || s[2] == '\t'))
            return bad(ps, line, "routers (Rt records) are not supported");
        else if (*s == '[')
            CL_CHECK(port_line(ps, s, line));
        else if (strchr(s, '=') == NULL && strncmp(s, "Non-Chassis", 11) != 0 &&
                 strncmp(s, "Chassis", 7) != 0)
            return bad(ps, line, "not a line of an ibnetdiscover topology file");
    }
    if (ferror(in)) {
        cl_set_error("%s: read error", ps->path);
        return CL_ERR_IO;
    }
    return CL_OK;
}

/* Node of a host (id "H-guid", CA port p): its name in the fabric. */
static void host_name(char *out, const char *id, int port, int multi)
{
    if (multi)
        snprintf(out, 24, "%.18s:%d", id, port);
    else
        snprintf(out, 24, "%.22s", id);
}

static int find(const cl_fabric *f, const char *name, int from, int to)
{
    for (int i = from; i < to; i++)
        if (strcmp(f->id[i], name) == 0)
            return i;
    return -1;
}

static cl_result connect(const parse *ps, cl_fabric *f, int a, int pa, int b, int pb, double gbps,
                         int line)
{
    if (pa >= CL_FABRIC_MAX_PORTS || pb >= CL_FABRIC_MAX_PORTS)
        return bad(ps, line, "a port beyond the 64 this reader handles");
    cl_fabric_end *ea = &f->link[a][pa], *eb = &f->link[b][pb];
    if ((ea->node >= 0 && (ea->node != b || ea->port != pb)) ||
        (eb->node >= 0 && (eb->node != a || eb->port != pa))) {
        char why[160];
        snprintf(why, sizeof why, "%s port %d and %s port %d disagree about their cable", f->id[a],
                 pa + 1, f->id[b], pb + 1);
        return bad(ps, line, why);
    }
    *ea = (cl_fabric_end){b, pb};
    *eb = (cl_fabric_end){a, pa};
    if (gbps > 0) {
        if (f->gbps[a][pa] <= 0 || gbps < f->gbps[a][pa])
            f->gbps[a][pa] = f->gbps[b][pb] = gbps;
    }
    return CL_OK;
}

static cl_result build(const parse *ps, double default_gbps, cl_fabric *f)
{
    memset(f, 0, sizeof *f);
    for (int i = 0; i < CL_FABRIC_MAX_NODES; i++)
        for (int p = 0; p < CL_FABRIC_MAX_PORTS; p++)
            f->link[i][p] = (cl_fabric_end){-1, -1};
    /* Hosts: the Ca records' ports in order, then hosts only switches name. */
    int n = 0;
    for (int i = 0; i < ps->nr; i++) {
        const rec *r = &ps->r[i];
        if (r->is_switch)
            continue;
        for (int k = 0; k < r->n; k++) {
            if (n == CL_FABRIC_MAX_HOSTS)
                return bad(ps, r->line, "more hosts than the 1536 this reader handles");
            host_name(f->id[n], r->id, ps->p[r->first + k].port, r->n > 1);
            snprintf(f->desc[n], sizeof f->desc[n], "%s", r->desc);
            f->nports[n] = 1;
            n++;
        }
    }
    for (int i = 0; i < ps->np; i++) {
        const rec_port *q = &ps->p[i];
        if (q->peer[0] != 'H')
            continue;
        char name[24], multi[24];
        host_name(name, q->peer, q->peer_port, 0);
        host_name(multi, q->peer, q->peer_port, 1);
        if (find(f, name, 0, n) >= 0 || find(f, multi, 0, n) >= 0)
            continue;
        if (n == CL_FABRIC_MAX_HOSTS)
            return bad(ps, q->line, "more hosts than the 1536 this reader handles");
        snprintf(f->id[n], sizeof f->id[n], "%s", name);
        f->nports[n] = 1;
        n++;
    }
    f->nhosts = n;
    for (int i = 0; i < ps->nr; i++) {
        const rec *r = &ps->r[i];
        if (!r->is_switch)
            continue;
        if (n == CL_FABRIC_MAX_NODES || n - f->nhosts == CL_FABRIC_MAX_SWITCHES)
            return bad(ps, r->line, "more switches than this reader handles");
        if (find(f, r->id, f->nhosts, n) >= 0)
            return bad(ps, r->line, "a second record of the same switch");
        snprintf(f->id[n], sizeof f->id[n], "%s", r->id);
        snprintf(f->desc[n], sizeof f->desc[n], "%s", r->desc);
        f->nports[n] = r->nports > CL_FABRIC_MAX_PORTS ? CL_FABRIC_MAX_PORTS : r->nports;
        n++;
    }
    f->nnodes = n;
    if (f->nhosts == 0 || f->nnodes == f->nhosts) {
        cl_set_error("%s: no %s", ps->path, f->nhosts == 0 ? "hosts" : "switches");
        return CL_ERR_PARSE;
    }
    /* Cables, from every port line. */
    for (int i = 0; i < ps->nr; i++) {
        const rec *r = &ps->r[i];
        for (int k = 0; k < r->n; k++) {
            const rec_port *q = &ps->p[r->first + k];
            int a, pa, b, pb;
            char name[24];
            if (r->is_switch) {
                a = find(f, r->id, f->nhosts, n);
                pa = q->port - 1;
            } else {
                host_name(name, r->id, q->port, r->n > 1);
                a = find(f, name, 0, f->nhosts);
                pa = 0;
            }
            if (q->peer[0] == 'S') {
                b = find(f, q->peer, f->nhosts, n);
                pb = q->peer_port - 1;
                if (b < 0) {
                    char why[96];
                    snprintf(why, sizeof why, "switch %s has no record", q->peer);
                    return bad(ps, q->line, why);
                }
            } else {
                host_name(name, q->peer, q->peer_port, 0);
                b = find(f, name, 0, f->nhosts);
                if (b < 0) {
                    host_name(name, q->peer, q->peer_port, 1);
                    b = find(f, name, 0, f->nhosts);
                }
                pb = 0;
            }
            if (a < 0 || b < 0)
                return bad(ps, q->line, "a port line whose ends cannot be found");
            if (a >= f->nhosts && pa >= f->nports[a])
                return bad(ps, q->line, "a port beyond the switch's port count");
            CL_CHECK(connect(ps, f, a, pa, b, pb, q->gbps, q->line));
        }
    }
    for (int a = 0; a < f->nnodes; a++)
        for (int p = 0; p < f->nports[a]; p++)
            if (f->link[a][p].node >= 0 && f->gbps[a][p] <= 0)
                f->gbps[a][p] = default_gbps;
    return cl_fabric_finish(f);
}

cl_result cl_fabric_read(const char *path, double default_gbps, cl_fabric *f)
{
    FILE *in = fopen(path, "r");
    if (!in) {
        cl_set_error("cannot read %s: %s", path, strerror(errno));
        return CL_ERR_IO;
    }
    parse ps = {.path = path};
    cl_result rc = scan(&ps, in);
    fclose(in);
    if (rc == CL_OK)
        rc = build(&ps, default_gbps, f);
    free(ps.r);
    free(ps.p);
    return rc;
}

cl_result cl_fabric_finish(cl_fabric *f)
{
    if (f->nhosts < 1 || f->nhosts > CL_FABRIC_MAX_HOSTS || f->nnodes <= f->nhosts ||
        f->nnodes > CL_FABRIC_MAX_NODES || f->nnodes - f->nhosts > CL_FABRIC_MAX_SWITCHES) {
        cl_set_error("a fabric of %d hosts and %d nodes is outside 1..%d hosts, %d switches",
                     f->nhosts, f->nnodes, CL_FABRIC_MAX_HOSTS, CL_FABRIC_MAX_SWITCHES);
        return CL_ERR_INVALID;
    }
    for (int a = 0; a < f->nnodes; a++) {
        if (f->nports[a] < 1 || f->nports[a] > CL_FABRIC_MAX_PORTS ||
            (a < f->nhosts && f->nports[a] != 1)) {
            cl_set_error("node %d has %d ports", a, f->nports[a]);
            return CL_ERR_INVALID;
        }
        for (int p = 0; p < f->nports[a]; p++) {
            cl_fabric_end e = f->link[a][p];
            if (e.node < 0)
                continue;
            if (e.node >= f->nnodes || e.port < 0 || e.port >= f->nports[e.node] ||
                f->link[e.node][e.port].node != a || f->link[e.node][e.port].port != p) {
                cl_set_error("node %d port %d: its cable is not recorded at the other end", a, p);
                return CL_ERR_INVALID;
            }
        }
    }
    /* Levels: breadth first from every host. */
    int *queue = malloc((size_t)f->nnodes * sizeof *queue);
    if (!queue)
        return CL_ERR_NOMEM;
    int head = 0, tail = 0;
    for (int a = 0; a < f->nnodes; a++) {
        f->level[a] = a < f->nhosts ? 0 : -1;
        if (a < f->nhosts)
            queue[tail++] = a;
    }
    while (head < tail) {
        int a = queue[head++];
        for (int p = 0; p < f->nports[a]; p++) {
            int b = f->link[a][p].node;
            if (b >= 0 && f->level[b] < 0) {
                f->level[b] = f->level[a] + 1;
                queue[tail++] = b;
            }
        }
    }
    free(queue);
    return CL_OK;
}

/* --- routes -------------------------------------------------------------------------------- */

cl_result cl_fabric_routes_init(const cl_fabric *f, cl_fabric_routes *r)
{
    r->nhosts = f->nhosts;
    r->nswitches = f->nnodes - f->nhosts;
    r->out = malloc((size_t)r->nswitches * (size_t)r->nhosts * sizeof *r->out);
    if (!r->out) {
        cl_set_error("no memory for forwarding tables");
        return CL_ERR_NOMEM;
    }
    memset(r->out, 0xff, (size_t)r->nswitches * (size_t)r->nhosts * sizeof *r->out);
    return CL_OK;
}

void cl_fabric_routes_free(cl_fabric_routes *r)
{
    free(r->out);
    r->out = NULL;
}

cl_result cl_fabric_read_routes(const char *path, const cl_fabric *f, cl_fabric_routes *r)
{
    FILE *in = fopen(path, "r");
    if (!in) {
        cl_set_error("cannot read %s: %s", path, strerror(errno));
        return CL_ERR_IO;
    }
    int ns, nh;
    if (fscanf(in, " lft %d %d", &ns, &nh) != 2 || ns != f->nnodes - f->nhosts || nh != f->nhosts) {
        cl_set_error("%s: expected 'lft %d %d' first", path, f->nnodes - f->nhosts, f->nhosts);
        fclose(in);
        return CL_ERR_PARSE;
    }
    cl_result rc = cl_fabric_routes_init(f, r);
    for (long i = 0; rc == CL_OK && i < (long)ns * nh; i++) {
        int v;
        if (fscanf(in, "%d", &v) != 1 || v < -1 || v >= CL_FABRIC_MAX_PORTS) {
            cl_set_error("%s: entry %ld (switch %ld, host %ld) is not a port", path, i, i / nh,
                         i % nh);
            rc = CL_ERR_PARSE;
        } else {
            r->out[i] = (int16_t)v;
        }
    }
    fclose(in);
    return rc;
}

/* The channel node a takes next towards host d; -1 with a reason in why. */
static int next_channel(const cl_fabric *f, const cl_fabric_routes *r, int a, int d, char *why,
                        size_t n)
{
    int port = 0;
    if (a >= f->nhosts) {
        port = r->out[(size_t)(a - f->nhosts) * (size_t)f->nhosts + (size_t)d];
        if (port < 0 || port >= f->nports[a]) {
            snprintf(why, n, "switch %d (%s) has no port for host %d (entry %d)", a, f->id[a], d,
                     port);
            return -1;
        }
    }
    if (f->link[a][port].node < 0) {
        snprintf(why, n, "%s %d (%s) sends host %d's packets out of port %d, which has no cable",
                 a < f->nhosts ? "host" : "switch", a, f->id[a], d, port);
        return -1;
    }
    return CL_FABRIC_CHANNEL(a, port);
}

cl_result cl_fabric_walk(const cl_fabric *f, const cl_fabric_routes *r, int src, int dst, int *path,
                         int max, int *n)
{
    char why[160];
    *n = 0;
    if (src < 0 || src >= f->nhosts || dst < 0 || dst >= f->nhosts || src == dst) {
        cl_set_error("no route from %d to %d: hosts are 0..%d, distinct", src, dst, f->nhosts - 1);
        return CL_ERR_INVALID;
    }
    int a = src;
    for (int hops = 0; hops <= f->nnodes; hops++) {
        int c = next_channel(f, r, a, dst, why, sizeof why);
        if (c < 0) {
            cl_set_error("route %d -> %d: %s", src, dst, why);
            return CL_ERR_INVALID;
        }
        if (*n < max)
            path[*n] = c;
        (*n)++;
        int b = f->link[a][c % CL_FABRIC_MAX_PORTS].node;
        if (b == dst)
            return CL_OK;
        if (b < f->nhosts) {
            cl_set_error("route %d -> %d arrives at host %d", src, dst, b);
            return CL_ERR_INVALID;
        }
        a = b;
    }
    cl_set_error("route %d -> %d loops (more than %d hops)", src, dst, f->nnodes);
    return CL_ERR_INVALID;
}

/* --- the channel dependency graph ---------------------------------------------------------- */

/* A set of (channel, channel) pairs: open addressing on 64-bit keys. */
static struct {
    uint64_t *k;
    size_t cap, n;
} deps;

static uint64_t dep_key(int a, int b) { return ((uint64_t)(uint32_t)a << 32) | (uint32_t)b; }

static size_t dep_slot(uint64_t key, size_t cap)
{
    uint64_t h = key * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 20) & (cap - 1);
}

static int dep_add(int a, int b)
{
    if (2 * (deps.n + 1) > deps.cap) {
        size_t cap = deps.cap ? deps.cap * 2 : 4096;
        uint64_t *k = malloc(cap * sizeof *k);
        if (!k)
            return -1;
        memset(k, 0xff, cap * sizeof *k);
        for (size_t i = 0; i < deps.cap; i++)
            if (deps.k[i] != UINT64_MAX) {
                size_t s = dep_slot(deps.k[i], cap);
                while (k[s] != UINT64_MAX)
                    s = (s + 1) & (cap - 1);
                k[s] = deps.k[i];
            }
        free(deps.k);
        deps.k = k;
        deps.cap = cap;
    }
    uint64_t key = dep_key(a, b);
    size_t s = dep_slot(key, deps.cap);
    while (deps.k[s] != UINT64_MAX) {
        if (deps.k[s] == key)
            return 0;
        s = (s + 1) & (deps.cap - 1);
    }
    deps.k[s] = key;
    deps.n++;
    return 0;
}

int cl_fabric_depends(int a, int b)
{
    if (!deps.cap)
        return 0;
    uint64_t key = dep_key(a, b);
    for (size_t s = dep_slot(key, deps.cap); deps.k[s] != UINT64_MAX; s = (s + 1) & (deps.cap - 1))
        if (deps.k[s] == key)
            return 1;
    return 0;
}

/* A cycle of the dependency graph by depth-first search, or len 0. */
static cl_result find_cycle(cl_fabric_check *out)
{
    int nc = CL_FABRIC_CHANNELS;
    int *off = calloc((size_t)nc + 1, sizeof *off);
    int *adj = malloc((deps.n + 1) * sizeof *adj);
    unsigned char *color = calloc((size_t)nc, 1);
    int *stack = malloc((size_t)nc * sizeof *stack), *it = malloc((size_t)nc * sizeof *it);
    cl_result rc = CL_OK;
    if (!off || !adj || !color || !stack || !it) {
        rc = CL_ERR_NOMEM;
        goto done;
    }
    for (size_t i = 0; i < deps.cap; i++)
        if (deps.k[i] != UINT64_MAX)
            off[(deps.k[i] >> 32) + 1]++;
    for (int c = 0; c < nc; c++)
        off[c + 1] += off[c];
    int *fill = calloc((size_t)nc, sizeof *fill);
    if (!fill) {
        rc = CL_ERR_NOMEM;
        goto done;
    }
    for (size_t i = 0; i < deps.cap; i++)
        if (deps.k[i] != UINT64_MAX) {
            int a = (int)(deps.k[i] >> 32);
            adj[off[a] + fill[a]++] = (int)(uint32_t)deps.k[i];
        }
    free(fill);
    out->acyclic = 1;
    out->cycle_len = 0;
    for (int s = 0; s < nc && out->acyclic; s++) {
        if (color[s] || off[s] == off[s + 1])
            continue;
        int top = 0;
        stack[0] = s;
        it[0] = off[s];
        color[s] = 1;
        while (top >= 0 && out->acyclic) {
            int a = stack[top];
            if (it[top] == off[a + 1]) {
                color[a] = 2;
                top--;
                continue;
            }
            int b = adj[it[top]++];
            if (color[b] == 1) { /* b is on the stack: the cycle is b .. a */
                int k = top;
                while (stack[k] != b)
                    k--;
                out->acyclic = 0;
                for (int j = k; j <= top && out->cycle_len < 64; j++)
                    out->cycle[out->cycle_len++] = stack[j];
            } else if (color[b] == 0) {
                color[b] = 1;
                stack[++top] = b;
                it[top] = off[b];
            }
        }
    }
done:
    free(off);
    free(adj);
    free(color);
    free(stack);
    free(it);
    return rc;
}

cl_result cl_fabric_check_routes(const cl_fabric *f, const cl_fabric_routes *r,
                                 cl_fabric_check *out)
{
    memset(out, 0, sizeof *out);
    out->bad_src = out->bad_dst = -1;
    out->acyclic = 1;
    free(deps.k);
    deps.k = NULL;
    deps.cap = deps.n = 0;
    int nn = f->nnodes;
    /* Per destination: state of every node (0 unknown, 1 delivers, 2 fails, 3 on the
     * walk now) and its hops to the destination. */
    unsigned char *state = malloc((size_t)nn);
    int *hops = malloc((size_t)nn * sizeof *hops), *walk = malloc((size_t)(nn + 1) * sizeof *walk);
    cl_result rc = CL_OK;
    if (!state || !hops || !walk) {
        rc = CL_ERR_NOMEM;
        goto done;
    }
    for (int d = 0; d < f->nhosts; d++) {
        memset(state, 0, (size_t)nn);
        state[d] = 1;
        hops[d] = 0;
        for (int s = 0; s < f->nhosts; s++) {
            if (s == d)
                continue;
            out->pairs++;
            int len = 0, a = s, prev = -1, fate = 0;
            char why[160] = "";
            /* walk until a node whose fate is known, adding each new dependency */
            while (state[a] == 0) {
                int c = next_channel(f, r, a, d, why, sizeof why);
                if (prev >= 0 && c >= 0 && dep_add(prev, c)) {
                    rc = CL_ERR_NOMEM;
                    goto done;
                }
                state[a] = 3;
                walk[len++] = a;
                if (c < 0) {
                    fate = 2;
                    break;
                }
                int b = f->link[a][c % CL_FABRIC_MAX_PORTS].node;
                if (b < f->nhosts && b != d) {
                    snprintf(why, sizeof why, "arrives at host %d", b);
                    fate = 2;
                    break;
                }
                prev = c;
                a = b;
            }
            if (!fate) {
                if (state[a] == 3) {
                    snprintf(why, sizeof why, "loops through switch %d (%s)", a, f->id[a]);
                    fate = 2;
                } else {
                    fate = state[a];
                    /* the channel into a known node depends on that node's next one */
                    if (prev >= 0 && a != d) {
                        int c = next_channel(f, r, a, d, why, sizeof why);
                        if (c >= 0 && dep_add(prev, c)) {
                            rc = CL_ERR_NOMEM;
                            goto done;
                        }
                    }
                }
            }
            int base = fate == 1 ? hops[a] : 0;
            for (int k = len - 1; k >= 0; k--) {
                state[walk[k]] = (unsigned char)fate;
                hops[walk[k]] = base + (len - k);
            }
            if (fate == 1) {
                out->delivered++;
                int sw = hops[s] - 1; /* switches crossed */
                if (sw > out->max_hops)
                    out->max_hops = sw;
            } else if (out->bad_src < 0) {
                out->bad_src = s;
                out->bad_dst = d;
                snprintf(out->why, sizeof out->why, "route %d -> %d: %s", s, d,
                         why[0] ? why : "fails further on");
            }
        }
    }
    out->dependencies = (long)deps.n;
    rc = find_cycle(out);
done:
    free(state);
    free(hops);
    free(walk);
    return rc;
}

cl_result cl_fabric_loads(const cl_fabric *f, const cl_fabric_routes *r, const int *src,
                          const int *dst, const double *bytes, int n, double *load)
{
    int path[CL_FABRIC_MAX_NODES + 1], len;
    for (int i = 0; i < n; i++) {
        cl_result rc = cl_fabric_walk(f, r, src[i], dst[i], path, CL_FABRIC_MAX_NODES + 1, &len);
        if (rc != CL_OK)
            return rc;
        for (int k = 0; k < len; k++)
            load[path[k]] += bytes[i];
    }
    return CL_OK;
}

cl_result cl_fabric_sim_graph(const cl_fabric *f, cl_sim_graph *g, int *link_of)
{
    memset(g, 0, sizeof *g);
    for (int a = 0; a < f->nnodes; a++)
        if (cl_sim_graph_add_vertex(g, a < f->nhosts ? CL_SIM_V_NIC : CL_SIM_V_SWITCH,
                                    f->level[a]) < 0)
            return CL_ERR_NOMEM;
    for (int a = 0; a < CL_FABRIC_MAX_NODES; a++)
        for (int p = 0; p < CL_FABRIC_MAX_PORTS; p++) {
            int ch = CL_FABRIC_CHANNEL(a, p);
            link_of[ch] = -1;
            if (a < f->nnodes && p < f->nports[a] && f->link[a][p].node >= 0) {
                link_of[ch] = cl_sim_graph_add_link(g, a, f->link[a][p].node,
                                                    f->gbps[a][p] * 1e9 / 8, 0, CL_SIM_L_NET);
                if (link_of[ch] < 0)
                    return CL_ERR_NOMEM;
            }
        }
    return cl_sim_graph_finalize(g);
}
