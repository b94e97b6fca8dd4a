/* driver.c: lab 02's plug-in: legend codes, row splitting, the parser, the analysis, the probe.
 *
 *   lab02 codes   code=NV12                        how your code classifies a legend code
 *   lab02 split   text=%09NV1%09SYS want=2          your split of one row (text percent-encoded)
 *   lab02 parse   file=datasets/topologies/dgx1-v100.topo.txt       your parse, one row per device
 *   lab02 analyse file=datasets/topologies/dgx1-v100.topo.txt group=0,1,2,3
 *                                                  your domains, SYS pairs, group and NICs
 *   lab02 probe   smi=FILE                         this machine's CUDA runtime vs your parse of
 *                                                  FILE (the output of `nvidia-smi topo -m`)
 * Every mode also reads --cases FILE, one case per line.
 *
 * The student's program opens no file: the harness reads each file and shares
 * its text. The analysis gets the library's parse of the file (so a parser bug
 * costs the parser's points only); the probe uses the student's own parse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boundary/arena.h"
#include "harness/harness.h"
#include "lab02.h"

#define MAX_TEXT (1 << 20)

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct code_args {
    char code[32];
    cl_link out;
} code_args;

typedef struct split_args {
    char text[2048];
    int want;
    char codes[LAB02_MAX_CELLS][8]; /* out */
    int count;                      /* out */
    long rest;                      /* out: offset of *rest in text, -1 outside it */
} split_args;

typedef struct parse_args {
    const char *text, *path; /* shared by the harness */
    cl_topo *out;            /* shared, zeroed; the student fills it */
} parse_args;

typedef struct analyse_args {
    const cl_topo *topo; /* shared */
    int group[CL_TOPO_MAX_DEVICES], ngroup;
    int ndomains, domain[CL_TOPO_MAX_DEVICES]; /* out */
    int sys_pairs, group_domains;              /* out */
    int nic[CL_TOPO_MAX_DEVICES];              /* out */
    cl_result nic_status;                      /* out */
    char nic_error[200];                       /* out */
} analyse_args;

#ifdef CL_STUDENT_SIDE

static cl_result code(cl_comm *c, void *args)
{
    (void)c;
    code_args *a = args;
    return lab02_parse_code(a->code, &a->out);
}

static cl_result split(cl_comm *c, void *args)
{
    (void)c;
    split_args *a = args;
    const char *rest = NULL;
    a->count = lab02_split_codes(a->text, a->codes, a->want, &rest);
    a->rest = rest && rest >= a->text && rest <= a->text + strlen(a->text) ? rest - a->text : -1;
    return CL_OK;
}

static cl_result parse(cl_comm *c, void *args)
{
    (void)c;
    parse_args *a = args;
    return lab02_parse_topo(a->text, a->path, a->out);
}

static cl_result analyse(cl_comm *c, void *args)
{
    (void)c;
    analyse_args *a = args;
    a->ndomains = lab02_nvlink_domains(a->topo, a->domain);
    a->sys_pairs = lab02_sys_pairs(a->topo);
    a->group_domains =
        a->ndomains >= 0 ? lab02_group_domains(a->topo, a->domain, a->group, a->ngroup) : -1;
    cl_clear_error();
    a->nic_status = lab02_assign_nics(a->topo, a->nic);
    snprintf(a->nic_error, sizeof a->nic_error, "%s", cl_last_error());
    return CL_OK;
}

CL_STUDENT_ENTRIES({"code", code}, {"split", split}, {"parse", parse}, {"analyse", analyse});

#else

#ifdef CL_HAVE_CUDA
#include <cuda_runtime.h>
#endif

/* --- reading what the cases name --------------------------------------------------------- */

/* The whole of file `path` in *text (NUL-terminated, to free()); a reason otherwise. */
static cl_result read_text(const char *path, char **text)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        cl_set_error("%s: cannot open", path);
        return CL_ERR_IO;
    }
    char *buf = malloc(MAX_TEXT + 1);
    size_t n = buf ? fread(buf, 1, MAX_TEXT + 1, f) : 0;
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad || n > MAX_TEXT) {
        free(buf);
        cl_set_error("%s: %s", path,
                     !buf  ? "out of memory"
                     : bad ? "read error"
                           : "larger than 1 MiB");
        return bad ? CL_ERR_IO : CL_ERR_INVALID;
    }
    buf[n] = '\0';
    *text = buf;
    return CL_OK;
}

