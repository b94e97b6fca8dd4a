/* lab02.c: lab 02, discovering the NVLink/PCIe topology of a server.
 *
 * You turn the text of `nvidia-smi topo -m` into a link matrix (the model
 * of common/topo.h), and on a GPU machine ask the CUDA runtime the same
 * questions to compare. Read labs/lab02/README.md first; the TODOs below are
 * in the order of its sections. Build with `make lab02`, grade with
 * `./grade lab02`.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#ifdef CL_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include "lab02.h"

cl_result lab02_parse_code(const char *code, cl_link *out)
{
    /* BEGIN SOLUTION */
    static const struct {
        const char *code;
        cl_link_kind kind;
    } fixed[] = {{"X", CL_LINK_SELF},   {"PIX", CL_LINK_PIX},   {"PXB", CL_LINK_PXB},
                 {"PHB", CL_LINK_PHB},  {"NODE", CL_LINK_NODE}, {"SYS", CL_LINK_SYS}};
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
    // TODO(lab02) 1: legend codes.
    //   "X" is the device itself; "NV<n>" is a bond of n >= 1 NVLinks (nvlinks = n);
    //   "PIX", "PXB", "PHB", "NODE", "SYS" are PCIe/SMP paths (see the handout's table).
    //   Fill out->kind, out->nvlinks (0 unless NVLink) and out->code (the code as given).
    //   Anything else: cl_set_error("unknown link code '%s'", code); return CL_ERR_PARSE.
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
        if (*p == '\0' || *p == '\n')
            break;
        size_t len = code_length(p);
        if (len == 0 || len >= 8) {
            int word = (int)strcspn(p, " \t\n");
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
    // TODO(lab02) 2: split a row into codes.
    //   Skip spaces and tabs; at each position take the legend code that starts
    //   there ("NV" + digits, NODE, SYS, PIX, PXB, PHB, X) even when the next code
    //   follows without a space ("SYSSYS" is two cells). Stop after `want` codes
    //   and set *rest to what follows. Text that is no code: cl_set_error(...) and
    //   return -1.
    (void)text, (void)codes, (void)want, (void)rest;
    return -1;
    END SKELETON */
}

/* BEGIN SOLUTION */
enum column { COL_CPU, COL_NUMA, COL_GPU_NUMA };

typedef struct header {
    int ndev;
    char label[CL_TOPO_MAX_DEVICES][CL_TOPO_NAME_LEN];
    int ncols;
    enum column cols[4]; /* affinity columns after the devices, in order */
} header;

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

/* "  NIC0: mlx5_0" -> the NIC's real name. */
static void apply_legend_line(const char *line, cl_topo *t)
{
    char label[CL_TOPO_NAME_LEN], name[CL_TOPO_NAME_LEN];
    if (sscanf(line, " %31[A-Za-z0-9_]: %31s", label, name) != 2)
        return;
    for (int i = 0; i < t->ndevices; i++)
        if (strcmp(t->dev[i].label, label) == 0 && t->dev[i].kind == CL_DEV_NIC)
            snprintf(t->dev[i].name, sizeof t->dev[i].name, "%s", name);
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

cl_result lab02_parse_topo(FILE *f, const char *path, cl_topo *out)
{
    /* BEGIN SOLUTION */
    static header h; /* large; the parser is not re-entrant */
    char line[4096];
    int lineno = 0, rows = -1; /* -1: header not seen yet */
    memset(out, 0, sizeof *out);
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (line[strspn(line, " \t")] == '\0')
            continue;
        cl_result rc = CL_OK;
        if (rows < 0) {
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
        } else {
            apply_legend_line(line, out);
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
    // TODO(lab02) 3: the whole file.
    //   a) Skip text until the header line (it starts with GPU0). Its words are the
    //      device labels (split glued ones like "NIC7NIC8"), then the affinity
    //      columns "CPU Affinity", "NUMA Affinity", "GPU NUMA ID".
    //   b) One row per device, in header order: its label, one code per device
    //      (lab02_split_codes, lab02_parse_code; X on the diagonal only), then the
    //      affinity values: set numa_given when the NUMA column has a value;
    //      "N/A" means none (numa_node stays -1).
    //   c) After the matrix, "NIC0: mlx5_0" lines rename NIC0 to mlx5_0 (label stays).
    //   d) Every error: cl_set_error("%s:%d: reason", path, line) and CL_ERR_PARSE.
    (void)f, (void)path, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab02_probe_gpus(lab02_probe *out)
{
    /* BEGIN SOLUTION */
#ifdef CL_HAVE_CUDA
    memset(out, 0, sizeof *out);
    cudaError_t e = cudaGetDeviceCount(&out->ngpus);
    if (e != cudaSuccess || out->ngpus == 0) {
        cl_set_error("no usable GPU (%s)", e != cudaSuccess ? cudaGetErrorName(e) : "0 devices");
        return CL_ERR_UNSUPPORTED;
    }
    if (out->ngpus > CL_TOPO_MAX_DEVICES)
        out->ngpus = CL_TOPO_MAX_DEVICES;
    for (int i = 0; i < out->ngpus; i++) {
        char path[128];
        if (cudaDeviceGetPCIBusId(out->busid[i], sizeof out->busid[i], i) != cudaSuccess) {
            cl_set_error("cudaDeviceGetPCIBusId(%d) failed", i);
            return CL_ERR_BACKEND;
        }
        for (char *c = out->busid[i]; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        out->numa_node[i] = -1;
        snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/numa_node", out->busid[i]);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fscanf(f, "%d", &out->numa_node[i]) != 1)
                out->numa_node[i] = -1;
            fclose(f);
        }
        for (int j = 0; j < out->ngpus; j++) {
            if (i == j)
                continue;
            cudaDeviceCanAccessPeer(&out->can_access[i][j], i, j);
            cudaDeviceGetP2PAttribute(&out->perf_rank[i][j], cudaDevP2PAttrPerformanceRank, i, j);
        }
    }
    return CL_OK;
#else
    (void)out;
    cl_set_error("this build has no CUDA runtime");
    return CL_ERR_UNSUPPORTED;
#endif
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab02) 4: ask the CUDA runtime (GPU machines only).
    //   Inside #ifdef CL_HAVE_CUDA: cudaGetDeviceCount (an error or 0 devices:
    //   CL_ERR_UNSUPPORTED); per GPU cudaDeviceGetPCIBusId (lower-case it) and
    //   /sys/bus/pci/devices/<busid>/numa_node; per pair cudaDeviceCanAccessPeer and
    //   cudaDeviceGetP2PAttribute(..., cudaDevP2PAttrPerformanceRank, ...).
    //   Without CL_HAVE_CUDA return CL_ERR_UNSUPPORTED.
    (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
