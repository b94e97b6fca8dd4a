/* topo_smi.c: parser for the text printed by `nvidia-smi topo -m`.
 *
 * Layout accepted (any driver era seen in public posts):
 *
 *   <header>   labels of the N devices, then optional affinity columns
 *              "CPU Affinity", "NUMA Affinity", "GPU NUMA ID"
 *   <N rows>   name, N legend codes, then that row's affinity values
 *   blank line or "Legend:" ends the matrix; the legend text is ignored,
 *   except the "NIC Legend:" entries ("NIC0: mlx5_0") that rename devices.
 *
 * Decisions, for inputs the format leaves open:
 * - Separators are any mix of spaces and tabs. Cells are found by matching
 *   legend codes, not by splitting on whitespace, so cells run together in a
 *   posted matrix ("SYSSYS", "PIXSYS") are still read; header labels run
 *   together ("NIC7NIC8") are matched against the row names in order.
 * - The matrix must be square (header columns == rows, in the same order),
 *   each row must have exactly N cells, "X" exactly on the diagonal, and
 *   every cell a known code (X, NV#, PIX, PXB, PHB, NODE, SYS).
 * - Symmetry is NOT required: the matrix is stored as printed. Real output
 *   can differ between (i,j) and (j,i) for NIC rows, and checking it would
 *   reject faithful recordings.
 * - A row with fewer affinity values than affinity columns fills the
 *   rightmost columns: nvidia-smi prints an empty CPU Affinity (two tabs)
 *   when it has no value, and whitespace splitting loses empty fields.
 *   "N/A" CPU affinity counts as no value; "N/A" NUMA affinity is stored as
 *   numa_node -1 with numa_given 1 (JSON null), and so is a list of NUMA nodes
 *   ("0-1": a GPU near two nodes, as nvidia-smi prints it). GPU NUMA ID is checked,
 *   not kept.
 * - Lines before the header must be blank. Labels GPU<n> are GPUs; every
 *   other label (NIC<n>, mlx5_2, ...) is a NIC.
 */
#include "topo.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

enum { AFF_CPU, AFF_NUMA, AFF_GPU_NUMA, AFF_KINDS };

static const char *const aff_names[AFF_KINDS] = {"CPU Affinity", "NUMA Affinity", "GPU NUMA ID"};

typedef struct smi_line {
    char *text;
    int lineno;
} smi_line;

typedef struct smi_lines {
    smi_line *v;
    int n, cap;
} smi_lines;

static void lines_free(smi_lines *ls)
{
    for (int i = 0; i < ls->n; i++)
        free(ls->v[i].text);
    free(ls->v);
}

/* Read every line of f, without its "\n" or "\r\n". */
static cl_result lines_read(FILE *f, const char *path, smi_lines *ls)
{
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0;
    while ((len = getline(&buf, &cap, f)) >= 0) {
        lineno++;
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
            buf[--len] = '\0';
        if (ls->n == ls->cap) {
            int ncap = ls->cap ? 2 * ls->cap : 64;
            smi_line *nv = realloc(ls->v, (size_t)ncap * sizeof(*nv));
            if (nv == NULL) {
                free(buf);
                return CL_ERR_NOMEM;
            }
            ls->v = nv;
            ls->cap = ncap;
        }
        ls->v[ls->n].text = strdup(buf);
        if (ls->v[ls->n].text == NULL) {
            free(buf);
            return CL_ERR_NOMEM;
        }
        ls->v[ls->n++].lineno = lineno;
    }
    free(buf);
    if (ferror(f)) {
        cl_set_error("%s: read error", path);
        return CL_ERR_IO;
    }
    return CL_OK;
}

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

static int is_blank(const char *s) { return *skip_ws(s) == '\0'; }

/* Length of the legend code at p (0 if none); the code is copied to code[8]. */
static size_t match_code(const char *p, char code[8])
{
    static const char *const words[] = {"NODE", "PIX", "PXB", "PHB", "SYS"};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        size_t n = strlen(words[i]);
        if (strncmp(p, words[i], n) == 0) {
            memcpy(code, words[i], n + 1);
            return n;
        }
    }
    if (p[0] == 'N' && p[1] == 'V' && isdigit((unsigned char)p[2])) {
        size_t n = 2;
        while (isdigit((unsigned char)p[n]) && n < 5)
            n++;
        memcpy(code, p, n);
        code[n] = '\0';
        return n;
    }
    if (p[0] == 'X') {
        strcpy(code, "X");
        return 1;
    }
    return 0;
}

