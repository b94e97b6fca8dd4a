/* lab02.c: lab 02, discovering the NVLink/PCIe topology of a server.
 *
 * You turn the text of `nvidia-smi topo -m` into a link matrix (the model of
 * common/topo.h), answer the questions chapter 1 asks of a server before any
 * parallel layout is chosen (NVLink domains, paths across the SMP
 * interconnect, whether a TP group stays in one domain), and decide which NIC
 * each GPU uses. Read labs/lab02/README.md first; the TODOs below are in the
 * order of its sections. Build with `make lab02`, grade with `./grade lab02`.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab02.h"

cl_result lab02_parse_code(const char *code, cl_link *out)
{
    /* BEGIN SOLUTION */
    static const struct {
        const char *code;
        cl_link_kind kind;
    } fixed[] = {{"X", CL_LINK_SELF},  {"PIX", CL_LINK_PIX},   {"PXB", CL_LINK_PXB},
                 {"PHB", CL_LINK_PHB}, {"NODE", CL_LINK_NODE}, {"SYS", CL_LINK_SYS}};
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        if (strcmp(code, fixed[i].code) == 0) {
            out->kind = fixed[i].kind;
            strcpy(out->code, code);
            return CL_OK;
        }
    }
    if (strncmp(code, "NV", 2) == 0 && code[2] >= '1' && code[2] <= '9' && strlen(code) <= 5 &&
        strspn(code + 2, "0123456789") == strlen(code + 2)) {
        out->kind = CL_LINK_NVLINK;
        out->nvlinks = atoi(code + 2);
        strcpy(out->code, code);
        return CL_OK;
    }
    out->kind = CL_LINK_UNKNOWN;
    cl_set_error("unknown link code '%s'", code);
    return CL_ERR_PARSE;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab02) 1: classify one legend code (handout section 1): fill out->kind,
    //   out->nvlinks (0 unless NVLink) and out->code. Anything that is not a legend
    //   code: cl_set_error() naming it, and CL_ERR_PARSE.
    (void)code, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* BEGIN SOLUTION */
/* Length of the legend code at the start of s, or 0 if none starts there. */
static size_t code_length(const char *s)
{
    static const char *const fixed[] = {"NODE", "SYS", "PIX", "PXB", "PHB", "X"};
    if (s[0] == 'N' && s[1] == 'V' && isdigit((unsigned char)s[2]))
        return 2 + strspn(s + 2, "0123456789");
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (strncmp(s, fixed[i], strlen(fixed[i])) == 0)
            return strlen(fixed[i]);
    return 0;
}
/* END SOLUTION */
int lab02_split_codes(const char *text, char codes[][8], int want, const char **rest)
{
    /* BEGIN SOLUTION */
    int n = 0;
    const char *p = text;
    while (n < want) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0' || *p == '\n' || *p == '\r')
            break;
        size_t len = code_length(p);
        if (len == 0 || len >= 8) {
            int word = (int)strcspn(p, " \t\r\n");
            cl_set_error("unknown link code '%.*s'", word, p);
            return -1;
        }
        memcpy(codes[n], p, len);
        codes[n][len] = '\0';
        n++;
        p += len;
    }
    *rest = p;
    return n;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab02) 2: split a row's cells into legend codes (handout section 2), glued
    //   cells included. Return how many you found (at most `want`) and point *rest at
    //   the text after them; -1 (after cl_set_error) at text that is no code.
    (void)text, (void)codes, (void)want, (void)rest;
    return -1;
    END SKELETON */
}

/* BEGIN SOLUTION */
#define LINE_MAX_BYTES 4096

enum column { COL_CPU, COL_NUMA, COL_GPU_NUMA };

typedef struct header {
    int ndev;
    char label[CL_TOPO_MAX_DEVICES][CL_TOPO_NAME_LEN];
    int ncols;
    enum column cols[4]; /* affinity columns after the devices, in order */
} header;

/* Copy the line at *p into buf without its end of line and move *p past it.
 * Returns 1, 0 at the end of the text, -1 when the line does not fit. */
static int next_line(const char **p, char *buf, size_t n)
{
    const char *start = *p;
    if (*start == '\0')
        return 0;
    size_t len = strcspn(start, "\n");
    *p = start[len] ? start + len + 1 : start + len;
    if (len > 0 && start[len - 1] == '\r')
        len--;
    if (len >= n)
        return -1;
    memcpy(buf, start, len);
    buf[len] = '\0';
    return 1;
}

/* Split a header word that may hold several glued device names ("NIC7NIC8")
 * into names of the form letters, digits, optional "_digits". */
