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
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

/* The whole file at path, NUL-terminated, in the shared arena (for the student's
 * program to read); NULL with a reason. */
static char *read_shared(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        cl_set_error("%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t k; buf && (k = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += k;
        if (n + 1 == cap) {
            char *b = cap > ((size_t)8 << 20) ? NULL : realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                buf = NULL;
                cl_set_error("%s: larger than 16 MiB", path);
                break;
            }
            buf = b, cap *= 2;
        }
    }
    fclose(f);
    if (!buf)
        return NULL;
    buf[n] = '\0';
    if (memchr(buf, '\0', n)) {
        cl_set_error("%s: not a text file (a NUL byte)", path);
        free(buf);
        return NULL;
    }
    char *shared = cl_share(buf, n + 1);
    free(buf);
    if (len)
        *len = n;
    return shared;
}

static cl_result case_file(cl_case *c, char **text)
{
    const char *path;
    CL_CHECK(cl_case_str(c, "file", &path));
    *text = read_shared(path, NULL);
    return *text ? CL_OK : CL_ERR_IO;
}

static void col_list(cl_row *r, const char *key, const int *v, int n)
{
    long long w[64];
    for (int i = 0; i < n; i++)
        w[i] = v[i];
    cl_col_ints(r, key, w, (size_t)n);
}

static cl_result qos_case(cl_case *c)
{
    static qos_args a;
    memset(&a, 0, sizeof a);
    char *text;
    CL_CHECK(case_file(c, &text));
    a.text = text;
    cl_result rc = cl_case_call(c, "qos", &a, sizeof a);
    cl_row *r = cl_case_row(c);
    a.q.trust[sizeof a.q.trust - 1] = '\0';
    cl_col_str(r, "trust", a.q.trust);
    col_list(r, "dscp2prio", a.q.dscp2prio, 64);
    col_list(r, "pfc", a.q.pfc, 8);
    col_list(r, "prio2buffer", a.q.prio2buffer, 8);
    long long b[8];
    for (int i = 0; i < 8; i++)
        b[i] = a.q.buffer_size[i];
    cl_col_ints(r, "buffer_size", b, 8);
    cl_host_free(text);
    return rc;
}

/* A bounded copy of a field the student's program wrote. */
static const char *field(char *s, size_t n)
{
    s[n - 1] = '\0';
    return s;
}

static cl_result gids_case(cl_case *c)
{
    static gids_args a;
    memset(&a, 0, sizeof a);
    char *text;
    CL_CHECK(case_file(c, &text));
    a.text = text;
    cl_result rc = cl_case_call(c, "gids", &a, sizeof a);
    cl_row *r = cl_case_row(c);
    int n = a.n < 0 ? 0 : a.n > 64 ? 64 : a.n;
    static char list[64 * 160];
    size_t used = 0;
    list[0] = '\0';
    for (int i = 0; i < n; i++) {
        lab15_gid *g = &a.g[i];
        used += (size_t)snprintf(list + used, sizeof list - used, "%s %d %d %s %s %d %s\n",
                                 field(g->dev, sizeof g->dev), g->port, g->index,
                                 field(g->gid, sizeof g->gid),
                                 g->ipv4[0] ? field(g->ipv4, sizeof g->ipv4) : "-", g->version,
                                 field(g->netdev, sizeof g->netdev));
        if (used >= sizeof list)
            break;
    }
    cl_col_int(r, "n", a.n);
    cl_col_str(r, "gids", list);
    cl_host_free(text);
    return rc;
}

static cl_result devinfo_case(cl_case *c)
{
    static devinfo_args a;
    memset(&a, 0, sizeof a);
    char *text;
    CL_CHECK(case_file(c, &text));
    a.text = text;
    cl_result rc = cl_case_call(c, "devinfo", &a, sizeof a);
    cl_row *r = cl_case_row(c);
    int n = a.n < 0 ? 0 : a.n > 16 ? 16 : a.n;
    char list[16 * 80];
    size_t used = 0;
    list[0] = '\0';
    for (int i = 0; i < n && used < sizeof list; i++) {
        lab15_port *p = &a.p[i];
        used += (size_t)snprintf(list + used, sizeof list - used, "%s %d %d %d %d\n",
                                 field(p->dev, sizeof p->dev), p->port, p->active, p->active_mtu,
                                 p->ethernet);
    }
    cl_col_int(r, "n", a.n);
    cl_col_str(r, "ports", list);
    cl_host_free(text);
    return rc;
}

