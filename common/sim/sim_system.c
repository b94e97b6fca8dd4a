/* sim_system.c: parser of datasets/systems/<name>.conf (`key = value`, # comments). */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_system.h"

typedef enum {
    K_INT,
    K_DBL,
    K_DBL3,
    K_DBLN,
    K_STR,
    K_NODE,
    K_FABRIC,
    K_ROUTING,
    K_NVPAIRS,
    K_PROTOS
} ktype;

typedef struct key {
    const char *name;
    ktype type;
    size_t off;
    int required;
} key;

#define F(x) offsetof(cl_sim_system, x)
static const key keys[] = {
    {"name", K_STR, F(name), 1},
    {"nodes", K_INT, F(nodes), 1},
    {"gpus_per_node", K_INT, F(gpus_per_node), 1},
    {"nics_per_node", K_INT, F(nics_per_node), 1},
    {"node", K_NODE, F(node), 1},
    {"topology", K_STR, F(topology), 0},
    {"nvlinks_per_gpu", K_INT, F(nvlinks_per_gpu), 0},
    {"nvlink_gbps", K_DBL, F(nvlink_gbps), 0},
    {"nvlink", K_NVPAIRS, 0, 0},
    {"cpus", K_INT, F(cpus), 1},
    {"gpus_per_pcie_switch", K_INT, F(gpus_per_pcie_switch), 1},
    {"nics_per_pcie_switch", K_INT, F(nics_per_pcie_switch), 1},
    {"pcie_gbps", K_DBL, F(pcie_gbps), 1},
    {"sys_gbps", K_DBL, F(sys_gbps), 1},
    {"nic_gbps", K_DBL, F(nic_gbps), 1},
    {"nic_eff_gbps", K_DBL, F(nic_eff_gbps), 1},
    {"nvls", K_INT, F(nvls), 0},
    {"nvls_eff", K_DBL, F(nvls_eff), 0},
    {"fabric", K_FABRIC, F(fabric), 1},
    {"fabric_radix", K_INT, F(fabric_radix), 1},
    {"su_nodes", K_INT, F(su_nodes), 0},
    {"oversubscription", K_DBL, F(oversubscription), 0},
    {"routing", K_ROUTING, F(routing), 1},
    {"pxn", K_INT, F(pxn), 0},
    {"net_sharp", K_INT, F(net_sharp), 0},
    {"ecmp_seed", K_INT, F(ecmp_seed), 0},
    {"nvswitch_hop_us", K_DBL, F(nvswitch_hop_us), 0},
    {"fabric_hop_us", K_DBL, F(fabric_hop_us), 1},
    {"lat_ring_base_us", K_DBL3, F(lat_ring_base), 1},
    {"lat_tree_base_us", K_DBL3, F(lat_tree_base), 1},
    {"lat_ring_nvl_us", K_DBL3, F(lat_ring_nvl), 1},
    {"lat_ring_pci_us", K_DBL3, F(lat_ring_pci), 1},
    {"lat_ring_net_us", K_DBL3, F(lat_ring_net), 1},
    {"lat_tree_nvl_us", K_DBL3, F(lat_tree_nvl), 1},
    {"lat_tree_pci_us", K_DBL3, F(lat_tree_pci), 1},
    {"lat_tree_net_us", K_DBL3, F(lat_tree_net), 1},
    {"lat_nvls_us", K_DBL, F(lat_nvls_us), 0},
    {"proto_eff", K_DBL3, F(proto_eff), 1},
    {"protocols", K_PROTOS, 0, 1},
    {"ll_max_gbps", K_DBL3, F(ll_max_gbps), 1},
    {"simple_net_lat_factor", K_DBL, F(simple_net_lat_factor), 1},
    {"tree_ch_max_gbps", K_DBL3, F(tree_ch_max_gbps), 0},
    {"launch_us", K_DBL, F(launch_us), 1},
    {"hbm_gbps", K_DBL, F(hbm_gbps), 1},
};
#undef F
#define NKEYS (int)(sizeof keys / sizeof keys[0])

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = 0;
    return s;
}

static int parse_dbl(const char *s, double *out, const char **end)
{
    char *e;
    errno = 0;
    double v = strtod(s, &e);
    if (e == s || errno)
        return -1;
    *out = v;
    if (end)
        *end = e;
    return 0;
}

static int parse_int(const char *s, int *out)
{
    char *e;
    errno = 0;
    long v = strtol(s, &e, 10);
    if (e == s || *trim(e) || errno || v < 0 || v > 1000000000)
        return -1;
    *out = (int)v;
    return 0;
}

