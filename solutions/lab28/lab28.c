/* lab28.c: a diagnoser of NCCL jobs: read each node's NCCL_DEBUG=INFO log, environment,
 * nvidia-smi topo -m and ibstat, name every fault once and say how to fix it.
 * See README.md. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab28.h"

/* BEGIN SOLUTION */
#define MAX_NODES 8
#define MAX_GPUS  16
#define MAX_RANKS (MAX_NODES * MAX_GPUS)

/* What one node's tools said. */
typedef struct node_view {
    char name[32];
    const char *log, *env, *topo, *ibstat;
    char link[MAX_GPUS][MAX_GPUS][8]; /* topo -m between GPUs: "NV12", "PIX", "SYS" */
    char cpus[MAX_GPUS][256];         /* bit c set: CPU c is local to GPU g (topo -m) */
    int ngpus;
    int ports, active, best_rate; /* ibstat */
    int bad_port;                 /* a port down, or slower than the best of the job */
    int port_rate[16], port_up[16];
} node_view;

typedef struct job {
    node_view node[MAX_NODES];
    int nnodes;
    int rank_node[MAX_RANKS], rank_gpu[MAX_RANKS]; /* from "Init COMPLETE" lines */
    lab28_finding *out;
    int max, n;
} job;

/* Copy the next line of *p (without its newline) into line; advance *p. 0 at the end. */
static int next_line(const char **p, char *line, size_t n)
{
    if (!*p || !**p)
        return 0;
    const char *eol = strchr(*p, '\n');
    size_t len = eol ? (size_t)(eol - *p) : strlen(*p);
    snprintf(line, n, "%.*s", (int)(len < n ? len : n - 1), *p);
    *p += len + (eol ? 1 : 0);
    return 1;
}

static void add(job *j, const char *code, const char *node, const char *fix)
{
    for (int i = 0; i < j->n; i++)
        if (strcmp(j->out[i].code, code) == 0)
            return; /* one finding per fault */
    if (j->n == j->max)
        return;
    lab28_finding *f = &j->out[j->n++];
    snprintf(f->code, sizeof f->code, "%s", code);
    snprintf(f->node, sizeof f->node, "%s", node);
    snprintf(f->fix, sizeof f->fix, "%s", fix);
}

/* The value of NAME in a node's environment, or NULL. */
static const char *env_value(const node_view *v, const char *name, char *buf, size_t n)
{
    const char *p = v->env;
    char line[512];
    size_t k = strlen(name);
    while (next_line(&p, line, sizeof line))
        if (strncmp(line, name, k) == 0 && line[k] == '=') {
            snprintf(buf, n, "%s", line + k + 1);
            return buf;
        }
    return NULL;
}

/* "0-31,64-95" into a bit set of 2048 CPUs. */
static void cpu_list(const char *s, char *bits)
{
    memset(bits, 0, 256);
    while (*s) {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s)
            break;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        for (long c = a; c <= b && c < 2048; c++)
            if (c >= 0)
                bits[c / 8] |= (char)(1 << (c % 8));
        s = *end == ',' ? end + 1 : end;
        if (*end != ',')
            break;
    }
}

/* NCCL's mask "ffffffff,00000000,ffffffff" (most significant byte first) into bits. */
static void cpu_mask(const char *s, char *bits)
{
    memset(bits, 0, 256);
    char hex[600];
    size_t k = 0;
    for (; *s && !isspace((unsigned char)*s) && k < sizeof hex - 1; s++)
        if (*s != ',')
            hex[k++] = *s;
    hex[k] = '\0';
    for (size_t i = 0; i + 1 < k + 1 && i < k; i += 2) {
        size_t byte = (k - i) / 2 - 1; /* the byte this pair of digits is */
        char two[3] = {hex[i], i + 1 < k ? hex[i + 1] : '0', 0};
        if (byte < 256)
            bits[byte] = (char)strtol(two, NULL, 16);
    }
}

