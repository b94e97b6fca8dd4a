/* lab19.c: lab 19, topology-aware scheduling on a tree fabric.
 *
 * You write Slurm's hostlist compression, the topology.conf of the tree
 * plugin for a fabric, and the placement policy a scheduler uses on that
 * fabric. Read labs/lab19/README.md first; the TODOs below follow its
 * sections. lab19.h states the structures. Build with `make lab19`, grade
 * with `./grade lab19`.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab19.h"

/* BEGIN SOLUTION */
/* A host name as Slurm reads it: a prefix and an optional numeric suffix. */
typedef struct host {
    char prefix[LAB19_NAME];
    long num;   /* -1: no digits at the end */
    int width;  /* digits as written */
    int padded; /* written with a leading zero */
} host;

static void split(const char *name, host *h)
{
    size_t n = strlen(name), k = n;
    while (k > 0 && name[k - 1] >= '0' && name[k - 1] <= '9')
        k--;
    snprintf(h->prefix, sizeof h->prefix, "%.*s", (int)k, name);
    h->width = (int)(n - k);
    h->num = h->width ? strtol(name + k, NULL, 10) : -1;
    h->padded = h->width > 1 && name[k] == '0';
}

static int by_name(const void *a, const void *b)
{
    const host *x = a, *y = b;
    int c = strcmp(x->prefix, y->prefix);
    if (c)
        return c;
    if (x->num != y->num)
        return x->num < y->num ? -1 : 1;
    return x->width - y->width;
}

/* Append to out (cap bytes, used so far *len); CL_ERR_INVALID when it does not fit. */
__attribute__((format(printf, 4, 5))) static cl_result put(char *out, size_t cap, size_t *len,
                                                           const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(out + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= cap - *len) {
        cl_set_error("the output does not fit in %zu bytes", cap);
        return CL_ERR_INVALID;
    }
    *len += (size_t)k;
    return CL_OK;
}

static void number(char *buf, size_t n, long v, int width, int padded)
{
    snprintf(buf, n, "%0*ld", padded ? width : 1, v);
}
/* END SOLUTION */
cl_result lab19_hostlist(const char *const *names, int n, char *out, size_t cap)
{
    /* BEGIN SOLUTION */
    host *h = malloc((size_t)(n > 0 ? n : 1) * sizeof *h);
    if (!h)
        return CL_ERR_NOMEM;
    for (int i = 0; i < n; i++)
        split(names[i], &h[i]);
    qsort(h, (size_t)n, sizeof *h, by_name);
    size_t len = 0;
    out[0] = '\0';
    cl_result rc = CL_OK;
    for (int i = 0; i < n && rc == CL_OK;) {
        if (len)
            rc = put(out, cap, &len, ",");
        /* The hosts of this prefix: i .. j - 1. */
        int j = i;
        while (j < n && strcmp(h[j].prefix, h[i].prefix) == 0)
            j++;
        if (h[i].num < 0) { /* a name without digits stands alone */
            rc = put(out, cap, &len, "%s", h[i].prefix);
            if (i + 1 < j && rc == CL_OK)
                rc = put(out, cap, &len, ",");
            i++;
            if (i == j)
                continue;
        }
        int single = j - i == 1;
        rc = put(out, cap, &len, single ? "%s" : "%s[", h[i].prefix);
        for (int k = i; k < j && rc == CL_OK;) {
            /* A range: consecutive numbers of one width (or none zero-padded). */
            int e = k;
            while (e + 1 < j && h[e + 1].num == h[e].num + 1 &&
                   (h[e + 1].width == h[k].width || (!h[e + 1].padded && !h[k].padded)))
                e++;
            char lo[32], hi[32];
            number(lo, sizeof lo, h[k].num, h[k].width, h[k].padded);
            number(hi, sizeof hi, h[e].num, h[k].width, h[k].padded);
            if (k > i)
                rc = put(out, cap, &len, ",");
            if (rc == CL_OK)
                rc = e > k ? put(out, cap, &len, "%s-%s", lo, hi) : put(out, cap, &len, "%s", lo);
            k = e + 1;
        }
        if (!single && rc == CL_OK)
            rc = put(out, cap, &len, "]");
        i = j;
    }
    free(h);
    return rc;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab19) 1: Slurm's hostlist (handout section 1). A name is a prefix
    //   and a numeric suffix; names that share a prefix go into one bracket of
    //   ranges, and a range keeps the width of its zero-padded numbers. The
    //   names come in any order; the expression must name exactly them and be
    //   no longer than Slurm's own.
    (void)names, (void)n;
    if (cap)
        out[0] = '\0';
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab19_topology_conf(const lab19_fabric *f, char *out, size_t cap)
{
    /* BEGIN SOLUTION */
    const char **kids = malloc((size_t)(f->nnodes + f->nswitches) * sizeof *kids);
    char list[8192];
    size_t len = 0;
    cl_result rc = kids ? CL_OK : CL_ERR_NOMEM;
    out[0] = '\0';
    for (int s = 0; s < f->nswitches && rc == CL_OK; s++) {
        int n = 0;
        if (f->sw[s].level == 1) {
            for (int i = 0; i < f->nnodes; i++)
                if (f->leaf[i] == s)
                    kids[n++] = f->node[i];
        } else {
            for (int t = 0; t < f->nswitches; t++)
                if (f->sw[t].parent == s)
                    kids[n++] = f->sw[t].name;
        }
        rc = lab19_hostlist(kids, n, list, sizeof list);
        if (rc == CL_OK)
            rc = put(out, cap, &len, "SwitchName=%s %s=%s\n", f->sw[s].name,
                     f->sw[s].level == 1 ? "Nodes" : "Switches", list);
    }
    free(kids);
    return rc;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab19) 2: the tree plugin's topology.conf (handout section 2): one
    //   line per switch; a leaf lists its nodes, a switch above the leaves
    //   lists the switches below it, each as a hostlist (TODO 1).
    (void)f;
    if (cap)
        out[0] = '\0';
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* BEGIN SOLUTION */
/* Whole idle nodes below each switch. */
static void whole_below(const lab19_fabric *f, const lab19_state *s, int *w)
{
    memset(w, 0, (size_t)f->nswitches * sizeof *w);
    for (int i = 0; i < f->nnodes; i++)
        if (s->free_gpus[i] == f->gpus_per_node)
            for (int t = f->leaf[i]; t >= 0; t = f->sw[t].parent)
                w[t]++;
}