/* Copy the whitespace-delimited token at p into out[cap]; returns its length. */
static size_t token(const char *p, char *out, size_t cap)
{
    size_t n = strcspn(p, " \t");
    size_t k = n < cap - 1 ? n : cap - 1;
    memcpy(out, p, k);
    out[k] = '\0';
    return n;
}

/* Find the first affinity column name in the header; returns its offset or -1. */
static long first_affinity(const char *h)
{
    long best = -1;
    for (int k = 0; k < AFF_KINDS; k++) {
        const char *q = strstr(h, aff_names[k]);
        if (q != NULL && (best < 0 || q - h < best))
            best = q - h;
    }
    return best;
}

static int is_gpu_label(const char *s)
{
    return strncmp(s, "GPU", 3) == 0 && s[3] != '\0' &&
           strspn(s + 3, "0123456789") == strlen(s + 3);
}

static int valid_cpulist(const char *s)
{
    return *s != '\0' && strspn(s, "0123456789,-") == strlen(s);
}

static int valid_int(const char *s)
{
    return *s != '\0' && strspn(s, "0123456789") == strlen(s) && strlen(s) < 9;
}

/* Parse the matrix part once the header (line hdr) and row lines are known. */
static cl_result parse_rows(const char *path, const smi_line *hdr, const smi_line *rows, int n,
                            cl_topo *out)
{
    const char *h = hdr->text;
    long aff_at = first_affinity(h);
    size_t labels_len = aff_at < 0 ? strlen(h) : (size_t)aff_at;

    /* Affinity columns, in header order. */
    int aff[AFF_KINDS], naff = 0;
    if (aff_at >= 0) {
        const char *p = h + aff_at;
        for (;;) {
            p = skip_ws(p);
            if (*p == '\0')
                break;
            int k;
            for (k = 0; k < AFF_KINDS; k++)
                if (strncmp(p, aff_names[k], strlen(aff_names[k])) == 0)
                    break;
            if (k == AFF_KINDS || naff == AFF_KINDS) {
                char tok[32];
                token(p, tok, sizeof(tok));
                cl_set_error("%s:%d: unknown header column '%s'", path, hdr->lineno, tok);
                return CL_ERR_PARSE;
            }
            aff[naff++] = k;
            p += strlen(aff_names[k]);
        }
    }

    /* Row names. */
    for (int i = 0; i < n; i++) {
        cl_device *d = &out->dev[i];
        const char *p = skip_ws(rows[i].text);
        size_t len = strcspn(p, " \t");
        if (len >= CL_TOPO_NAME_LEN) {
            cl_set_error("%s:%d: device name longer than %d characters", path, rows[i].lineno,
                         CL_TOPO_NAME_LEN - 1);
            return CL_ERR_PARSE;
        }
        memcpy(d->label, p, len);
        d->label[len] = '\0';
        strcpy(d->name, d->label);
        d->kind = is_gpu_label(d->label) ? CL_DEV_GPU : CL_DEV_NIC;
        d->numa_node = -1;
        for (int j = 0; j < i; j++) {
            if (strcmp(out->dev[j].label, d->label) == 0) {
                cl_set_error("%s:%d: row '%s' appears twice", path, rows[i].lineno, d->label);
                return CL_ERR_PARSE;
            }
        }
    }

    /* The header labels must be the row names in order (spacing losses allowed). */
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        while (at < labels_len && (h[at] == ' ' || h[at] == '\t'))
            at++;
        const char *name = out->dev[i].label;
        size_t len = strlen(name);
        int ok = at + len <= labels_len && strncmp(h + at, name, len) == 0;
        if (ok && at + len < labels_len && h[at + len] != ' ' && h[at + len] != '\t') {
            /* Run-together labels: the next row name must start right here. */
            ok = i + 1 < n &&
                 strncmp(h + at + len, out->dev[i + 1].label, strlen(out->dev[i + 1].label)) == 0;
        }
        if (!ok) {
            if (at >= labels_len)
                cl_set_error("%s:%d: row '%s' has no column in the header (%d rows, matrix not "
                             "square)",
                             path, rows[i].lineno, name, n);
            else
                cl_set_error("%s:%d: row '%s' does not match header column %d", path,
                             rows[i].lineno, name, i);
            return CL_ERR_PARSE;
        }
        at += len;
    }
    while (at < labels_len && (h[at] == ' ' || h[at] == '\t'))
        at++;
    if (at < labels_len) {
        char tok[32];
        token(h + at, tok, sizeof(tok));
        cl_set_error("%s:%d: header has more columns than the %d rows (matrix not square) at "
                     "'%s'",
                     path, hdr->lineno, n, tok);
        return CL_ERR_PARSE;
    }

    /* Cells and affinity values. */
    for (int i = 0; i < n; i++) {
        const smi_line *r = &rows[i];
        cl_device *d = &out->dev[i];
        const char *p = skip_ws(r->text) + strlen(d->label);
        for (int j = 0; j < n; j++) {
            char code[8], tok[32];
            p = skip_ws(p);
            size_t len = *p ? match_code(p, code) : 0;
            if (len == 0) {
                if (*p == '\0' || isdigit((unsigned char)*p) || strncmp(p, "N/A", 3) == 0)
                    cl_set_error("%s:%d: row '%s' has %d link cells, expected %d", path, r->lineno,
                                 d->label, j, n);
                else {
                    token(p, tok, sizeof(tok));
                    cl_set_error("%s:%d: unknown link code '%s' in row '%s'", path, r->lineno, tok,
                                 d->label);
                }
                return CL_ERR_PARSE;
            }
            if (cl_link_from_code(code, &out->link[i][j]) != CL_OK) {
                cl_set_error("%s:%d: unknown link code '%s' in row '%s'", path, r->lineno, code,
                             d->label);
                return CL_ERR_PARSE;
            }
            if ((out->link[i][j].kind == CL_LINK_SELF) != (i == j)) {
                cl_set_error("%s:%d: row '%s' column %d is '%s'; 'X' belongs on the diagonal "
                             "only",
                             path, r->lineno, d->label, j, code);
                return CL_ERR_PARSE;
            }
            p += len;
        }
        p = skip_ws(p);
        char code[8];
        if (*p && match_code(p, code) > 0) {
            cl_set_error("%s:%d: row '%s' has more than %d link cells", path, r->lineno, d->label,
                         n);
            return CL_ERR_PARSE;
        }

        char vals[AFF_KINDS][CL_TOPO_CPUSET_LEN];
        int m = 0;
        while (*p) {
            if (m == naff) {
                char tok[32];
                token(p, tok, sizeof(tok));
                cl_set_error("%s:%d: row '%s': unexpected '%s' after the %d affinity values", path,
                             r->lineno, d->label, tok, naff);
                return CL_ERR_PARSE;
            }
            if (token(p, vals[m], sizeof(vals[m])) >= sizeof(vals[m])) {
                cl_set_error("%s:%d: affinity value too long", path, r->lineno);
                return CL_ERR_PARSE;
            }
            p = skip_ws(p + strlen(vals[m]));
            m++;
        }
        for (int v = 0; v < m; v++) {
            int col = aff[naff - m + v]; /* right-aligned, see the decisions above */
            const char *s = vals[v];
            int na = strcmp(s, "N/A") == 0;
            if (col == AFF_CPU) {
                if (!na && !valid_cpulist(s)) {
                    cl_set_error("%s:%d: bad CPU Affinity '%s' in row '%s'", path, r->lineno, s,
                                 d->label);
                    return CL_ERR_PARSE;
                }
                if (!na)
                    strcpy(d->cpu_affinity, s);
            } else if (!na && !valid_int(s) && !(col == AFF_NUMA && valid_cpulist(s))) {
                cl_set_error("%s:%d: bad %s '%s' in row '%s'", path, r->lineno, aff_names[col], s,
                             d->label);
                return CL_ERR_PARSE;
            } else if (col == AFF_NUMA) {
                d->numa_given = 1;
                d->numa_node = na || !valid_int(s) ? -1 : atoi(s); /* "0-1": no one node */
            }
        }
    }
    return CL_OK;
}