/* "%09NV1%20SYS" -> "\tNV1 SYS" into out (n bytes); a reason for bad escapes. */
static cl_result percent_decode(const char *in, char *out, size_t n)
{
    size_t k = 0;
    for (const char *p = in; *p; p++) {
        int ch = (unsigned char)*p;
        if (ch == '%') {
            unsigned v;
            if (sscanf(p + 1, "%2x", &v) != 1 || !p[1] || !p[2]) {
                cl_set_error("text: bad escape at '%s'", p);
                return CL_ERR_INVALID;
            }
            ch = (int)v;
            p += 2;
        }
        if (k + 1 >= n || ch == 0) {
            cl_set_error("text: longer than %zu bytes, or a NUL", n - 1);
            return CL_ERR_INVALID;
        }
        out[k++] = (char)ch;
    }
    out[k] = '\0';
    return CL_OK;
}

/* --- 1 and 2: codes and rows --------------------------------------------------------------- */

static cl_result codes_case(cl_case *c)
{
    const char *text;
    CL_CHECK(cl_case_str(c, "code", &text));
    code_args a;
    memset(&a, 0, sizeof a);
    snprintf(a.code, sizeof a.code, "%s", text);
    cl_row *row = cl_case_row(c);
    cl_col_str(row, "code", a.code);
    cl_result rc = cl_case_call(c, "code", &a, sizeof a);
    a.out.code[sizeof a.out.code - 1] = '\0';
    int ok = rc == CL_OK;
    cl_col_str(row, "kind", ok ? cl_link_kind_name(a.out.kind) : "");
    cl_col_int(row, "nvlinks", ok ? a.out.nvlinks : 0);
    cl_col_str(row, "stored", ok ? a.out.code : "");
    return rc;
}

static cl_result split_case(cl_case *c)
{
    const char *text;
    long long want;
    split_args a;
    memset(&a, 0, sizeof a);
    CL_CHECK(cl_case_str(c, "text", &text));
    CL_CHECK(cl_case_int(c, "want", &want));
    CL_CHECK(percent_decode(text, a.text, sizeof a.text));
    if (want < 0 || want > LAB02_MAX_CELLS) {
        cl_set_error("want must be 0..%d", LAB02_MAX_CELLS);
        return CL_ERR_INVALID;
    }
    a.want = (int)want;
    cl_result rc = cl_case_call(c, "split", &a, sizeof a);
    char joined[LAB02_MAX_CELLS * 9] = "";
    for (int i = 0; rc == CL_OK && i < a.count && i < a.want; i++) {
        a.codes[i][7] = '\0';
        strcat(joined, i ? " " : "");
        strcat(joined, a.codes[i]);
    }
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "count", a.count);
    cl_col_str(row, "codes", joined);
    cl_col_int(row, "rest", a.count >= 0 ? a.rest : -1);
    return rc;
}

/* --- 3: the parser -------------------------------------------------------------------------- */

static int valid_kind(int k) { return k >= CL_LINK_SELF && k <= CL_LINK_UNKNOWN; }

/* Make what the student's program wrote safe to read: bounds and terminators.
 * Returns 0, or -1 when the device count is out of range. */
static int sanitize(cl_topo *t)
{
    if (t->ndevices < 0 || t->ndevices > CL_TOPO_MAX_DEVICES)
        return -1;
    for (int i = 0; i < t->ndevices; i++) {
        cl_device *d = &t->dev[i];
        d->name[sizeof d->name - 1] = d->label[sizeof d->label - 1] = '\0';
        d->cpu_affinity[sizeof d->cpu_affinity - 1] = '\0';
        for (int j = 0; j < t->ndevices; j++)
            t->link[i][j].code[sizeof t->link[i][j].code - 1] = '\0';
    }
    return 0;
}