static cl_result add_device_names(header *h, const char *word)
{
    const char *p = word;
    while (*p) {
        const char *start = p;
        while (isalpha((unsigned char)*p))
            p++;
        while (isdigit((unsigned char)*p))
            p++;
        if (*p == '_' && isdigit((unsigned char)p[1]))
            for (p++; isdigit((unsigned char)*p); p++)
                ;
        if (p == start || (!isdigit((unsigned char)p[-1]) && *p)) {
            p = start + strlen(start); /* not a name we can split: keep the word whole */
        }
        if (h->ndev == CL_TOPO_MAX_DEVICES) {
            cl_set_error("more than %d devices", CL_TOPO_MAX_DEVICES);
            return CL_ERR_PARSE;
        }
        snprintf(h->label[h->ndev++], CL_TOPO_NAME_LEN, "%.*s", (int)(p - start), start);
    }
    return CL_OK;
}

static cl_result parse_header(char *line, header *h)
{
    char *words[LAB02_MAX_CELLS];
    int n = 0;
    for (char *w = strtok(line, " \t\n"); w && n < LAB02_MAX_CELLS; w = strtok(NULL, " \t\n"))
        words[n++] = w;
    memset(h, 0, sizeof *h);
    for (int i = 0; i < n; i++) {
        if (strcmp(words[i], "CPU") == 0 && i + 1 < n && strcmp(words[i + 1], "Affinity") == 0) {
            h->cols[h->ncols++] = COL_CPU;
            i++;
        } else if (strcmp(words[i], "NUMA") == 0 && i + 1 < n &&
                   strcmp(words[i + 1], "Affinity") == 0) {
            h->cols[h->ncols++] = COL_NUMA;
            i++;
        } else if (strcmp(words[i], "GPU") == 0 && i + 2 < n && strcmp(words[i + 1], "NUMA") == 0) {
            h->cols[h->ncols++] = COL_GPU_NUMA;
            i += 2;
        } else if (h->ncols > 0) {
            cl_set_error("unexpected column '%s' after the affinity columns", words[i]);
            return CL_ERR_PARSE;
        } else {
            CL_CHECK(add_device_names(h, words[i]));
        }
        if (h->ncols == 4) {
            cl_set_error("too many affinity columns");
            return CL_ERR_PARSE;
        }
    }
    return CL_OK;
}

/* Store the affinity values that follow a row's link cells. */
static cl_result parse_affinity(const header *h, char *rest, cl_device *d)
{
    int col = 0;
    for (char *w = strtok(rest, " \t\n"); w; w = strtok(NULL, " \t\n"), col++) {
        if (col >= h->ncols) {
            cl_set_error("unexpected text '%s' after the last column", w);
            return CL_ERR_PARSE;
        }
        if (h->cols[col] == COL_NUMA)
            d->numa_given = 1; /* a number, or N/A (JSON null) */
        if (strcmp(w, "N/A") == 0)
            continue;
        if (h->cols[col] == COL_CPU) {
            if (strspn(w, "0123456789,-") != strlen(w)) {
                cl_set_error("bad CPU affinity '%s'", w);
                return CL_ERR_PARSE;
            }
            snprintf(d->cpu_affinity, sizeof d->cpu_affinity, "%s", w);
        } else if (h->cols[col] == COL_NUMA) {
            char *end;
            long v = strtol(w, &end, 10);
            if (*end || v < 0) {
                cl_set_error("bad NUMA affinity '%s'", w);
                return CL_ERR_PARSE;
            }
            d->numa_node = (int)v;
        }
    }
    return CL_OK;
}

/* "  NIC0: mlx5_0" in the NIC legend: the NIC's real name. */
static cl_result apply_legend_line(const char *line, cl_topo *t)
{
    char label[CL_TOPO_NAME_LEN], name[CL_TOPO_NAME_LEN];
    if (sscanf(line, " %31[A-Za-z0-9_]: %31s", label, name) != 2)
        return CL_OK;
    for (int i = 0; i < t->ndevices; i++)
        if (strcmp(t->dev[i].label, label) == 0 && t->dev[i].kind == CL_DEV_NIC) {
            snprintf(t->dev[i].name, sizeof t->dev[i].name, "%s", name);
            return CL_OK;
        }
    cl_set_error("the NIC legend names '%s', which is no NIC of the matrix", label);
    return CL_ERR_PARSE;
}

static int starts_header(const char *line)
{
    while (*line == ' ' || *line == '\t')
        line++;
    return strncmp(line, "GPU0", 4) == 0;
}