/* Apply "NIC Legend:" entries found in lines[from..]. */
static cl_result apply_nic_legend(const char *path, const smi_lines *ls, int from, cl_topo *out)
{
    int in_legend = 0;
    for (int i = from; i < ls->n; i++) {
        const char *p = skip_ws(ls->v[i].text);
        if (*p == '\0')
            continue;
        if (strncmp(p, "NIC Legend:", 11) == 0) {
            in_legend = 1;
            continue;
        }
        if (!in_legend)
            continue;
        char label[CL_TOPO_NAME_LEN + 8], name[CL_TOPO_NAME_LEN + 8];
        const char *colon = strchr(p, ':');
        size_t llen = colon ? (size_t)(colon - p) : 0;
        if (colon == NULL || llen == 0 || llen >= sizeof(label) || memchr(p, ' ', llen) ||
            memchr(p, '\t', llen)) {
            in_legend = 0; /* the legend has ended */
            continue;
        }
        memcpy(label, p, llen);
        label[llen] = '\0';
        const char *q = skip_ws(colon + 1);
        size_t nlen = token(q, name, sizeof(name));
        if (nlen == 0 || *skip_ws(q + nlen) != '\0') {
            cl_set_error("%s:%d: NIC legend entry '%s' needs one device name", path,
                         ls->v[i].lineno, label);
            return CL_ERR_PARSE;
        }
        if (nlen >= CL_TOPO_NAME_LEN) {
            cl_set_error("%s:%d: device name longer than %d characters", path, ls->v[i].lineno,
                         CL_TOPO_NAME_LEN - 1);
            return CL_ERR_PARSE;
        }
        int d;
        for (d = 0; d < out->ndevices; d++)
            if (strcmp(out->dev[d].label, label) == 0)
                break;
        if (d == out->ndevices) {
            cl_set_error("%s:%d: NIC legend names '%s', which is not a column of the matrix", path,
                         ls->v[i].lineno, label);
            return CL_ERR_PARSE;
        }
        strcpy(out->dev[d].name, name);
    }
    return CL_OK;
}