/* "0-1:2 0-3:1 ..." */
static int parse_pairs(const char *s, cl_sim_system *o)
{
    o->nnvpairs = 0;
    while (*s) {
        while (isspace((unsigned char)*s) || *s == ',')
            s++;
        if (!*s)
            break;
        int a, b, c, n;
        if (sscanf(s, "%d-%d:%d%n", &a, &b, &c, &n) != 3 || a < 0 || b < 0 || c < 1 || a == b)
            return -1;
        if (o->nnvpairs >= CL_SIM_MAX_NVPAIRS)
            return -1;
        o->nvpairs[o->nnvpairs++] = (cl_sim_nvpair){a, b, c};
        s += n;
    }
    return 0;
}

static int parse_value(const key *k, char *v, cl_sim_system *o, char *why, size_t whylen)
{
    char *p = (char *)o + k->off;
    switch (k->type) {
    case K_INT:
        if (parse_int(v, (int *)p) == 0)
            return 0;
        snprintf(why, whylen, "%s: expected a non-negative integer, got '%s'", k->name, v);
        return -1;
    case K_DBL: {
        const char *e;
        if (parse_dbl(v, (double *)p, &e) == 0 && !*e && *(double *)p >= 0)
            return 0;
        snprintf(why, whylen, "%s: expected a non-negative number, got '%s'", k->name, v);
        return -1;
    }
    case K_DBL3: {
        const char *s = v;
        for (int i = 0; i < 3; i++) {
            while (isspace((unsigned char)*s) || *s == ',')
                s++;
            if (parse_dbl(s, (double *)p + i, &s) != 0) {
                snprintf(why, whylen, "%s: expected three numbers, got '%s'", k->name, v);
                return -1;
            }
        }
        if (*trim((char *)s)) {
            snprintf(why, whylen, "%s: expected three numbers, got '%s'", k->name, v);
            return -1;
        }
        return 0;
    }
    case K_STR:
        if (strlen(v) >=
            (k->off == offsetof(cl_sim_system, name) ? CL_SIM_NAME_LEN : CL_SIM_PATH_LEN)) {
            snprintf(why, whylen, "%s: value too long", k->name);
            return -1;
        }
        strcpy(p, v);
        return 0;
    case K_NODE:
        if (!strcmp(v, "nvswitch"))
            o->node = CL_SIM_NODE_NVSWITCH;
        else if (!strcmp(v, "nvlink"))
            o->node = CL_SIM_NODE_NVLINK;
        else if (!strcmp(v, "pcie"))
            o->node = CL_SIM_NODE_PCIE;
        else if (!strcmp(v, "topo"))
            o->node = CL_SIM_NODE_TOPO;
        else
            break;
        return 0;
    case K_FABRIC:
        if (!strcmp(v, "rail"))
            o->fabric = CL_SIM_FABRIC_RAIL;
        else if (!strcmp(v, "leafspine"))
            o->fabric = CL_SIM_FABRIC_LEAFSPINE;
        else if (!strcmp(v, "fattree"))
            o->fabric = CL_SIM_FABRIC_FATTREE;
        else
            break;
        return 0;
    case K_ROUTING:
        if (!strcmp(v, "dmodk"))
            o->routing = CL_SIM_ROUTE_DMODK;
        else if (!strcmp(v, "ecmp"))
            o->routing = CL_SIM_ROUTE_ECMP;
        else if (!strcmp(v, "minhop"))
            o->routing = CL_SIM_ROUTE_MINHOP;
        else
            break;
        return 0;
    case K_NVPAIRS:
        if (parse_pairs(v, o) == 0)
            return 0;
        snprintf(why, whylen, "nvlink: expected pairs like '0-1:2 0-3:1', got '%s'", v);
        return -1;
    case K_PROTOS: {
        memset(o->proto_enabled, 0, sizeof o->proto_enabled);
        char buf[128];
        snprintf(buf, sizeof buf, "%s", v);
        for (char *t = strtok(buf, ", "); t; t = strtok(NULL, ", ")) {
            if (!strcmp(t, "ll"))
                o->proto_enabled[CL_PROTO_LL] = 1;
            else if (!strcmp(t, "ll128"))
                o->proto_enabled[CL_PROTO_LL128] = 1;
            else if (!strcmp(t, "simple"))
                o->proto_enabled[CL_PROTO_SIMPLE] = 1;
            else {
                snprintf(why, whylen, "protocols: unknown protocol '%s' (ll, ll128, simple)", t);
                return -1;
            }
        }
        return 0;
    }
    case K_DBLN: break;
    }
    snprintf(why, whylen, "%s: unknown value '%s'", k->name, v);
    return -1;
}

static void set_defaults(cl_sim_system *o)
{
    memset(o, 0, sizeof *o);
    o->nvls_eff = 1.0;
    o->su_nodes = 32;
    o->oversubscription = 1.0;
    o->ecmp_seed = 1;
    o->pxn = 1;
}