static cl_result parse_row(const header *h, char *line, int row, cl_topo *t)
{
    char codes[CL_TOPO_MAX_DEVICES][8];
    char *p = line + strspn(line, " \t");
    size_t len = strcspn(p, " \t\n");
    if (len != strlen(h->label[row]) || strncmp(p, h->label[row], len) != 0) {
        cl_set_error("row '%.*s' where '%s' was expected", (int)len, p, h->label[row]);
        return CL_ERR_PARSE;
    }
    const char *rest;
    int n = lab02_split_codes(p + len, codes, h->ndev, &rest);
    if (n < 0)
        return CL_ERR_PARSE;
    if (n != h->ndev) {
        cl_set_error("row %s has %d link cells, expected %d", h->label[row], n, h->ndev);
        return CL_ERR_PARSE;
    }
    for (int j = 0; j < n; j++) {
        cl_link *l = &t->link[row][j];
        CL_CHECK(lab02_parse_code(codes[j], l));
        if ((l->kind == CL_LINK_SELF) != (j == row)) {
            cl_set_error("%s to %s is '%s': X belongs on the diagonal only", h->label[row],
                         h->label[j], codes[j]);
            return CL_ERR_PARSE;
        }
    }
    return parse_affinity(h, (char *)rest, &t->dev[row]);
}
/* END SOLUTION */
cl_result lab02_parse_topo(const char *text, const char *path, cl_topo *out)
{
    /* BEGIN SOLUTION */
    static header h; /* large; the parser is not re-entrant */
    static char line[LINE_MAX_BYTES];
    int lineno = 0, rows = -1, legend = 0; /* rows -1: header not seen yet */
    const char *p = text;
    memset(out, 0, sizeof *out);
    for (;;) {
        int got = next_line(&p, line, sizeof line);
        if (got == 0)
            break;
        lineno++;
        cl_result rc = CL_OK;
        if (got < 0) {
            cl_set_error("line longer than %d bytes", LINE_MAX_BYTES - 1);
            rc = CL_ERR_PARSE;
        } else if (line[strspn(line, " \t")] == '\0') {
            continue;
        } else if (rows < 0) {
            if (!starts_header(line))
                continue; /* text before the matrix */
            rc = parse_header(line, &h);
            if (rc == CL_OK) {
                out->ndevices = h.ndev;
                for (int i = 0; i < h.ndev; i++) {
                    cl_device *d = &out->dev[i];
                    strcpy(d->label, h.label[i]);
                    strcpy(d->name, h.label[i]);
                    d->kind = strncmp(d->label, "GPU", 3) == 0 ? CL_DEV_GPU : CL_DEV_NIC;
                    d->numa_node = -1;
                }
                rows = 0;
            }
        } else if (rows < h.ndev) {
            if (strstr(line, "Legend")) {
                cl_set_error("matrix ends after %d rows, expected %d", rows, h.ndev);
                rc = CL_ERR_PARSE;
            } else {
                rc = parse_row(&h, line, rows, out);
                rows++;
            }
        } else if (strstr(line, "NIC Legend")) {
            legend = 1;
        } else if (legend) {
            rc = apply_legend_line(line, out);
        }
        if (rc != CL_OK) {
            char why[400];
            snprintf(why, sizeof why, "%s", cl_last_error());
            cl_set_error("%s:%d: %s", path, lineno, why);
            return CL_ERR_PARSE;
        }
    }
    if (rows < 0) {
        cl_set_error("%s:%d: no matrix header (a line starting with GPU0)", path, lineno);
        return CL_ERR_PARSE;
    }
    if (rows < h.ndev) {
        cl_set_error("%s:%d: matrix ends after %d rows, expected %d", path, lineno, rows, h.ndev);
        return CL_ERR_PARSE;
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab02) 3: the whole output of `nvidia-smi topo -m` (handout section 3): the
    //   header, one row per device, the affinity columns, the NIC legend. Every error:
    //   cl_set_error("%s:%d: reason", path, line) and CL_ERR_PARSE.
    (void)text, (void)path, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* BEGIN SOLUTION */
static int is_gpu(const cl_topo *t, int i) { return t->dev[i].kind == CL_DEV_GPU; }

static int nvlinked(const cl_topo *t, int i, int j)
{
    return t->link[i][j].kind == CL_LINK_NVLINK && t->link[j][i].kind == CL_LINK_NVLINK;
}

/* The largest clique of cand[k..n) joined to every member of cur (include-first
 * search: among cliques of one size, the first found has the smallest members). */
static void grow(const cl_topo *t, const int *cand, int n, int k, int *cur, int ncur, int *best,
                 int *nbest)
{
    if (ncur > *nbest) {
        memcpy(best, cur, (size_t)ncur * sizeof *cur);
        *nbest = ncur;
    }
    for (int i = k; i < n && ncur + (n - i) > *nbest; i++) {
        int ok = 1;
        for (int m = 0; m < ncur && ok; m++)
            ok = nvlinked(t, cur[m], cand[i]);
        if (ok) {
            cur[ncur] = cand[i];
            grow(t, cand, n, i + 1, cur, ncur + 1, best, nbest);
        }
    }
}
/* END SOLUTION */
int lab02_nvlink_domains(const cl_topo *t, int domain[CL_TOPO_MAX_DEVICES])
{
    /* BEGIN SOLUTION */
    int ndomains = 0;
    for (int i = 0; i < t->ndevices; i++)
        domain[i] = -1;
    for (int i = 0; i < t->ndevices; i++) {
        if (!is_gpu(t, i) || domain[i] >= 0)
            continue;
        int cand[CL_TOPO_MAX_DEVICES], n = 0, cur[CL_TOPO_MAX_DEVICES], best[CL_TOPO_MAX_DEVICES];
        for (int j = i + 1; j < t->ndevices; j++)
            if (is_gpu(t, j) && domain[j] < 0 && nvlinked(t, i, j))
                cand[n++] = j;
        int nbest = 0;
        cur[0] = i;
        grow(t, cand, n, 0, cur, 1, best, &nbest);
        for (int m = 0; m < nbest; m++)
            domain[best[m]] = ndomains;
        ndomains++;
    }
    return ndomains;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab02) 4: the NVLink domains (handout section 4): domain[i] for every
    //   device, -1 for devices that are no GPU; return how many domains there are.
    (void)t, (void)domain;
    return -1;
    END SKELETON */
}

