/* harness_parsers.c: lab 15's parsers' modes: qos (mlnx_qos), gids (show_gids), devinfo
 * (ibv_devinfo -v) and switch (a switch's show roce). The harness reads the case's file
 * (the student's program opens none) into shared memory, calls the student's parser on it,
 * and writes what the parser found as the row's columns.
 */
#include <stdio.h>
#include <string.h>

#include "boundary/arena.h"
#include "harness/bundle.h"
#include "lab15_harness.h"

static void col_list(cl_row *r, const char *key, const int *v, int n)
{
    long long w[64];
    for (int i = 0; i < n; i++)
        w[i] = v[i];
    cl_col_ints(r, key, w, (size_t)n);
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

cl_result qos_case(cl_case *c)
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

cl_result gids_case(cl_case *c)
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

cl_result devinfo_case(cl_case *c)
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

cl_result switch_case(cl_case *c)
{
    static switch_args a;
    return parse_case(c, "switch", &a, sizeof a, &a.text, switch_row);
}