cl_result cl_sim_system_parse(const char *path, cl_sim_system *out)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        cl_set_error("%s: cannot open: %s", path, strerror(errno));
        return CL_ERR_IO;
    }
    set_defaults(out);
    snprintf(out->path, sizeof out->path, "%s", path);
    unsigned char seen[NKEYS] = {0};
    char line[1024], why[256];
    int lineno = 0;
    cl_result rc = CL_OK;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            cl_set_error("%s:%d: line longer than %zu characters", path, lineno, sizeof line - 2);
            rc = CL_ERR_PARSE;
            break;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *s = trim(line);
        if (!*s)
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            cl_set_error("%s:%d: expected 'key = value'", path, lineno);
            rc = CL_ERR_PARSE;
            break;
        }
        *eq = 0;
        char *k = trim(s), *v = trim(eq + 1);
        int i;
        for (i = 0; i < NKEYS; i++)
            if (!strcmp(keys[i].name, k))
                break;
        if (i == NKEYS) {
            cl_set_error("%s:%d: unknown key '%s'", path, lineno, k);
            rc = CL_ERR_PARSE;
            break;
        }
        if (seen[i]) {
            cl_set_error("%s:%d: key '%s' given twice", path, lineno, k);
            rc = CL_ERR_PARSE;
            break;
        }
        if (!*v) {
            cl_set_error("%s:%d: key '%s' has no value", path, lineno, k);
            rc = CL_ERR_PARSE;
            break;
        }
        seen[i] = 1;
        if (parse_value(&keys[i], v, out, why, sizeof why) != 0) {
            cl_set_error("%s:%d: %s", path, lineno, why);
            rc = CL_ERR_PARSE;
            break;
        }
    }
    fclose(f);
    if (rc != CL_OK)
        return rc;
    for (int i = 0; i < NKEYS; i++)
        if (keys[i].required && !seen[i]) {
            cl_set_error("%s:%d: missing required key '%s'", path, lineno, keys[i].name);
            return CL_ERR_PARSE;
        }
    if (out->node == CL_SIM_NODE_TOPO && (!out->topology[0] || out->nvlink_gbps <= 0)) {
        cl_set_error("%s:%d: node 'topo' needs topology and nvlink_gbps", path, lineno);
        return CL_ERR_PARSE;
    }
    if (out->node != CL_SIM_NODE_PCIE && out->node != CL_SIM_NODE_TOPO &&
        (out->nvlink_gbps <= 0 ||
         (out->node == CL_SIM_NODE_NVSWITCH && out->nvlinks_per_gpu <= 0) ||
         (out->node == CL_SIM_NODE_NVLINK && out->nnvpairs == 0))) {
        cl_set_error("%s:%d: node '%s' needs nvlink_gbps and %s", path, lineno,
                     out->node == CL_SIM_NODE_NVLINK ? "nvlink" : "nvswitch",
                     out->node == CL_SIM_NODE_NVLINK ? "nvlink pairs" : "nvlinks_per_gpu");
        return CL_ERR_PARSE;
    }
    for (int i = 0; i < out->nnvpairs; i++)
        if (out->nvpairs[i].a >= out->gpus_per_node || out->nvpairs[i].b >= out->gpus_per_node) {
            cl_set_error("%s:%d: nvlink pair %d-%d names a GPU beyond gpus_per_node %d", path,
                         lineno, out->nvpairs[i].a, out->nvpairs[i].b, out->gpus_per_node);
            return CL_ERR_PARSE;
        }
    if (out->nodes < 1 || out->gpus_per_node < 1 || out->cpus < 1 ||
        out->gpus_per_pcie_switch < 1 || out->fabric_radix < 2) {
        cl_set_error("%s:%d: nodes, gpus_per_node, cpus, gpus_per_pcie_switch must be >= 1 "
                     "and fabric_radix >= 2",
                     path, lineno);
        return CL_ERR_PARSE;
    }
    return CL_OK;
}

cl_result cl_sim_system_load(const char *name, cl_sim_system *out)
{
    size_t n = strlen(name);
    if (strchr(name, '/') || (n > 5 && !strcmp(name + n - 5, ".conf")))
        return cl_sim_system_parse(name, out);
    for (const char *c = name; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_' && *c != '.') {
            cl_set_error("system name '%s': only letters, digits, '-', '_' and '.'", name);
            return CL_ERR_INVALID;
        }
    char path[CL_SIM_PATH_LEN], tried[1024] = "";
    const char *env = getenv("COMMLAB_DATASETS");
    const char *roots[] = {env, "datasets", "../datasets", "../../datasets", "../../../datasets"};
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
        if (!roots[i] || !*roots[i])
            continue;
        snprintf(path, sizeof path, "%s/systems/%s.conf", roots[i], name);
        if (access(path, R_OK) == 0)
            return cl_sim_system_parse(path, out);
        size_t used = strlen(tried);
        snprintf(tried + used, sizeof tried - used, "%s%s", used ? ", " : "", path);
    }
    cl_set_error("unknown system '%s' (tried %s)", name, tried);
    return CL_ERR_INVALID;
}