/* Cells of row i whose kind and NVLink count do not follow from their code. */
static int inconsistent_cells(const cl_topo *t, int i)
{
    int bad = 0;
    for (int j = 0; j < t->ndevices; j++) {
        const cl_link *l = &t->link[i][j];
        cl_link want;
        if (cl_link_from_code(l->code, &want) != CL_OK || !valid_kind(l->kind) ||
            l->kind != want.kind || l->nvlinks != want.nvlinks)
            bad++;
    }
    cl_clear_error();
    return bad;
}

static const char *device_kind(cl_device_kind k)
{
    return k == CL_DEV_GPU ? "gpu" : k == CL_DEV_NIC ? "nic" : "other";
}

/* The student's parse of text into *t (a copy in the harness's memory). */
static cl_result student_parse(cl_case *c, const char *text, const char *path, cl_topo *t)
{
    parse_args a = {.text = cl_share(text, strlen(text) + 1),
                    .path = cl_share(path, strlen(path) + 1)};
    void *out = NULL;
    cl_result rc = a.text && a.path ? cl_host_alloc(sizeof *t, &out) : CL_ERR_NOMEM;
    if (rc == CL_OK) {
        memset(out, 0, sizeof *t);
        a.out = out;
        rc = cl_case_call(c, "parse", &a, sizeof a);
        memcpy(t, out, sizeof *t);
        if (rc == CL_OK && sanitize(t) != 0) {
            cl_set_error("your parse says %d devices (at most %d)", t->ndevices,
                         CL_TOPO_MAX_DEVICES);
            rc = CL_ERR_MISMATCH;
        }
    }
    cl_host_free(out);
    cl_host_free((void *)a.text);
    cl_host_free((void *)a.path);
    return rc;
}

/* One row per device of t: what the parse found, as `nvidia-smi topo -m` shows it. */
static void device_rows(cl_run *run, const char *file, const cl_topo *t)
{
    for (int i = 0; i < t->ndevices; i++) {
        const cl_device *d = &t->dev[i];
        char links[CL_TOPO_MAX_DEVICES * 9] = "", numa[16] = "";
        for (int j = 0; j < t->ndevices; j++) {
            strcat(links, j ? " " : "");
            strcat(links, t->link[i][j].code);
        }
        if (d->numa_given && d->numa_node >= 0)
            snprintf(numa, sizeof numa, "%d", d->numa_node);
        else if (d->numa_given)
            snprintf(numa, sizeof numa, "N/A");
        cl_row *row = cl_row_begin(run, NULL);
        cl_col_str(row, "file", file);
        cl_col_str(row, "device", d->name);
        cl_col_str(row, "label", d->label);
        cl_col_str(row, "kind", device_kind(d->kind));
        cl_col_str(row, "cpu_affinity", d->cpu_affinity);
        cl_col_str(row, "numa", numa);
        cl_col_int(row, "bad_cells", inconsistent_cells(t, i));
        cl_col_str(row, "links", links);
        cl_row_end(row);
    }
}

static cl_result parse_case(cl_case *c)
{
    static cl_topo t;
    const char *path;
    char *text;
    CL_CHECK(cl_case_str(c, "file", &path));
    cl_col_str(cl_case_row(c), "file", path);
    CL_CHECK(read_text(path, &text));
    cl_result rc = student_parse(c, text, path, &t);
    free(text);
    cl_col_int(cl_case_row(c), "devices", rc == CL_OK ? t.ndevices : 0);
    if (rc == CL_OK)
        device_rows(cl_case_run(c), path, &t);
    return rc;
}

/* --- 4 to 6: the analysis ----------------------------------------------------------------- */

/* "0,1,2,3" -> GPU device indices of t; a reason for anything else. */
static cl_result read_group(const char *text, const cl_topo *t, int *group, int *n)
{
    *n = 0;
    for (const char *p = text; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || (*end && *end != ',') || v < 0 || v >= t->ndevices ||
            t->dev[v].kind != CL_DEV_GPU || *n == CL_TOPO_MAX_DEVICES) {
            cl_set_error("group=%s: not a list of GPU indices", text);
            return CL_ERR_INVALID;
        }
        group[(*n)++] = (int)v;
        p = *end ? end + 1 : end;
    }
    return CL_OK;
}