cl_result cl_topo_parse_smi(FILE *f, const char *path, cl_topo *out)
{
    if (f == NULL || out == NULL)
        return CL_ERR_INVALID;
    if (path == NULL)
        path = "<input>";
    memset(out, 0, sizeof(*out));
    smi_lines ls = {0};
    cl_result rc = lines_read(f, path, &ls);
    if (rc != CL_OK)
        goto done;

    int hdr = 0;
    while (hdr < ls.n && is_blank(ls.v[hdr].text))
        hdr++;
    if (hdr == ls.n) {
        cl_set_error("%s:%d: no topology matrix (empty file)", path, ls.n > 0 ? ls.n : 1);
        rc = CL_ERR_PARSE;
        goto done;
    }
    const char *htext = skip_ws(ls.v[hdr].text);
    if (strncmp(htext, "GPU", 3) != 0) {
        char tok[32];
        token(htext, tok, sizeof(tok));
        cl_set_error("%s:%d: expected the header line starting with GPU0, found '%s'", path,
                     ls.v[hdr].lineno, tok);
        rc = CL_ERR_PARSE;
        goto done;
    }
    int first = hdr + 1, end = first;
    while (end < ls.n && !is_blank(ls.v[end].text) &&
           strncmp(skip_ws(ls.v[end].text), "Legend", 6) != 0)
        end++;
    int n = end - first;
    if (n == 0) {
        cl_set_error("%s:%d: header without matrix rows", path, ls.v[hdr].lineno);
        rc = CL_ERR_PARSE;
        goto done;
    }
    if (n > CL_TOPO_MAX_DEVICES) {
        cl_set_error("%s:%d: more than %d devices", path, ls.v[first + CL_TOPO_MAX_DEVICES].lineno,
                     CL_TOPO_MAX_DEVICES);
        rc = CL_ERR_PARSE;
        goto done;
    }
    out->ndevices = n;
    rc = parse_rows(path, &ls.v[hdr], &ls.v[first], n, out);
    if (rc == CL_OK)
        rc = apply_nic_legend(path, &ls, end, out);
done:
    lines_free(&ls);
    if (rc != CL_OK)
        out->ndevices = 0;
    return rc;
}