static void parse_topo(node_view *v)
{
    const char *p = v->topo;
    char line[1024];
    while (next_line(&p, line, sizeof line)) {
        int g;
        if (sscanf(line, "GPU%d", &g) != 1 || g < 0 || g >= MAX_GPUS || line[3 + (g > 9)] == '\0')
            continue;
        char *tok[64];
        int k = 0;
        for (char *save, *t = strtok_r(line, " \t", &save); t && k < 64;
             t = strtok_r(NULL, " \t", &save))
            tok[k++] = t;
        /* GPUg, then one cell per GPU and NIC column, then CPU affinity and NUMA node */
        for (int h = 0; h < MAX_GPUS && 1 + h < k; h++)
            snprintf(v->link[g][h], sizeof v->link[g][h], "%s", tok[1 + h]);
        if (k >= 3)
            cpu_list(tok[k - 2], v->cpus[g]);
        if (g + 1 > v->ngpus)
            v->ngpus = g + 1;
    }
}

static void parse_ibstat(node_view *v)
{
    const char *p = v->ibstat;
    char line[512];
    int port = -1;
    while (next_line(&p, line, sizeof line)) {
        char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        int num;
        char colon;
        if (sscanf(s, "Port %d%c", &num, &colon) == 2 && colon == ':' && v->ports < 16) {
            port = v->ports++;
            v->port_up[port] = 0;
            v->port_rate[port] = 0;
        } else if (port >= 0 && strncmp(s, "State:", 6) == 0) {
            v->port_up[port] = strstr(s, "Active") != NULL;
            v->active += v->port_up[port];
        } else if (port >= 0 && strncmp(s, "Rate:", 5) == 0) {
            v->port_rate[port] = atoi(s + 5);
        }
    }
    for (int i = 0; i < v->ports; i++)
        if (v->port_rate[i] > v->best_rate)
            v->best_rate = v->port_rate[i];
}

/* The message of an INFO or WARN line ("host:pid:tid [dev] NCCL INFO <message>"). */
static const char *message(const char *line, int *warn)
{
    const char *m = strstr(line, " NCCL INFO ");
    *warn = 0;
    if (m)
        return m + 11;
    m = strstr(line, " NCCL WARN ");
    if (m) {
        *warn = 1;
        return m + 11;
    }
    return NULL;
}

static int p2p_capable(const char *l)
{
    return strncmp(l, "NV", 2) == 0 || strcmp(l, "PIX") == 0 || strcmp(l, "PXB") == 0;
}

/* Pass 1 over a node's log: who is which rank (the "Init COMPLETE" lines). */
static void ranks_of(job *j, int ni)
{
    const char *p = j->node[ni].log;
    char line[2048];
    int warn;
    while (next_line(&p, line, sizeof line)) {
        const char *m = message(line, &warn);
        const char *r = m ? strstr(m, " rank ") : NULL;
        int rank, g;
        if (r && strstr(m, "Init COMPLETE") && sscanf(r, " rank %d", &rank) == 1) {
            const char *d = strstr(m, "cudaDev ");
            if (d && sscanf(d, "cudaDev %d", &g) == 1 && rank >= 0 && rank < MAX_RANKS) {
                j->rank_node[rank] = ni;
                j->rank_gpu[rank] = g;
            }
        }
    }
}

