/* driver.c: lab 15's plug-in: the student's parsers of the tools' outputs and the
 * validator of a cluster's lossless RoCE configuration.
 *
 *   lab15 qos file=mlnx_qos.txt         your parse of one mlnx_qos output
 *   lab15 gids file=show_gids.txt       your parse of show_gids
 *   lab15 devinfo file=devinfo.txt      your parse of ibv_devinfo -v
 *   lab15 switch file=show_roce.txt     your parse of a switch's show roce
 *   lab15 validate dump=cluster.txt     your findings and fixes for a whole dump
 *   (or --cases FILE with one case per line)
 *
 * The harness reads the files (the student's program opens none) and, for a dump, splits
 * it into its sections: a line "### <kind> <node> $ <command>" starts each one. */
#include <stdio.h>
#include <string.h>

#include "harness/harness.h"
#include "lab15.h"

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct qos_args {
    const char *text;
    lab15_qos q; /* out */
} qos_args;

typedef struct gids_args {
    const char *text;
    int n; /* out */
    lab15_gid g[64];
} gids_args;

typedef struct devinfo_args {
    const char *text;
    int n; /* out */
    lab15_port p[16];
} devinfo_args;

typedef struct switch_args {
    const char *text;
    lab15_switch s; /* out */
} switch_args;

typedef struct validate_args {
    lab15_dump d;
    int n; /* out */
    lab15_finding f[LAB15_MAX_FINDINGS];
} validate_args;

#ifdef CL_STUDENT_SIDE

static cl_result e_qos(cl_comm *c, void *args)
{
    (void)c;
    qos_args *a = args;
    return lab15_parse_mlnx_qos(a->text, &a->q);
}

static cl_result e_gids(cl_comm *c, void *args)
{
    (void)c;
    gids_args *a = args;
    return lab15_parse_show_gids(a->text, a->g, 64, &a->n);
}

static cl_result e_devinfo(cl_comm *c, void *args)
{
    (void)c;
    devinfo_args *a = args;
    return lab15_parse_devinfo(a->text, a->p, 16, &a->n);
}

static cl_result e_switch(cl_comm *c, void *args)
{
    (void)c;
    switch_args *a = args;
    return lab15_parse_show_roce(a->text, &a->s);
}

static cl_result e_validate(cl_comm *c, void *args)
{
    (void)c;
    validate_args *a = args;
    return lab15_validate(&a->d, a->f, LAB15_MAX_FINDINGS, &a->n);
}

CL_STUDENT_ENTRIES({"qos", e_qos}, {"gids", e_gids}, {"devinfo", e_devinfo}, {"switch", e_switch},
                   {"validate", e_validate});

#else

#include "boundary/arena.h"
#include "harness/bundle.h"

#define FILE_MAX_MIB 16 /* the largest file read: a dump, or one tool's output */

static void col_list(cl_row *r, const char *key, const int *v, int n)
{
    long long w[64];
    for (int i = 0; i < n; i++)
        w[i] = v[i];
    cl_col_ints(r, key, w, (size_t)n);
}

/* A bounded copy of a field the student's program wrote. */
static const char *field(char *s, size_t n)
{
    s[n - 1] = '\0';
    return s;
}

/* Writes item i of items as one line into out (len bytes); returns what snprintf does. */
typedef int (*line_fn)(char *out, size_t len, void *items, int i);

/* The column key: a line for each of the first n items (n clamped to 0..max), in at most
 * cap bytes; the lines that do not fit are cut. */
static void col_lines(cl_row *r, const char *key, size_t cap, int n, int max, line_fn line,
                      void *items)
{
    static char list[LAB15_MAX_FINDINGS * 360]; /* the largest cap */
    if (CL_NEVER(cap > sizeof list))
        cap = sizeof list;
    n = n < 0 ? 0 : n > max ? max : n;
    size_t used = 0;
    list[0] = '\0';
    for (int i = 0; i < n && used < cap; i++)
        used += (size_t)line(list + used, cap - used, items, i);
    cl_col_str(r, key, list);
}

/* A parser's mode: the student's parse of the case's file=PATH. args (size bytes) holds
 * the text at *text; row writes the row's columns from what the parser wrote there. */
static cl_result parse_case(cl_case *c, const char *entry, void *args, size_t size,
                            const char **text, void (*row)(cl_row *r, void *args))
{
    memset(args, 0, size);
    char *file;
    CL_CHECK(cl_bundle_read(c, "file", FILE_MAX_MIB, &file));
    *text = file;
    cl_result rc = cl_case_call(c, entry, args, size);
    row(cl_case_row(c), args);
    cl_host_free(file);
    return rc;
}

static void qos_row(cl_row *r, void *args)
{
    qos_args *a = args;
    a->q.trust[sizeof a->q.trust - 1] = '\0';
    cl_col_str(r, "trust", a->q.trust);
    col_list(r, "dscp2prio", a->q.dscp2prio, 64);
    col_list(r, "pfc", a->q.pfc, 8);
    col_list(r, "prio2buffer", a->q.prio2buffer, 8);
    long long b[8];
    for (int i = 0; i < 8; i++)
        b[i] = a->q.buffer_size[i];
    cl_col_ints(r, "buffer_size", b, 8);
}

static cl_result qos_case(cl_case *c)
{
    static qos_args a;
    return parse_case(c, "qos", &a, sizeof a, &a.text, qos_row);
}

static int gid_line(char *out, size_t len, void *gids, int i)
{
    lab15_gid *g = &((lab15_gid *)gids)[i];
    return snprintf(out, len, "%s %d %d %s %s %d %s\n", field(g->dev, sizeof g->dev), g->port,
                    g->index, field(g->gid, sizeof g->gid),
                    g->ipv4[0] ? field(g->ipv4, sizeof g->ipv4) : "-", g->version,
                    field(g->netdev, sizeof g->netdev));
}