int lab02_sys_pairs(const cl_topo *t)
{
    /* BEGIN SOLUTION */
    int n = 0;
    for (int i = 0; i < t->ndevices; i++)
        for (int j = i + 1; j < t->ndevices; j++)
            n += is_gpu(t, i) && is_gpu(t, j) && t->link[i][j].kind == CL_LINK_SYS;
    return n;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab02) 5a: count the GPU pairs whose connection crosses SYS (section 5).
    (void)t;
    return -1;
    END SKELETON */
}

int lab02_group_domains(const cl_topo *t, const int domain[CL_TOPO_MAX_DEVICES], const int *group,
                        int n)
{
    /* BEGIN SOLUTION */
    (void)t;
    int seen[CL_TOPO_MAX_DEVICES] = {0}, count = 0;
    for (int k = 0; k < n; k++) {
        int d = domain[group[k]];
        if (d < 0 || d >= CL_TOPO_MAX_DEVICES)
            return -1;
        count += !seen[d];
        seen[d] = 1;
    }
    return count;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab02) 5b: how many NVLink domains the GPUs of group span (section 5).
    (void)t, (void)domain, (void)group, (void)n;
    return -1;
    END SKELETON */
}

/* BEGIN SOLUTION */
/* Rank of a GPU-NIC path: smaller is nearer. */
static int distance(cl_link_kind k)
{
    switch (k) {
    case CL_LINK_NVLINK: return 0;
    case CL_LINK_PIX: return 1;
    case CL_LINK_PXB: return 2;
    case CL_LINK_PHB: return 3;
    case CL_LINK_NODE: return 4;
    case CL_LINK_SYS: return 5;
    default: return 6;
    }
}
/* END SOLUTION */
cl_result lab02_assign_nics(const cl_topo *t, int nic[CL_TOPO_MAX_DEVICES])
{
    /* BEGIN SOLUTION */
    /* GPUs with the fewest nearest NICs choose first; each takes the least used
     * of its nearest NICs (lowest index on a tie). */
    int nearest[CL_TOPO_MAX_DEVICES][CL_TOPO_MAX_DEVICES], count[CL_TOPO_MAX_DEVICES] = {0};
    int load[CL_TOPO_MAX_DEVICES] = {0}, order[CL_TOPO_MAX_DEVICES], ngpus = 0;
    for (int g = 0; g < t->ndevices; g++) {
        nic[g] = -1;
        if (!is_gpu(t, g))
            continue;
        int best = 7;
        for (int j = 0; j < t->ndevices; j++)
            if (t->dev[j].kind == CL_DEV_NIC && distance(t->link[g][j].kind) < best)
                best = distance(t->link[g][j].kind);
        for (int j = 0; j < t->ndevices; j++)
            if (t->dev[j].kind == CL_DEV_NIC && distance(t->link[g][j].kind) == best)
                nearest[g][count[g]++] = j;
        if (count[g])
            order[ngpus++] = g;
    }
    for (int a = 1; a < ngpus; a++) /* stable insertion sort by count */
        for (int b = a; b > 0 && count[order[b]] < count[order[b - 1]]; b--) {
            int x = order[b];
            order[b] = order[b - 1];
            order[b - 1] = x;
        }
    for (int a = 0; a < ngpus; a++) {
        int g = order[a], pick = nearest[g][0];
        for (int k = 1; k < count[g]; k++)
            if (load[nearest[g][k]] < load[pick])
                pick = nearest[g][k];
        nic[g] = pick;
        load[pick]++;
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab02) 6: your decision (handout section 6): for every GPU one of its
    //   nearest NICs, spread so that the busiest NIC serves as few GPUs as possible.
    (void)t, (void)nic;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