/* Call the student's analysis of t (shared for the call) into *a. */
static cl_result student_analyse(cl_case *c, const cl_topo *t, analyse_args *a)
{
    cl_topo *shared = cl_share(t, sizeof *t);
    if (!shared)
        return CL_ERR_NOMEM;
    a->topo = shared;
    cl_result rc = cl_case_call(c, "analyse", a, sizeof *a);
    cl_host_free(shared);
    a->nic_error[sizeof a->nic_error - 1] = '\0';
    return rc;
}

static int index_ok(const cl_topo *t, int v) { return v >= -1 && v < t->ndevices; }

static cl_result analyse_case(cl_case *c)
{
    static cl_topo t;
    const char *path, *group = "";
    CL_CHECK(cl_case_str(c, "file", &path));
    cl_row *row = cl_case_row(c);
    cl_col_str(row, "file", path);
    if (cl_case_str(c, "group", &group) != CL_OK)
        group = "";
    CL_CHECK(cl_topo_load(path, &t)); /* the library's parse: the analysis stands alone */
    static analyse_args a;
    memset(&a, 0, sizeof a);
    CL_CHECK(read_group(group, &t, a.group, &a.ngroup));
    cl_result rc = student_analyse(c, &t, &a);
    if (rc != CL_OK)
        return rc;
    cl_col_int(row, "domains", a.ndomains);
    cl_col_int(row, "sys_pairs", a.sys_pairs);
    cl_col_str(row, "group", group);
    cl_col_int(row, "group_domains", a.group_domains);
    cl_col_str(row, "nic_status", cl_result_str(a.nic_status));
    if (a.nic_status != CL_OK)
        cl_col_str(row, "why", a.nic_error);
    for (int i = 0; i < t.ndevices; i++) {
        if (t.dev[i].kind != CL_DEV_GPU)
            continue;
        int nic = index_ok(&t, a.nic[i]) ? a.nic[i] : -2, d = a.domain[i];
        cl_row *g = cl_row_begin(cl_case_run(c), NULL);
        cl_col_str(g, "file", path);
        cl_col_int(g, "gpu", i);
        cl_col_int(g, "domain", d >= -1 && d < CL_TOPO_MAX_DEVICES ? d : -2);
        cl_col_int(g, "nic", nic);
        cl_col_str(g, "nic_name", nic >= 0 ? t.dev[nic].name : "-");
        cl_col_str(g, "path", nic >= 0 ? t.link[i][nic].code : "-");
        cl_row_end(g);
    }
    return CL_OK;
}

/* --- the GPU probe: the CUDA runtime against the student's parse of nvidia-smi ------------- */

#ifdef CL_HAVE_CUDA
/* What CUDA says about this machine's GPUs, in PCI bus order (nvidia-smi's). */
typedef struct cuda_view {
    int n;
    char busid[CL_TOPO_MAX_DEVICES][16];
    int numa[CL_TOPO_MAX_DEVICES];
    int access[CL_TOPO_MAX_DEVICES][CL_TOPO_MAX_DEVICES],
        rank[CL_TOPO_MAX_DEVICES][CL_TOPO_MAX_DEVICES];
} cuda_view;