static void check_log(job *j, int ni, char versions[][64], int *nversions)
{
    node_view *v = &j->node[ni];
    const char *p = v->log;
    char line[2048];
    int warn;
    while (next_line(&p, line, sizeof line)) {
        const char *m = message(line, &warn);
        if (!m)
            continue;
        int a, b, ga, gb, g, nch;
        char ifname[64], hex[600];
        if (strcmp(m, "Using network Socket") == 0)
            add(j, "socket", "-",
                "unset NCCL_IB_DISABLE (InfiniBand ports are active); check NCCL_NET and the "
                "IB plugin");
        else if (sscanf(m, "Bootstrap : Using %63[^:]:", ifname) == 1) {
            if (strncmp(ifname, "docker", 6) == 0 || strcmp(ifname, "lo") == 0 ||
                strncmp(ifname, "virbr", 5) == 0 || strncmp(ifname, "veth", 4) == 0)
                add(j, "wrong_iface", v->name,
                    "set NCCL_SOCKET_IFNAME to the fabric interface (ib0, ens1f0), not a "
                    "loopback or container bridge");
        } else if (strncmp(m, "NCCL version ", 13) == 0) {
            char ver[64];
            snprintf(ver, sizeof ver, "%s", m + 13);
            int seen = 0;
            for (int i = 0; i < *nversions; i++)
                seen |= strcmp(versions[i], ver) == 0;
            if (!seen && *nversions < 8)
                snprintf(versions[(*nversions)++], 64, "%s", ver);
        } else if (strstr(m, "NCCL_PXN_DISABLE set by environment to 1")) {
            add(j, "pxn_off", "-",
                "unset NCCL_PXN_DISABLE (PXN moves data to the NIC of the "
                "right rail over NVLink)");
        } else if (sscanf(m, "%d coll channels", &nch) == 1 && strstr(m, "coll channels")) {
            if (nch < v->active)
                add(j, "few_channels", v->name,
                    "raise NCCL_MAX_NCHANNELS (or unset it): fewer channels than NICs leaves "
                    "NICs idle");
        } else if (sscanf(m, "Setting affinity for GPU %d to %599s", &g, hex) == 2) {
            char bits[256];
            cpu_mask(hex, bits);
            if (g >= 0 && g < MAX_GPUS && g < v->ngpus) {
                int outside = 0, any = 0;
                for (int k = 0; k < 256; k++) {
                    outside |= bits[k] & ~v->cpus[g][k];
                    any |= v->cpus[g][k];
                }
                if (outside && any)
                    add(j, "cpu_affinity", v->name,
                        "bind each rank to its GPU's NUMA node (srun --cpu-bind=ldoms, numactl "
                        "--cpunodebind) as nvidia-smi topo -m shows");
            }
        } else if (strstr(m, "GPU Direct RDMA Disabled")) {
            add(j, "gdr_off", v->name,
                "enable GPUDirect RDMA: load nvidia-peermem, unset NCCL_NET_GDR_LEVEL=LOC");
        } else if (strstr(m, "[send] via NET/IB/") && !strstr(m, "/GDRDMA")) {
            add(j, "gdr_off", v->name,
                "enable GPUDirect RDMA: load nvidia-peermem, unset NCCL_NET_GDR_LEVEL=LOC");
        } else if (sscanf(m, "Channel %*d : %d[%d] -> %d[%d] via SHM", &a, &ga, &b, &gb) == 4) {
            if (ga >= 0 && ga < MAX_GPUS && gb >= 0 && gb < MAX_GPUS &&
                p2p_capable(v->link[ga][gb]))
                add(j, "p2p_disabled", v->name,
                    "unset NCCL_P2P_DISABLE: these GPUs can use P2P (NVLink or PCIe switch)");
        } else if (warn && strstr(m, "Got completion from peer") &&
                   (strstr(m, "with error 12,") || strstr(m, "with error 13,"))) {
            add(j, "ib_timeout", v->name,
                "transport retries exhausted: check the links (ibstat, mlxlink), raise "
                "NCCL_IB_TIMEOUT (e.g. 22) and NCCL_IB_RETRY_CNT");
        } else if (strncmp(m, "Channel ", 8) == 0 && strstr(m, " : ") && !strstr(m, "->")) {
            /* a ring: count the steps between GPUs of one node across SYS */
            const char *q = strstr(m, " : ") + 3;
            int ring[MAX_RANKS], k = 0;
            for (char *end; k < MAX_RANKS; q = end) {
                long r = strtol(q, &end, 10);
                if (end == q)
                    break;
                ring[k++] = (int)r;
            }
            int sys[MAX_NODES] = {0};
            for (int i = 0; i < k; i++) {
                int x = ring[i], y = ring[(i + 1) % k];
                if (x < 0 || y < 0 || x >= MAX_RANKS || y >= MAX_RANKS ||
                    j->rank_node[x] != j->rank_node[y])
                    continue;
                node_view *w = &j->node[j->rank_node[x]];
                if (strcmp(w->link[j->rank_gpu[x]][j->rank_gpu[y]], "SYS") == 0)
                    sys[j->rank_node[x]]++;
            }
            for (int i = 0; i < j->nnodes; i++)
                if (sys[i] > 2) /* a ring leaves and re-enters a socket once at best */
                    add(j, "ring_sys", j->node[i].name,
                        "unset NCCL_GRAPH_FILE (a ring that zigzags across sockets); let NCCL "
                        "search the topology");
        }
    }
}
/* END SOLUTION */