static void gids_row(cl_row *r, void *args)
{
    gids_args *a = args;
    cl_col_int(r, "n", a->n);
    col_lines(r, "gids", 64 * 160, a->n, 64, gid_line, a->g);
}

static cl_result gids_case(cl_case *c)
{
    static gids_args a;
    return parse_case(c, "gids", &a, sizeof a, &a.text, gids_row);
}

static int port_line(char *out, size_t len, void *ports, int i)
{
    lab15_port *p = &((lab15_port *)ports)[i];
    return snprintf(out, len, "%s %d %d %d %d\n", field(p->dev, sizeof p->dev), p->port, p->active,
                    p->active_mtu, p->ethernet);
}

static void devinfo_row(cl_row *r, void *args)
{
    devinfo_args *a = args;
    cl_col_int(r, "n", a->n);
    col_lines(r, "ports", 16 * 80, a->n, 16, port_line, a->p);
}

static cl_result devinfo_case(cl_case *c)
{
    static devinfo_args a;
    return parse_case(c, "devinfo", &a, sizeof a, &a.text, devinfo_row);
}

/* The switch's RoCE used TC i. */
static int tc_line(char *out, size_t len, void *sw, int i)
{
    lab15_switch *s = sw;
    return snprintf(out, len, "%d %d %s %s\n", s->tcs[i].switch_prio, s->tcs[i].tc,
                    field(s->tcs[i].app, sizeof s->tcs[i].app),
                    field(s->tcs[i].ets, sizeof s->tcs[i].ets));
}

static void switch_row(cl_row *r, void *args)
{
    lab15_switch *s = &((switch_args *)args)->s;
    cl_col_str(r, "mode", field(s->mode, sizeof s->mode));
    cl_col_str(r, "trust", field(s->trust, sizeof s->trust));
    cl_col_str(r, "ecn_mode", field(s->ecn_mode, sizeof s->ecn_mode));
    cl_col_int(r, "ecn_min_kb", s->ecn_min_kb);
    cl_col_int(r, "ecn_max_kb", s->ecn_max_kb);
    cl_col_int(r, "pfc_enabled", s->pfc_enabled);
    col_list(r, "pfc_prio", s->pfc_prio, 8);
    col_lines(r, "tcs", 8 * 64, s->ntcs, 8, tc_line, s);
}

static cl_result switch_case(cl_case *c)
{
    static switch_args a;
    return parse_case(c, "switch", &a, sizeof a, &a.text, switch_row);
}

/* A section of the dump from its header line "### kind node $ command" ("### policy"). */
static cl_result dump_section(void *dump, int i, const char *header, const char *text, int line)
{
    lab15_section *s = &((lab15_dump *)dump)->s[i];
    memset(s, 0, sizeof *s);
    const char *dollar = strstr(header, " $ ");
    if (sscanf(header + 4, "%7s", s->kind) != 1) {
        cl_set_error("line %d: a section header without a kind", line);
        return CL_ERR_PARSE;
    }
    if (strcmp(s->kind, "policy") != 0) {
        if (!dollar || sscanf(header + 4 + strlen(s->kind), "%31s", s->node) != 1) {
            cl_set_error("line %d: expected '### %s <node> $ <command>'", line, s->kind);
            return CL_ERR_PARSE;
        }
        snprintf(s->command, sizeof s->command, "%s", dollar + 3);
    }
    s->text = text;
    return CL_OK;
}

static int finding_line(char *out, size_t len, void *findings, int i)
{
    lab15_finding *f = &((lab15_finding *)findings)[i];
    return snprintf(out, len, "%s\t%s\t%s\t%s\n", field(f->code, sizeof f->code),
                    field(f->node, sizeof f->node), field(f->target, sizeof f->target),
                    field(f->fix, sizeof f->fix));
}

/* A dump starts with notes (comment lines) before its first header. */
static const cl_bundle_form dump_form = {.key = "dump",
                                         .max_mib = FILE_MAX_MIB,
                                         .max_sections = LAB15_MAX_SECTIONS,
                                         .section = dump_section};

static cl_result validate_case(cl_case *c)
{
    static validate_args a;
    memset(&a, 0, sizeof a);
    char *text;
    cl_result rc = cl_bundle_load(c, &dump_form, &a.d, &a.d.n, &text);
    if (rc != CL_OK)
        return rc;
    rc = cl_case_call(c, "validate", &a, sizeof a);
    cl_row *r = cl_case_row(c);
    cl_col_int(r, "sections", a.d.n);
    cl_col_int(r, "n", a.n);
    col_lines(r, "findings", LAB15_MAX_FINDINGS * 360, a.n, LAB15_MAX_FINDINGS, finding_line, a.f);
    cl_host_free(text);
    return rc;
}

const cl_lab cl_lab_def = {
    .name = "lab15",
    .title = "RoCEv2 无损配置: a validator of PFC, ECN, DSCP, GID, MTU and NCCL settings",
    .modes = (const cl_mode[]){{.name = "qos",
                                .help = "your parse of an mlnx_qos output: file=PATH",
                                .cases = qos_case},
                               {.name = "gids",
                                .help = "your parse of a show_gids output: file=PATH",
                                .cases = gids_case},
                               {.name = "devinfo",
                                .help = "your parse of an ibv_devinfo -v output: file=PATH",
                                .cases = devinfo_case},
                               {.name = "switch",
                                .help = "your parse of a switch's show roce: file=PATH",
                                .cases = switch_case},
                               {.name = "validate",
                                .help = "your findings and fixes for a cluster dump: dump=PATH",
                                .cases = validate_case},
                               {0}},
};

#endif
