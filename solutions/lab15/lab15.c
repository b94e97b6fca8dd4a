/* lab15.c: a validator of lossless RoCE v2 configuration: parse what the tools print on
 * each host and switch, check it against the site's policy and against itself, and say
 * what to change, with the command that changes it. See README.md. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab15.h"

/* BEGIN SOLUTION */
/* --- small text helpers ------------------------------------------------------------------ */

/* Copy the next line of *p (without its newline) into line; advance *p. 0 at the end. */
static int next_line(const char **p, char *line, size_t n)
{
    if (!**p)
        return 0;
    const char *eol = strchr(*p, '\n');
    size_t len = eol ? (size_t)(eol - *p) : strlen(*p);
    snprintf(line, n, "%.*s", (int)(len < n ? len : n - 1), *p);
    *p += len + (eol ? 1 : 0);
    return 1;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/* "key : value" split at the first ':'; 0 when the line has none. */
static int key_value(char *line, char **key, char **value)
{
    char *colon = strchr(line, ':');
    if (!colon)
        return 0;
    *colon = '\0';
    *key = trim(line);
    *value = trim(colon + 1);
    return 1;
}

/* Up to n integers of a list "1,2,3," or "1   0   1": how many were read. */
static int int_list(const char *s, long *v, int n)
{
    int k = 0;
    while (*s && k < n) {
        while (*s && !isdigit((unsigned char)*s) && *s != '-')
            s++;
        if (!*s)
            break;
        char *end;
        v[k++] = strtol(s, &end, 10);
        s = end;
    }
    return k;
}

/* END SOLUTION */
/* --- 1. mlnx_qos ------------------------------------------------------------------------- */

cl_result lab15_parse_mlnx_qos(const char *text, lab15_qos *q)
{
    /* BEGIN SOLUTION */
    memset(q, 0, sizeof *q);
    for (int i = 0; i < 64; i++)
        q->dscp2prio[i] = -1;
    for (int i = 0; i < 8; i++)
        q->prio2buffer[i] = -1, q->buffer_size[i] = -1;
    char buf[512];
    int got_trust = 0, got_pfc = 0;
    while (next_line(&text, buf, sizeof buf)) {
        char *line = trim(buf), *key, *value;
        long v[64];
        if (strncmp(line, "prio:", 5) == 0) { /* prio:3 dscp:31,30,29,28,27,25,24,26, */
            int prio = atoi(line + 5);
            char *d = strstr(line, "dscp:");
            int k = d ? int_list(d + 5, v, 64) : 0;
            for (int i = 0; i < k; i++)
                if (v[i] >= 0 && v[i] < 64 && prio >= 0 && prio < 8)
                    q->dscp2prio[v[i]] = prio;
        } else if (strncmp(line, "enabled", 7) == 0) {
            long e[8];
            if (int_list(line + 7, e, 8) == 8) {
                for (int i = 0; i < 8; i++)
                    q->pfc[i] = e[i] != 0;
                got_pfc = 1;
            }
        } else if (strncmp(line, "buffer", 6) == 0 && !strchr(line, ':')) {
            long b[8];
            if (int_list(line + 6, b, 8) == 8)
                for (int i = 0; i < 8; i++)
                    q->prio2buffer[i] = (int)b[i];
        } else if (key_value(line, &key, &value)) {
            if (strcmp(key, "Priority trust state") == 0) {
                snprintf(q->trust, sizeof q->trust, "%s", value);
                got_trust = 1;
            } else if (strcmp(key, "Receive buffer size (bytes)") == 0) {
                long b[8];
                if (int_list(value, b, 8) == 8)
                    for (int i = 0; i < 8; i++)
                        q->buffer_size[i] = b[i];
            }
        }
    }
    if (!got_trust || !got_pfc) {
        cl_set_error("not an mlnx_qos output: no %s", got_trust ? "PFC table" : "trust state");
        return CL_ERR_PARSE;
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab15) 1: read the trust state, the dscp2prio lines (a priority's DSCPs may span
    //                several lines), the receive buffer sizes and the PFC table (its
    //                "enabled" and "buffer" rows). What the output does not say stays -1.
    (void)text, (void)q;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* --- 2. show_gids ---------------------------------------------------------------------------- */

cl_result lab15_parse_show_gids(const char *text, lab15_gid *g, int max, int *n)
{
    /* BEGIN SOLUTION */
    char buf[512];
    *n = 0;
    while (next_line(&text, buf, sizeof buf)) {
        char *tok[8];
        int k = 0;
        for (char *save, *t = strtok_r(buf, " \t", &save); t && k < 8;
             t = strtok_r(NULL, " \t", &save))
            tok[k++] = t;
        /* DEV PORT INDEX GID [IPv4] VER [NETDEV]; the header and its rule start "DEV", "---" */
        if (k < 5 || !isdigit((unsigned char)tok[1][0]) || !isdigit((unsigned char)tok[2][0]))
            continue;
        if (*n == max) {
            cl_set_error("more than %d GIDs", max);
            return CL_ERR_INVALID;
        }
        lab15_gid *x = &g[(*n)++];
        memset(x, 0, sizeof *x);
        snprintf(x->dev, sizeof x->dev, "%s", tok[0]);
        x->port = atoi(tok[1]);
        x->index = atoi(tok[2]);
        snprintf(x->gid, sizeof x->gid, "%s", tok[3]);
        int ver = 4;
        if (strchr(tok[4], '.')) { /* an IPv4 column */
            snprintf(x->ipv4, sizeof x->ipv4, "%s", tok[4]);
            ver = 5;
        }
        if (ver >= k || (tok[ver][0] != 'v' && tok[ver][0] != 'V')) {
            cl_set_error("show_gids: no version in the row of %s index %s", tok[0], tok[2]);
            return CL_ERR_PARSE;
        }
        x->version = atoi(tok[ver] + 1);
        if (ver + 1 < k)
            snprintf(x->netdev, sizeof x->netdev, "%s", tok[ver + 1]);
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab15) 2: one lab15_gid per row of the table; the IPv4 and netdev columns may be
    //                empty.
    (void)text, (void)g, (void)max, (void)n;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* --- 3. ibv_devinfo -v ---------------------------------------------------------------------- */

cl_result lab15_parse_devinfo(const char *text, lab15_port *p, int max, int *n)
{
    /* BEGIN SOLUTION */
    char buf[512], dev[32] = "";
    lab15_port *cur = NULL;
    *n = 0;
    while (next_line(&text, buf, sizeof buf)) {
        char *key, *value;
        if (!key_value(buf, &key, &value))
            continue;
        if (strcmp(key, "hca_id") == 0) {
            snprintf(dev, sizeof dev, "%s", value);
            cur = NULL;
        } else if (strcmp(key, "port") == 0) {
            if (*n == max) {
                cl_set_error("more than %d ports", max);
                return CL_ERR_INVALID;
            }
            cur = &p[(*n)++];
            memset(cur, 0, sizeof *cur);
            snprintf(cur->dev, sizeof cur->dev, "%s", dev);
            cur->port = atoi(value);
        } else if (cur && strcmp(key, "state") == 0) {
            cur->active = strncmp(value, "PORT_ACTIVE", 11) == 0;
        } else if (cur && strcmp(key, "active_mtu") == 0) {
            cur->active_mtu = atoi(value);
        } else if (cur && strcmp(key, "link_layer") == 0) {
            cur->ethernet = strcmp(value, "Ethernet") == 0;
        }
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab15) 3: one lab15_port per "port:" of each hca_id: its state, active_mtu (in
    //                bytes) and link_layer.
    (void)text, (void)p, (void)max, (void)n;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* --- 4. the switch's show roce --------------------------------------------------------------- */

cl_result lab15_parse_show_roce(const char *text, lab15_switch *s)
{
    /* BEGIN SOLUTION */
    memset(s, 0, sizeof *s);
    char buf[512];
    int in_table = 0, dashes = 0;
    while (next_line(&text, buf, sizeof buf)) {
        char *line = trim(buf), *key, *value;
        if (strncmp(line, "---", 3) == 0) {
            dashes++;
            continue;
        }
        if (strncmp(line, "RoCE used TCs", 13) == 0) {
            in_table = 1, dashes = 0;
            continue;
        }
        if (in_table && dashes >= 2) {
            int sp, tc, used = 0;
            char app[16];
            if (!*line) {
                in_table = 0;
                continue;
            }
            if (sscanf(line, "%d %d %15s %n", &sp, &tc, app, &used) >= 3 && s->ntcs < 8) {
                s->tcs[s->ntcs].switch_prio = sp;
                s->tcs[s->ntcs].tc = tc;
                snprintf(s->tcs[s->ntcs].app, sizeof s->tcs[0].app, "%s", app);
                snprintf(s->tcs[s->ntcs].ets, sizeof s->tcs[0].ets, "%s", trim(line + used));
                s->ntcs++;
            }
            continue;
        }
        if (!key_value(line, &key, &value))
            continue;
        int q;
        if (strcmp(key, "RoCE mode") == 0)
            snprintf(s->mode, sizeof s->mode, "%s", value);
        else if (strcmp(key, "Port trust mode") == 0)
            snprintf(s->trust, sizeof s->trust, "%s", value);
        else if (strcmp(key, "Mode") == 0)
            snprintf(s->ecn_mode, sizeof s->ecn_mode, "%s", value);
        else if (strcmp(key, "Min") == 0)
            s->ecn_min_kb = atoi(value);
        else if (strcmp(key, "Max") == 0)
            s->ecn_max_kb = atoi(value);
        else if (strcmp(key, "PFC") == 0)
            s->pfc_enabled = strcmp(value, "enabled") == 0;
        else if (sscanf(key, "switch-priority %d", &q) == 1 && q >= 0 && q < 8)
            s->pfc_prio[q] = strcmp(value, "enabled") == 0;
    }
    if (!s->trust[0]) {
        cl_set_error("not a show roce output: no 'Port trust mode'");
        return CL_ERR_PARSE;
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab15) 4: the RoCE mode, the port trust mode, the congestion-control mode and
    //                thresholds, PFC and its switch-priorities, and the rows of "RoCE used
    //                TCs".
    (void)text, (void)s;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* --- 5. the validator ------------------------------------------------------------------------- */

/* BEGIN SOLUTION */
typedef struct policy {
    int roce_dscp, roce_prio, cnp_dscp, cnp_prio, mtu, ecn_min_kb, ecn_max_kb;
    unsigned net, mask; /* fabric_subnet */
} policy;

typedef struct nic {
    char dev[32], netdev[32], state[16], phys[16];
    char ipv4[16];
    int v2_ipv4_index; /* -1: none */
    int fabric;
} nic;

typedef struct out_list {
    lab15_finding *f;
    int n, max;
} out_list;

static unsigned ipv4_of(const char *s)
{
    unsigned a, b, c, d;
    return sscanf(s, "%u.%u.%u.%u", &a, &b, &c, &d) == 4 ? a << 24 | b << 16 | c << 8 | d : 0;
}

static cl_result add(out_list *o, const char *code, const char *node, const char *target,
                     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static cl_result add(out_list *o, const char *code, const char *node, const char *target,
                     const char *fmt, ...)
{
    if (o->n == o->max) {
        cl_set_error("more than %d findings", o->max);
        return CL_ERR_INVALID;
    }
    lab15_finding *f = &o->f[o->n++];
    memset(f, 0, sizeof *f);
    snprintf(f->code, sizeof f->code, "%s", code);
    snprintf(f->node, sizeof f->node, "%s", node);
    snprintf(f->target, sizeof f->target, "%s", target);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->fix, sizeof f->fix, fmt, ap);
    va_end(ap);
    return CL_OK;
}

static cl_result parse_policy(const char *text, policy *p)
{
    char buf[256];
    int seen = 0;
    memset(p, 0, sizeof *p);
    while (next_line(&text, buf, sizeof buf)) {
        char *eq = strchr(buf, '='), key[32];
        if (!eq || sscanf(buf, "%31s", key) != 1)
            continue;
        const char *v = trim(eq + 1);
        int *field = strcmp(key, "roce_dscp") == 0    ? &p->roce_dscp
                     : strcmp(key, "roce_prio") == 0  ? &p->roce_prio
                     : strcmp(key, "cnp_dscp") == 0   ? &p->cnp_dscp
                     : strcmp(key, "cnp_prio") == 0   ? &p->cnp_prio
                     : strcmp(key, "mtu") == 0        ? &p->mtu
                     : strcmp(key, "ecn_min_kb") == 0 ? &p->ecn_min_kb
                     : strcmp(key, "ecn_max_kb") == 0 ? &p->ecn_max_kb
                                                      : NULL;
        if (field) {
            *field = atoi(v);
            seen++;
        } else if (strcmp(key, "fabric_subnet") == 0) {
            const char *slash = strchr(v, '/');
            int bits = slash ? atoi(slash + 1) : 32;
            p->mask = bits <= 0 ? 0 : 0xffffffffu << (32 - (bits > 32 ? 32 : bits));
            p->net = ipv4_of(v) & p->mask;
            seen++;
        }
    }
    if (seen < 8) {
        cl_set_error("the policy lacks some of its 8 settings");
        return CL_ERR_PARSE;
    }
    return CL_OK;
}

static const lab15_section *find(const lab15_dump *d, const char *node, const char *prefix)
{
    for (int i = 0; i < d->n; i++)
        if (strcmp(d->s[i].node, node) == 0 &&
            strncmp(d->s[i].command, prefix, strlen(prefix)) == 0)
            return &d->s[i];
    return NULL;
}

/* The sysfs section of netdev (a grep -H over its files) and one value from it: 1 when
 * the file was listed. */
static int sysfs_value(const lab15_dump *d, const char *node, const char *file, long *v)
{
    for (int i = 0; i < d->n; i++) {
        if (strcmp(d->s[i].node, node) != 0 || strncmp(d->s[i].command, "grep -H", 7) != 0)
            continue;
        const char *t = d->s[i].text;
        char buf[512];
        size_t len = strlen(file);
        while (next_line(&t, buf, sizeof buf))
            if (strncmp(buf, file, len) == 0 && buf[len] == ':') {
                *v = strtol(buf + len + 1, NULL, 10);
                return 1;
            }
    }
    return 0;
}

/* A counter of `rdma statistic show link <dev>/1`; -1 when not listed. */
static long rdma_counter(const lab15_dump *d, const char *node, const char *dev, const char *name)
{
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rdma statistic show link %s/", dev);
    const lab15_section *s = find(d, node, cmd);
    if (!s)
        return -1;
    size_t len = strlen(name);
    for (const char *p = s->text; (p = strstr(p, name)) != NULL; p += len)
        if ((p == s->text || p[-1] == ' ') && p[len] == ' ')
            return strtol(p + len + 1, NULL, 10);
    return -1;
}

static int listed_hca(const char *list, const nic *nics, int n, const policy *pol)
{
    (void)pol;
    /* The expected set: every fabric NIC, and nothing else. */
    if (list[0] == '^')
        return 0;
    if (list[0] == '=')
        list++;
    int want = 0, got = 0;
    for (int i = 0; i < n; i++)
        want += nics[i].fabric;
    char copy[256];
    snprintf(copy, sizeof copy, "%s", list);
    char seen[16][32];
    int nseen = 0;
    for (char *save, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(t, ':');
        if (colon)
            *colon = '\0';
        t = trim(t);
        int dup = 0;
        for (int k = 0; k < nseen; k++)
            dup |= strcmp(seen[k], t) == 0;
        if (dup || !*t)
            continue;
        if (nseen < 16)
            snprintf(seen[nseen++], 32, "%s", t);
        int ok = 0;
        for (int i = 0; i < n; i++)
            ok |= nics[i].fabric && strcmp(nics[i].dev, t) == 0;
        if (!ok)
            return 0;
        got++;
    }
    return got == want;
}

static cl_result check_nic(const lab15_dump *d, const policy *pol, const char *host, const nic *x,
                           out_list *o)
{
    const char *nd = x->netdev, *dev = x->dev;
    int p = pol->roce_prio;
    char cmd[96];
    snprintf(cmd, sizeof cmd, "mlnx_qos -i %s", nd);
    const lab15_section *s = find(d, host, cmd);
    lab15_qos q;
    if (s && lab15_parse_mlnx_qos(s->text, &q) == CL_OK) {
        int pfc_ok = 1;
        for (int i = 0; i < 8; i++)
            pfc_ok &= q.pfc[i] == (i == p);
        if (!pfc_ok)
            CL_CHECK(add(o, "pfc", host, dev, "mlnx_qos -i %s --pfc %d,%d,%d,%d,%d,%d,%d,%d", nd,
                         p == 0, p == 1, p == 2, p == 3, p == 4, p == 5, p == 6, p == 7));
        if (strcmp(q.trust, "dscp") != 0) {
            CL_CHECK(add(o, "trust", host, dev, "mlnx_qos -i %s --trust dscp", nd));
        } else {
            char fix[256];
            int k = snprintf(fix, sizeof fix, "mlnx_qos -i %s", nd), bad = 0;
            if (q.dscp2prio[pol->roce_dscp] != p)
                k += snprintf(fix + k, sizeof fix - (size_t)k, " --dscp2prio set,%d,%d",
                              pol->roce_dscp, p),
                    bad = 1;
            if (q.dscp2prio[pol->cnp_dscp] != pol->cnp_prio)
                snprintf(fix + k, sizeof fix - (size_t)k, " --dscp2prio set,%d,%d", pol->cnp_dscp,
                         pol->cnp_prio),
                    bad = 1;
            if (bad)
                CL_CHECK(add(o, "dscp_map", host, dev, "%s", fix));
        }
        int shared = 0;
        for (int i = 0; i < 8; i++)
            shared |= i != p && q.prio2buffer[i] == q.prio2buffer[p];
        if (q.prio2buffer[p] >= 0 && shared)
            CL_CHECK(add(o, "buffer", host, dev,
                         "mlnx_qos -i %s --prio2buffer %d,%d,%d,%d,%d,%d,%d,%d", nd, p == 0, p == 1,
                         p == 2, p == 3, p == 4, p == 5, p == 6, p == 7));
    }
    char file[256];
    long v;
    snprintf(file, sizeof file, "/sys/class/net/%s/mtu", nd);
    if (sysfs_value(d, host, file, &v) && v < pol->mtu)
        CL_CHECK(add(o, "mtu", host, dev, "ip link set dev %s mtu %d", nd, pol->mtu));
    /* ECN: the sysfs switches, or where a driver has none, what the counters say. */
    const char *roles[2] = {"roce_np", "roce_rp"}, *codes[2] = {"ecn_np", "ecn_rp"};
    for (int r = 0; r < 2; r++) {
        snprintf(file, sizeof file, "/sys/class/net/%s/ecn/%s/enable/%d", nd, roles[r], p);
        int off;
        if (sysfs_value(d, host, file, &v))
            off = v == 0;
        else if (r == 0)
            off = rdma_counter(d, host, dev, "np_ecn_marked_roce_packets") > 0 &&
                  rdma_counter(d, host, dev, "np_cnp_sent") == 0;
        else
            off = rdma_counter(d, host, dev, "rp_cnp_ignored") > 0 &&
                  rdma_counter(d, host, dev, "rp_cnp_handled") == 0;
        if (off)
            CL_CHECK(add(o, codes[r], host, dev, "echo 1 > /sys/class/net/%s/ecn/%s/enable/%d", nd,
                         roles[r], p));
    }
    long cnp_dscp = pol->cnp_dscp, cnp_prio = pol->cnp_prio;
    snprintf(file, sizeof file, "/sys/class/net/%s/ecn/roce_np/cnp_dscp", nd);
    sysfs_value(d, host, file, &cnp_dscp);
    snprintf(file, sizeof file, "/sys/class/net/%s/ecn/roce_np/cnp_802p_prio", nd);
    sysfs_value(d, host, file, &cnp_prio);
    if (cnp_dscp != pol->cnp_dscp || cnp_prio != pol->cnp_prio)
        CL_CHECK(add(o, "cnp", host, dev,
                     "echo %d > /sys/class/net/%s/ecn/roce_np/cnp_dscp ; "
                     "echo %d > /sys/class/net/%s/ecn/roce_np/cnp_802p_prio",
                     pol->cnp_dscp, nd, pol->cnp_prio, nd));
    snprintf(file, sizeof file, "/sys/kernel/config/rdma_cm/%.64s/ports/1/default_roce_tos", dev);
    if (sysfs_value(d, host, file, &v) && v >> 2 != pol->roce_dscp)
        CL_CHECK(
            add(o, "roce_tos", host, dev, "cma_roce_tos -d %s -t %d", dev, pol->roce_dscp << 2));
    if (strcmp(x->state, "ACTIVE") != 0 || strcmp(x->phys, "LINK_UP") != 0)
        CL_CHECK(add(o, "link", host, dev, "ip link set dev %s up", nd));
    return CL_OK;
}

static cl_result check_env(const lab15_dump *d, const policy *pol, const char *host,
                           const nic *nics, int n, out_list *o)
{
    const lab15_section *s = find(d, host, "env");
    const char *t = s ? s->text : "";
    char buf[512], tc[64] = "", gid[64] = "", hca[256] = "";
    int has_tc = 0, has_gid = 0, has_hca = 0;
    while (next_line(&t, buf, sizeof buf)) {
        char *v = strchr(buf, '=');
        if (!v)
            continue;
        *v++ = '\0';
        if (strcmp(buf, "NCCL_IB_TC") == 0)
            snprintf(tc, sizeof tc, "%s", trim(v)), has_tc = 1;
        else if (strcmp(buf, "NCCL_IB_GID_INDEX") == 0)
            snprintf(gid, sizeof gid, "%s", trim(v)), has_gid = 1;
        else if (strcmp(buf, "NCCL_IB_HCA") == 0)
            snprintf(hca, sizeof hca, "%s", trim(v)), has_hca = 1;
    }
    /* The traffic class byte is the DSCP shifted past the two ECN bits. */
    char *end;
    long tcv = strtol(tc, &end, 10);
    if (!has_tc || !tc[0] || *end || tcv >> 2 != pol->roce_dscp)
        CL_CHECK(add(o, "nccl_ib_tc", host, "-", "export NCCL_IB_TC=%d", pol->roce_dscp << 2));
    /* One index for every NIC, or none: NCCL then finds each NIC's RoCE v2 IPv4 GID. */
    int idx = -2, same = 1;
    for (int i = 0; i < n; i++)
        if (nics[i].fabric) {
            if (idx == -2)
                idx = nics[i].v2_ipv4_index;
            else if (idx != nics[i].v2_ipv4_index)
                same = 0;
        }
    if (has_gid) {
        if (!same)
            CL_CHECK(add(o, "nccl_gid_index", host, "-", "unset NCCL_IB_GID_INDEX"));
        else if (idx >= 0 && atoi(gid) != idx)
            CL_CHECK(add(o, "nccl_gid_index", host, "-", "export NCCL_IB_GID_INDEX=%d", idx));
    }
    int others = 0;
    char want[256] = "";
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        others += !nics[i].fabric;
        if (nics[i].fabric && k < sizeof want)
            k += (size_t)snprintf(want + k, sizeof want - k, "%s%s", k ? "," : "", nics[i].dev);
    }
    if (has_hca ? !listed_hca(hca, nics, n, pol) : others > 0)
        CL_CHECK(add(o, "nccl_ib_hca", host, "-", "export NCCL_IB_HCA=%s", want));
    return CL_OK;
}

static cl_result check_switch(const lab15_section *s, const policy *pol, out_list *o)
{
    lab15_switch w;
    CL_CHECK(lab15_parse_show_roce(s->text, &w));
    const char *node = s->node;
    int p = pol->roce_prio;
    if (strcmp(w.trust, "L3") != 0)
        CL_CHECK(add(o, "sw_trust", node, "-", "interface ethernet 1/1-1/32 qos trust L3"));
    int only = w.pfc_enabled && w.pfc_prio[p];
    for (int i = 0; i < 8; i++)
        only &= i == p || !w.pfc_prio[i];
    if (!only) {
        char fix[256];
        int k = snprintf(fix, sizeof fix, "%sdcb priority-flow-control priority %d enable",
                         w.pfc_enabled ? "" : "dcb priority-flow-control enable force ; ", p);
        for (int i = 0; i < 8; i++)
            if (i != p && w.pfc_prio[i])
                k += snprintf(fix + k, sizeof fix - (size_t)k,
                              " ; no dcb priority-flow-control priority %d enable", i);
        CL_CHECK(add(o, "sw_pfc", node, "-", "%s", fix));
    }
    if (strcmp(w.ecn_mode, "ecn, absolute") != 0 || w.ecn_min_kb != pol->ecn_min_kb ||
        w.ecn_max_kb != pol->ecn_max_kb)
        CL_CHECK(add(o, "sw_ecn", node, "-",
                     "interface ethernet 1/1-1/32 traffic-class %d congestion-control ecn "
                     "minimum-absolute %d maximum-absolute %d",
                     p, pol->ecn_min_kb, pol->ecn_max_kb));
    int cnp = 0;
    for (int i = 0; i < w.ntcs; i++)
        cnp |= w.tcs[i].switch_prio == pol->cnp_prio && strcmp(w.tcs[i].app, "CNP") == 0 &&
               strcmp(w.tcs[i].ets, "Strict") == 0;
    if (!cnp)
        CL_CHECK(add(o, "sw_cnp", node, "-",
                     "interface ethernet 1/1-1/32 traffic-class %d dcb ets strict", pol->cnp_prio));
    return CL_OK;
}

/* The RDMA devices of host, from rdma link and show_gids; fabric NICs have an IPv4 RoCE v2
 * GID in the fabric's subnet. */
static cl_result host_nics(const lab15_dump *d, const policy *pol, const char *host, nic *nics,
                           int max, int *n)
{
    *n = 0;
    const lab15_section *link = find(d, host, "rdma link");
    const char *t = link ? link->text : "";
    char buf[512];
    while (next_line(&t, buf, sizeof buf) && *n < max) {
        nic *x = &nics[*n];
        memset(x, 0, sizeof *x);
        x->v2_ipv4_index = -1;
        char devport[48];
        if (sscanf(buf, "link %47s", devport) != 1)
            continue;
        char *slash = strchr(devport, '/');
        if (slash)
            *slash = '\0';
        snprintf(x->dev, sizeof x->dev, "%.31s", devport);
        char *w;
        if ((w = strstr(buf, " state ")))
            sscanf(w + 7, "%15s", x->state);
        if ((w = strstr(buf, " physical_state ")))
            sscanf(w + 16, "%15s", x->phys);
        if ((w = strstr(buf, " netdev ")))
            sscanf(w + 8, "%31s", x->netdev);
        (*n)++;
    }
    const lab15_section *gs = find(d, host, "show_gids");
    static lab15_gid g[256];
    int ng = 0;
    if (gs)
        CL_CHECK(lab15_parse_show_gids(gs->text, g, 256, &ng));
    for (int i = 0; i < *n; i++)
        for (int k = 0; k < ng; k++) {
            if (strcmp(g[k].dev, nics[i].dev) != 0 || !g[k].ipv4[0])
                continue;
            snprintf(nics[i].ipv4, sizeof nics[i].ipv4, "%s", g[k].ipv4);
            if (g[k].version == 2 && nics[i].v2_ipv4_index < 0)
                nics[i].v2_ipv4_index = g[k].index;
            nics[i].fabric |= (ipv4_of(g[k].ipv4) & pol->mask) == pol->net;
        }
    return CL_OK;
}

/* END SOLUTION */
cl_result lab15_validate(const lab15_dump *d, lab15_finding *out, int max, int *n)
{
    /* BEGIN SOLUTION */
    out_list o = {out, 0, max};
    *n = 0;
    const lab15_section *ps = NULL;
    for (int i = 0; i < d->n && !ps; i++)
        if (strcmp(d->s[i].kind, "policy") == 0)
            ps = &d->s[i];
    if (!ps) {
        cl_set_error("the dump has no policy section");
        return CL_ERR_PARSE;
    }
    policy pol;
    CL_CHECK(parse_policy(ps->text, &pol));
    for (int i = 0; i < d->n; i++) {
        const lab15_section *s = &d->s[i];
        int first = 1;
        for (int k = 0; k < i; k++)
            first &= strcmp(d->s[k].node, s->node) != 0;
        if (strcmp(s->kind, "switch") == 0 && strncmp(s->command, "show roce", 9) == 0) {
            CL_CHECK(check_switch(s, &pol, &o));
        } else if (strcmp(s->kind, "host") == 0 && first) { /* each host once */
            nic nics[16];
            int nn;
            CL_CHECK(host_nics(d, &pol, s->node, nics, 16, &nn));
            for (int k = 0; k < nn; k++)
                if (nics[k].fabric)
                    CL_CHECK(check_nic(d, &pol, s->node, &nics[k], &o));
            CL_CHECK(check_env(d, &pol, s->node, nics, nn, &o));
        }
    }
    *n = o.n;
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab15) 5: read the policy; for each host find its RDMA devices and which are on
    //                the fabric, check each fabric NIC and the job's NCCL settings; check
    //                each switch. One finding per fault, with the command that fixes it.
    (void)d, (void)out, (void)max, (void)n;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