static cl_result cuda_probe(cuda_view *v)
{
    /* The GPUs nvidia-smi lists, numbered as it numbers them. */
    setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
    unsetenv("CUDA_VISIBLE_DEVICES");
    memset(v, 0, sizeof *v);
    cudaError_t e = cudaGetDeviceCount(&v->n);
    if (e != cudaSuccess || v->n == 0) {
        cl_set_error("needs a GPU: %s", e != cudaSuccess ? cudaGetErrorName(e) : "0 devices");
        return CL_ERR_UNSUPPORTED;
    }
    if (v->n > CL_TOPO_MAX_DEVICES)
        v->n = CL_TOPO_MAX_DEVICES;
    for (int i = 0; i < v->n; i++) {
        char path[96];
        if (cudaDeviceGetPCIBusId(v->busid[i], sizeof v->busid[i], i) != cudaSuccess) {
            cl_set_error("cudaDeviceGetPCIBusId(%d) failed", i);
            return CL_ERR_BACKEND;
        }
        for (char *p = v->busid[i]; *p; p++)
            *p = (char)(*p >= 'A' && *p <= 'F' ? *p - 'A' + 'a' : *p);
        v->numa[i] = -1;
        snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/numa_node", v->busid[i]);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fscanf(f, "%d", &v->numa[i]) != 1)
                v->numa[i] = -1;
            fclose(f);
        }
        for (int j = 0; j < v->n; j++)
            if (i != j && (cudaDeviceCanAccessPeer(&v->access[i][j], i, j) != cudaSuccess ||
                           cudaDeviceGetP2PAttribute(&v->rank[i][j], cudaDevP2PAttrPerformanceRank,
                                                     i, j) != cudaSuccess)) {
                cl_set_error("CUDA's peer queries for GPUs %d and %d failed", i, j);
                return CL_ERR_BACKEND;
            }
    }
    return CL_OK;
}
#endif

static cl_result probe_case(cl_case *c)
{
#ifndef CL_HAVE_CUDA
    (void)c;
    cl_set_error("this build has no CUDA runtime");
    return CL_ERR_UNSUPPORTED;
#else
    static cuda_view v;
    static cl_topo t;
    static analyse_args a;
    const char *path;
    char *text;
    CL_CHECK(cl_case_str(c, "smi", &path));
    cl_result rc = cuda_probe(&v); /* unsupported without a GPU: the grader skips */
    if (rc != CL_OK)
        return rc;
    CL_CHECK(read_text(path, &text));
    rc = student_parse(c, text, path, &t);
    free(text);
    if (rc != CL_OK)
        return rc;
    memset(&a, 0, sizeof a);
    CL_CHECK(student_analyse(c, &t, &a));
    int gpus[CL_TOPO_MAX_DEVICES], n = 0;
    for (int i = 0; i < t.ndevices; i++)
        if (t.dev[i].kind == CL_DEV_GPU)
            gpus[n++] = i;
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "gpus_cuda", v.n);
    cl_col_int(row, "gpus_parsed", n);
    cl_col_int(row, "domains", a.ndomains);
    for (int g = 0; g < n && g < v.n; g++) {
        const cl_device *d = &t.dev[gpus[g]];
        cl_row *r = cl_row_begin(cl_case_run(c), NULL);
        cl_col_int(r, "gpu", g);
        cl_col_str(r, "busid", v.busid[g]);
        cl_col_int(r, "numa_sysfs", v.numa[g]);
        cl_col_int(r, "numa_parsed", d->numa_given ? d->numa_node : -2);
        cl_row_end(r);
    }
    for (int g = 0; g < n && g < v.n; g++)
        for (int h = g + 1; h < n && h < v.n; h++) {
            int i = gpus[g], j = gpus[h];
            cl_row *r = cl_row_begin(cl_case_run(c), NULL);
            cl_col_int(r, "a", g);
            cl_col_int(r, "b", h);
            cl_col_str(r, "code", t.link[i][j].code);
            cl_col_int(r, "same_domain", a.domain[i] >= 0 && a.domain[i] == a.domain[j]);
            cl_col_int(r, "can_access", v.access[g][h] && v.access[h][g]);
            cl_col_int(r, "perf_rank", v.rank[g][h]);
            cl_row_end(r);
        }
    return CL_OK;
#endif
}

const cl_lab cl_lab_def = {
    .name = "lab02",
    .title = "NVLink/PCIe 拓扑探测",
    .modes =
        (const cl_mode[]){
            {.name = "codes", .help = "your classification of code=CODE", .cases = codes_case},
            {.name = "split",
             .help = "your split of text=PERCENT-ENCODED want=N",
             .cases = split_case},
            {.name = "parse",
             .help = "your parse of file=PATH (nvidia-smi topo -m output)",
             .cases = parse_case},
            {.name = "analyse",
             .help = "your analysis of file=PATH [group=0,1,...]",
             .cases = analyse_case},
            {.name = "probe",
             .help = "this machine's CUDA runtime vs your parse of smi=PATH",
             .cases = probe_case},
            {0}},
};

#endif