static cl_result switch_case(cl_case *c)
{
    static switch_args a;
    memset(&a, 0, sizeof a);
    char *text;
    CL_CHECK(case_file(c, &text));
    a.text = text;
    cl_result rc = cl_case_call(c, "switch", &a, sizeof a);
    cl_row *r = cl_case_row(c);
    lab15_switch *s = &a.s;
    cl_col_str(r, "mode", field(s->mode, sizeof s->mode));
    cl_col_str(r, "trust", field(s->trust, sizeof s->trust));
    cl_col_str(r, "ecn_mode", field(s->ecn_mode, sizeof s->ecn_mode));
    cl_col_int(r, "ecn_min_kb", s->ecn_min_kb);
    cl_col_int(r, "ecn_max_kb", s->ecn_max_kb);
    cl_col_int(r, "pfc_enabled", s->pfc_enabled);
    col_list(r, "pfc_prio", s->pfc_prio, 8);
    char list[8 * 64];
    size_t used = 0;
    list[0] = '\0';
    for (int i = 0; i < s->ntcs && i < 8 && used < sizeof list; i++)
        used += (size_t)snprintf(
            list + used, sizeof list - used, "%d %d %s %s\n", s->tcs[i].switch_prio, s->tcs[i].tc,
            field(s->tcs[i].app, sizeof s->tcs[i].app), field(s->tcs[i].ets, sizeof s->tcs[i].ets));
    cl_col_str(r, "tcs", list);
    cl_host_free(text);
    return rc;
}

/* Split text (in the arena, writable) into sections at "### kind node $ command" lines. */
static cl_result split(char *text, lab15_dump *d)
{
    d->n = 0;
    char *p = text, *open = NULL;
    int line = 1;
    while (*p) {
        char *eol = strchr(p, '\n');
        char *next = eol ? eol + 1 : p + strlen(p);
        if (strncmp(p, "### ", 4) == 0) {
            if (eol)
                *eol = '\0';
            if (open)
                p[-1] = '\0'; /* the previous section ends before this line */
            if (d->n == LAB15_MAX_SECTIONS) {
                cl_set_error("line %d: more than %d sections", line, LAB15_MAX_SECTIONS);
                return CL_ERR_PARSE;
            }
            lab15_section *s = &d->s[d->n++];
            memset(s, 0, sizeof *s);
            char *dollar = strstr(p, " $ ");
            if (sscanf(p + 4, "%7s", s->kind) != 1) {
                cl_set_error("line %d: a section header without a kind", line);
                return CL_ERR_PARSE;
            }
            if (strcmp(s->kind, "policy") != 0) {
                if (!dollar || sscanf(p + 4 + strlen(s->kind), "%31s", s->node) != 1) {
                    cl_set_error("line %d: expected '### %s <node> $ <command>'", line, s->kind);
                    return CL_ERR_PARSE;
                }
                snprintf(s->command, sizeof s->command, "%s", dollar + 3);
            }
            s->text = next;
            open = next;
        }
        p = next;
        line++;
    }
    return CL_OK;
}

static cl_result validate_case(cl_case *c)
{
    static validate_args a;
    memset(&a, 0, sizeof a);
    const char *path;
    CL_CHECK(cl_case_str(c, "dump", &path));
    char *text = read_shared(path, NULL);
    if (!text)
        return CL_ERR_IO;
    cl_result rc = split(text, &a.d);
    if (rc != CL_OK) {
        cl_host_free(text);
        return rc;
    }
    for (int i = 0; i < a.d.n; i++)
        if (!a.d.s[i].text)
            a.d.s[i].text = "";
    rc = cl_case_call(c, "validate", &a, sizeof a);
    cl_row *r = cl_case_row(c);
    int n = a.n < 0 ? 0 : a.n > LAB15_MAX_FINDINGS ? LAB15_MAX_FINDINGS : a.n;
    static char list[LAB15_MAX_FINDINGS * 360];
    size_t used = 0;
    list[0] = '\0';
    for (int i = 0; i < n && used < sizeof list; i++) {
        lab15_finding *f = &a.f[i];
        used += (size_t)snprintf(list + used, sizeof list - used, "%s\t%s\t%s\t%s\n",
                                 field(f->code, sizeof f->code), field(f->node, sizeof f->node),
                                 field(f->target, sizeof f->target), field(f->fix, sizeof f->fix));
    }
    cl_col_int(r, "sections", a.d.n);
    cl_col_int(r, "n", a.n);
    cl_col_str(r, "findings", list);
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