cl_result lab28_diagnose(const lab28_bundle *b, lab28_finding *out, int max, int *n)
{
    /* BEGIN SOLUTION */
    static job j;
    memset(&j, 0, sizeof j);
    j.out = out;
    j.max = max;
    for (int i = 0; i < b->n; i++) {
        const lab28_section *s = &b->s[i];
        int k = 0;
        while (k < j.nnodes && strcmp(j.node[k].name, s->node) != 0)
            k++;
        if (k == j.nnodes) {
            if (j.nnodes == MAX_NODES) {
                cl_set_error("more than %d nodes", MAX_NODES);
                return CL_ERR_INVALID;
            }
            snprintf(j.node[j.nnodes++].name, sizeof j.node[0].name, "%s", s->node);
        }
        node_view *v = &j.node[k];
        if (strcmp(s->kind, "log") == 0)
            v->log = s->text;
        else if (strcmp(s->kind, "env") == 0)
            v->env = s->text;
        else if (strcmp(s->kind, "topo") == 0)
            v->topo = s->text;
        else if (strcmp(s->kind, "ibstat") == 0)
            v->ibstat = s->text;
    }
    int best = 0;
    for (int i = 0; i < j.nnodes; i++) {
        parse_topo(&j.node[i]);
        parse_ibstat(&j.node[i]);
        if (j.node[i].best_rate > best)
            best = j.node[i].best_rate;
        ranks_of(&j, i);
    }
    char buf[256];
    for (int i = 0; i < j.nnodes; i++) {
        node_view *v = &j.node[i];
        for (int p = 0; p < v->ports; p++)
            if (!v->port_up[p] || v->port_rate[p] < best)
                add(&j, "link_down", v->name,
                    "a port is down or slower than the others: check its cable and transceiver "
                    "(mlxlink -d <dev> -m), then ibstat again");
        const char *e = env_value(v, "NCCL_P2P_DISABLE", buf, sizeof buf);
        if (e && atoi(e) == 1)
            add(&j, "p2p_disabled", v->name, "unset NCCL_P2P_DISABLE");
        e = env_value(v, "NCCL_PXN_DISABLE", buf, sizeof buf);
        if (e && atoi(e) == 1 && j.nnodes > 1)
            add(&j, "pxn_off", "-", "unset NCCL_PXN_DISABLE");
    }
    char versions[8][64];
    int nversions = 0;
    for (int i = 0; i < j.nnodes; i++)
        check_log(&j, i, versions, &nversions);
    if (nversions > 1)
        add(&j, "version_mismatch", "-",
            "install the same NCCL version on every node (ldd, NCCL version lines differ)");
    *n = j.n;
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab28) 1: read each node's sections (README section 1): the topology matrix and
    //                CPU affinity, the ports of ibstat, the environment, the log's lines.
    // TODO(lab28) 2: name every fault of README section 2 once, with its fix.
    (void)b, (void)out, (void)max;
    *n = 0;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