/* One node for a job of a few GPUs: the tightest fit, on a partly busy node if
 * one fits, else on a leaf with the fewest idle whole nodes, so that the large
 * idle blocks stay whole. */
static int small_job(const lab19_fabric *f, const lab19_state *s, const lab19_job *j, const int *w)
{
    int best = -1;
    long best_key = 0;
    for (int i = 0; i < f->nnodes; i++) {
        int g = s->free_gpus[i];
        if (g < j->gpus)
            continue;
        long key = (long)(g - j->gpus) * 100000 + (long)w[f->leaf[i]] * 512 + i;
        if (best < 0 || key < best_key)
            best = i, best_key = key;
    }
    return best;
}

/* Take up to `want` whole idle nodes of leaf l into nodes[]; returns how many. */
static int take(const lab19_fabric *f, const lab19_state *s, int l, int want, int *nodes)
{
    int k = 0;
    for (int i = 0; i < f->nnodes && k < want; i++)
        if (f->leaf[i] == l && s->free_gpus[i] == f->gpus_per_node)
            nodes[k++] = i;
    return k;
}
/* END SOLUTION */
cl_result lab19_place(const lab19_fabric *f, const lab19_state *s, const lab19_job *job, int *nodes)
{
    /* BEGIN SOLUTION */
    int w[LAB19_MAX_SWITCHES];
    whole_below(f, s, w);
    if (job->nodes == 1) {
        nodes[0] = small_job(f, s, job, w);
        return nodes[0] >= 0 ? CL_OK : CL_ERR_INVALID;
    }
    /* The lowest switch whose subtree holds the job, and of those the one with
     * the fewest idle whole nodes (best fit), then the least loaded uplinks. */
    int top = -1;
    for (int t = 0; t < f->nswitches; t++) {
        if (w[t] < job->nodes)
            continue;
        if (top < 0 || f->sw[t].level < f->sw[top].level ||
            (f->sw[t].level == f->sw[top].level &&
             (w[t] < w[top] || (w[t] == w[top] && s->uplink_load[t] < s->uplink_load[top]))))
            top = t;
    }
    if (top < 0)
        return CL_ERR_INVALID;
    /* Inside it, the fewest leaves: the leaves with the most idle nodes first,
     * so the job's traffic crosses as few uplinks as it can. */
    int got = 0;
    char used[LAB19_MAX_SWITCHES] = {0};
    while (got < job->nodes) {
        int pick = -1;
        for (int l = 0; l < f->nswitches; l++) {
            if (f->sw[l].level != 1 || used[l] || w[l] == 0)
                continue;
            int under = 0;
            for (int t = l; t >= 0; t = f->sw[t].parent)
                under |= t == top;
            if (!under)
                continue;
            int need = job->nodes - got;
            /* a leaf that holds the rest exactly, tightly; else the fullest one */
            int fit_l = w[l] >= need, fit_p = pick >= 0 && w[pick] >= need;
            if (pick < 0 || (fit_l && !fit_p) || (fit_l && fit_p && w[l] < w[pick]) ||
                (!fit_l && !fit_p && w[l] > w[pick]))
                pick = l;
        }
        if (pick < 0)
            return CL_ERR_INVALID;
        used[pick] = 1;
        got += take(f, s, pick, job->nodes - got, nodes + got);
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab19) 3: the placement policy (handout section 3). Choose
    //   job->nodes nodes that fit the job: as few leaf switches as the job's
    //   size allows, and leave the idle GPUs and nodes as little scattered as
    //   you can for the jobs still to come.
    (void)f, (void)s, (void)job, (void)nodes;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
