/* harness_probe.c: lab 02's probe mode: what this machine's CUDA runtime says about its
 * GPUs (bus ids, NUMA nodes from sysfs, peer access and performance ranks) beside the
 * student's parse and analysis of the machine's `nvidia-smi topo -m` output. Without a
 * GPU, or in a build without CUDA, the mode is unsupported (the grader skips it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab02_harness.h"

#ifdef CL_HAVE_CUDA
#include <cuda_runtime.h>
#endif

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

cl_result probe_case(cl_case *c)
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
