/* driver.c: lab 12's harness: PCIe paths of recorded servers, NCCL's decisions,
 * and the staged copy pipeline (CPU links emulated, GPU for real), as JSON.
 *
 *   lab12 paths FILE.xml --json OUT            path classes of every GPU-NIC / GPU-GPU pair
 *   lab12 decide FILE.xml --json OUT SET...    GDR and P2P decisions per setting SET
 *   lab12 levels --json OUT CASE...            decisions for given path classes
 *   lab12 pipe --json OUT                      staged copies of awkward sizes, verified
 *   lab12 pipeperf [--repeats R] --json OUT    pipeline vs each link alone (emulated links)
 *   lab12 gpu [--repeats R] --json OUT         the pipeline to GPU 0, vs each link alone
 *   lab12 model --json OUT CASE...             lab12_pipeline_time and lab12_best_chunk
 *
 * SET is "gdr=V;p2p=V;dis=V;amd=0|1;ngpus=N" and CASE adds "path=N" (levels) or is
 * "bytes=B;chunk=C;bw_in=..;lat_in=..;bw_out=..;lat_out=.." (model); a value "-"
 * is unset. Exit status: 0 ok, 2 bad usage or input, 1 anything else.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef CL_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include "lab12.h"

#define MAX_DEV 64
static const char *const path_names[] = {"LOC", "NVL", "NVB", "C2C", "PIX",
                                         "PXB", "P2C", "PXN", "PHB", "SYS"};

static const char *path_name(int p)
{
    return p >= 0 && p <= LAB12_SYS ? path_names[p] : "invalid";
}

/* --- the emulated link: copy, then sleep until latency + n / bandwidth has passed --- */

cl_result lab12_link_copy(const lab12_link *link, void *dst, const void *src, size_t n)
{
    struct timespec start, until;
    if (!link || link->bandwidth_Bps <= 0)
        return CL_ERR_INVALID;
    clock_gettime(CLOCK_MONOTONIC, &start);
    memcpy(dst, src, n);
    double wait = link->latency_s + (double)n / link->bandwidth_Bps;
    long long ns = start.tv_nsec + (long long)(wait * 1e9);
    until.tv_sec = start.tv_sec + (time_t)(ns / 1000000000LL);
    until.tv_nsec = (long)(ns % 1000000000LL);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
        ;
    return CL_OK;
}

/* --- positions of devices in an hwloc topology --- */

typedef struct server {
    hwloc_topology_t topo;
    int ngpus, nnics;
    lab12_pcipos gpu[MAX_DEV], nic[MAX_DEV];
    char nic_name[MAX_DEV][32];
} server;

static int pos_cmp(const void *a, const void *b)
{
    return strcmp(((const lab12_pcipos *)a)->busid, ((const lab12_pcipos *)b)->busid);
}

static void locate(hwloc_obj_t dev, lab12_pcipos *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->busid, sizeof p->busid, "%04x:%02x:%02x.%x", dev->attr->pcidev.domain,
             dev->attr->pcidev.bus, dev->attr->pcidev.dev, dev->attr->pcidev.func);
    int ids[LAB12_MAX_DEPTH], n = 0;
    p->hostbridge = -1;
    hwloc_obj_t o = dev->parent;
    for (; o && o->type == HWLOC_OBJ_BRIDGE; o = o->parent) {
        if (o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST) {
            p->hostbridge = (int)o->gp_index;
            o = o->parent;
            break;
        }
        if (n < LAB12_MAX_DEPTH)
            ids[n++] = (int)o->gp_index;
    }
    for (int i = 0; i < n; i++) /* top first */
        p->bridge[i] = ids[n - 1 - i];
    p->nbridges = n;
    while (o && !o->cpuset)
        o = o->parent;
    p->numa = o && o->memory_arity == 1 ? (int)o->memory_first_child->os_index : -1;
}

static cl_result load_server(const char *path, server *s)
{
    memset(s, 0, sizeof *s);
    if (hwloc_topology_init(&s->topo) != 0)
        return CL_ERR_NOMEM;
    hwloc_topology_set_io_types_filter(s->topo, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (hwloc_topology_set_xml(s->topo, path) != 0 || hwloc_topology_load(s->topo) != 0) {
        cl_set_error("%s: hwloc cannot load it", path);
        hwloc_topology_destroy(s->topo);
        return CL_ERR_PARSE;
    }
    for (hwloc_obj_t o = NULL; (o = hwloc_get_next_pcidev(s->topo, o));) {
        unsigned cls = o->attr->pcidev.class_id;
        if (o->attr->pcidev.vendor_id == 0x10de && (cls == 0x0302 || cls == 0x0300) &&
            s->ngpus < MAX_DEV)
            locate(o, &s->gpu[s->ngpus++]);
        for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
            if (c->type == HWLOC_OBJ_OS_DEVICE &&
                c->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && s->nnics < MAX_DEV) {
                locate(o, &s->nic[s->nnics]);
                snprintf(s->nic_name[s->nnics++], 32, "%s", c->name);
                break;
            }
    }
    qsort(s->gpu, (size_t)s->ngpus, sizeof s->gpu[0], pos_cmp);
    /* sort NICs together with their names */
    for (int i = 1; i < s->nnics; i++)
        for (int j = i; j > 0 && pos_cmp(&s->nic[j - 1], &s->nic[j]) > 0; j--) {
            lab12_pcipos t = s->nic[j];
            char name[32];
            s->nic[j] = s->nic[j - 1], s->nic[j - 1] = t;
            memcpy(name, s->nic_name[j], 32), memcpy(s->nic_name[j], s->nic_name[j - 1], 32);
            memcpy(s->nic_name[j - 1], name, 32);
        }
    return CL_OK;
}

static char *cpu_vendor(server *s)
{
    hwloc_obj_t pkg = hwloc_get_obj_by_type(s->topo, HWLOC_OBJ_PACKAGE, 0);
    const char *v = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUVendor") : NULL;
    return (char *)(v ? v : "");
}

/* --- settings "key=value;key=value" --- */

typedef struct setting {
    const char *gdr, *p2p, *dis;
    int amd, ngpus, path;
    size_t bytes, chunk;
    lab12_link in, out;
    char text[256];
    char value[3][64]; /* storage of gdr, p2p, dis */
} setting;

static cl_result parse_setting(const char *arg, setting *s, int ngpus, int amd)
{
    memset(s, 0, sizeof *s);
    s->ngpus = ngpus, s->amd = amd, s->path = -1;
    snprintf(s->text, sizeof s->text, "%s", arg);
    char *save = NULL, copy[256];
    snprintf(copy, sizeof copy, "%s", arg);
    for (char *kv = strtok_r(copy, ";", &save); kv; kv = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) {
            cl_set_error("bad setting '%s'", arg);
            return CL_ERR_INVALID;
        }
        *eq = '\0';
        const char *v = eq + 1;
        int slot = strcmp(kv, "gdr") == 0 ? 0 : strcmp(kv, "p2p") == 0 ? 1 : 2;
        const char *keep = NULL;
        if (strcmp(v, "-") != 0 && (slot < 2 || strcmp(kv, "dis") == 0)) {
            snprintf(s->value[slot], sizeof s->value[slot], "%s", v);
            keep = s->value[slot];
        }
        if (strcmp(kv, "gdr") == 0)
            s->gdr = keep;
        else if (strcmp(kv, "p2p") == 0)
            s->p2p = keep;
        else if (strcmp(kv, "dis") == 0)
            s->dis = keep;
        else if (strcmp(kv, "amd") == 0)
            s->amd = atoi(v);
        else if (strcmp(kv, "ngpus") == 0)
            s->ngpus = atoi(v);
        else if (strcmp(kv, "path") == 0)
            s->path = atoi(v);
        else if (strcmp(kv, "bytes") == 0)
            s->bytes = strtoull(v, NULL, 0);
        else if (strcmp(kv, "chunk") == 0)
            s->chunk = strtoull(v, NULL, 0);
        else if (strcmp(kv, "bw_in") == 0)
            s->in.bandwidth_Bps = atof(v);
        else if (strcmp(kv, "lat_in") == 0)
            s->in.latency_s = atof(v);
        else if (strcmp(kv, "bw_out") == 0)
            s->out.bandwidth_Bps = atof(v);
        else if (strcmp(kv, "lat_out") == 0)
            s->out.latency_s = atof(v);
        else {
            cl_set_error("unknown key '%s' in '%s'", kv, arg);
            return CL_ERR_INVALID;
        }
    }
    return CL_OK;
}

/* --- modes --- */

static cl_result run_paths(const char *file, const char *json_path, int nsets, char **sets)
{
    static server s;
    CL_CHECK(load_server(file, &s));
    int amd = strcmp(cpu_vendor(&s), "AuthenticAMD") == 0;
    cl_json j;
    CL_CHECK(cl_json_open(&j, json_path));
    cl_json_object_start(&j, NULL);
    cl_json_string(&j, "cpu_vendor", cpu_vendor(&s));
    cl_json_array_start(&j, "gpus");
    for (int g = 0; g < s.ngpus; g++)
        cl_json_string(&j, NULL, s.gpu[g].busid);
    cl_json_array_end(&j);
    cl_json_array_start(&j, "nics");
    for (int n = 0; n < s.nnics; n++)
        cl_json_string(&j, NULL, s.nic_name[n]);
    cl_json_array_end(&j);
    int gn[MAX_DEV][MAX_DEV], gg[MAX_DEV][MAX_DEV];
    for (int kind = 0; kind < 2; kind++) {
        cl_json_array_start(&j, kind ? "gpu_gpu" : "gpu_nic");
        for (int g = 0; g < s.ngpus; g++) {
            cl_json_array_start(&j, NULL);
            for (int x = 0; x < (kind ? s.ngpus : s.nnics); x++) {
                int p = lab12_classify(&s.gpu[g], kind ? &s.gpu[x] : &s.nic[x]);
                (kind ? gg : gn)[g][x] = p;
                cl_json_string(&j, NULL, path_name(p));
            }
            cl_json_array_end(&j);
        }
        cl_json_array_end(&j);
    }
    cl_json_array_start(&j, "settings");
    for (int i = 0; i < nsets; i++) {
        setting st;
        CL_CHECK(parse_setting(sets[i], &st, s.ngpus, amd));
        cl_json_object_start(&j, NULL);
        cl_json_string(&j, "setting", st.text);
        cl_json_array_start(&j, "gdr");
        for (int g = 0; g < s.ngpus; g++) {
            cl_json_array_start(&j, NULL);
            for (int n = 0; n < s.nnics; n++)
                cl_json_int(&j, NULL, lab12_gdr_enabled((lab12_path)gn[g][n], st.gdr));
            cl_json_array_end(&j);
        }
        cl_json_array_end(&j);
        cl_json_array_start(&j, "p2p");
        for (int g = 0; g < s.ngpus; g++) {
            cl_json_array_start(&j, NULL);
            for (int h = 0; h < s.ngpus; h++)
                cl_json_int(&j, NULL, lab12_p2p_enabled((lab12_path)gg[g][h], st.dis, st.p2p,
                                                        st.amd, st.ngpus));
            cl_json_array_end(&j);
        }
        cl_json_array_end(&j);
        cl_json_object_end(&j);
    }
    cl_json_array_end(&j);
    cl_json_object_end(&j);
    hwloc_topology_destroy(s.topo);
    return cl_json_close(&j);
}

static cl_result run_levels(const char *json_path, int n, char **cases)
{
    cl_json j;
    CL_CHECK(cl_json_open(&j, json_path));
    cl_json_array_start(&j, NULL);
    for (int i = 0; i < n; i++) {
        setting st;
        CL_CHECK(parse_setting(cases[i], &st, 8, 0));
        cl_json_object_start(&j, NULL);
        cl_json_string(&j, "case", st.text);
        cl_json_int(&j, "gdr_level", lab12_parse_level(st.gdr));
        cl_json_int(&j, "p2p_level", lab12_parse_level(st.p2p));
        cl_json_int(&j, "gdr", lab12_gdr_enabled((lab12_path)st.path, st.gdr));
        cl_json_int(&j, "p2p", lab12_p2p_enabled((lab12_path)st.path, st.dis, st.p2p, st.amd,
                                                 st.ngpus));
        cl_json_object_end(&j);
    }
    cl_json_array_end(&j);
    return cl_json_close(&j);
}

static long locked_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmLck:", 6) == 0)
            kib = atol(line + 6);
    if (f)
        fclose(f);
    return kib;
}

static void fill(unsigned char *buf, size_t n, uint64_t tag)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)cl_data_hash(tag ^ i);
}

static size_t count_wrong(const unsigned char *buf, size_t n, uint64_t tag)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += buf[i] != (unsigned char)cl_data_hash(tag ^ i);
    return bad;
}

static cl_result alloc_staging(size_t chunk, void *staging[2], long *locked_delta)
{
    long before = locked_kib();
    for (int b = 0; b < 2; b++) {
        staging[b] = NULL;
        CL_CHECK(lab12_pin_alloc(chunk, &staging[b]));
    }
    *locked_delta = locked_kib() - before;
    return CL_OK;
}

static cl_result run_pipe(const char *json_path)
{
    const size_t chunk = 64 << 10;
    const size_t sizes[] = {0, 1, 4095, chunk - 1, chunk, chunk + 1, 3 * chunk + 17,
                            (5 << 20) + 3};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    const lab12_link fast = {.bandwidth_Bps = 1e12, .latency_s = 0};
    void *staging[2];
    long locked = 0;
    cl_json j;
    CL_CHECK(cl_json_open(&j, json_path));
    cl_json_object_start(&j, NULL);
    cl_clear_error();
    cl_result prc = alloc_staging(chunk, staging, &locked);
    cl_json_string(&j, "pin_status", cl_result_str(prc));
    cl_json_string(&j, "pin_error", cl_last_error());
    cl_json_int(&j, "staging_bytes", 2 * (long long)chunk);
    cl_json_int(&j, "locked_bytes", locked * 1024LL);
    cl_json_array_start(&j, "cases");
    unsigned char *src = malloc(sizes[nsizes - 1] + 1), *dst = malloc(sizes[nsizes - 1] + 1);
    if (!src || !dst)
        return CL_ERR_NOMEM;
    for (int i = 0; i < nsizes && prc == CL_OK; i++) {
        uint64_t tag = cl_data_hash(0x12000 + (uint64_t)i);
        fill(src, sizes[i], tag);
        memset(dst, 0xA5, sizes[i] + 1);
        cl_clear_error();
        cl_result rc = lab12_staged_copy(dst, src, sizes[i], chunk, staging, &fast, &fast);
        cl_json_object_start(&j, NULL);
        cl_json_int(&j, "bytes", (long long)sizes[i]);
        cl_json_string(&j, "status", cl_result_str(rc));
        cl_json_int(&j, "wrong_bytes", (long long)count_wrong(dst, sizes[i], tag));
        cl_json_bool(&j, "wrote_past_end", dst[sizes[i]] != 0xA5);
        cl_json_object_end(&j);
    }
    cl_json_array_end(&j);
    cl_json_object_end(&j);
    if (prc == CL_OK)
        for (int b = 0; b < 2; b++)
            lab12_pin_free(staging[b], chunk);
    free(src);
    free(dst);
    return cl_json_close(&j);
}

/* Each link alone, chunk by chunk, as the baseline of the pipeline. */
static double link_alone(const lab12_link *l, void *dst, const void *src, size_t bytes,
                         size_t chunk, void *stage)
{
    double start = cl_wtime();
    for (size_t off = 0; off < bytes; off += chunk) {
        size_t n = bytes - off < chunk ? bytes - off : chunk;
        if (dst)
            lab12_link_copy(l, (char *)dst + off, stage, n);
        else
            lab12_link_copy(l, stage, (const char *)src + off, n);
    }
    return cl_wtime() - start;
}

static cl_result run_pipeperf(const char *json_path, int repeats)
{
    const size_t bytes = 32 << 20, chunk = 1 << 20;
    const lab12_link in = {.bandwidth_Bps = 1.0e9, .latency_s = 20e-6};
    const lab12_link out = {.bandwidth_Bps = 0.8e9, .latency_s = 20e-6};
    void *staging[2];
    long locked;
    CL_CHECK(alloc_staging(chunk, staging, &locked));
    unsigned char *src = malloc(bytes), *dst = malloc(bytes);
    if (!src || !dst)
        return CL_ERR_NOMEM;
    cl_pretouch(dst, bytes);
    double t_in[64], t_out[64], t_pipe[64];
    size_t wrong = 0;
    cl_result rc = CL_OK;
    for (int r = 0; r < repeats && rc == CL_OK; r++) {
        uint64_t tag = cl_data_hash(0x12100 + (uint64_t)r);
        fill(src, bytes, tag);
        t_in[r] = link_alone(&in, NULL, src, bytes, chunk, staging[0]);
        t_out[r] = link_alone(&out, dst, NULL, bytes, chunk, staging[1]);
        memset(dst, 0, bytes);
        double start = cl_wtime();
        rc = lab12_staged_copy(dst, src, bytes, chunk, staging, &in, &out);
        t_pipe[r] = cl_wtime() - start;
        wrong += count_wrong(dst, bytes, tag);
    }
    cl_json j;
    CL_CHECK(cl_json_open(&j, json_path));
    cl_json_object_start(&j, NULL);
    cl_json_string(&j, "status", cl_result_str(rc));
    cl_json_int(&j, "bytes", (long long)bytes);
    cl_json_int(&j, "chunk", (long long)chunk);
    cl_json_number(&j, "bw_in", in.bandwidth_Bps);
    cl_json_number(&j, "bw_out", out.bandwidth_Bps);
    cl_json_number(&j, "latency_s", in.latency_s);
    cl_json_int(&j, "wrong_bytes", (long long)wrong);
    cl_json_number_array(&j, "in_alone_s", t_in, (size_t)repeats);
    cl_json_number_array(&j, "out_alone_s", t_out, (size_t)repeats);
    cl_json_number_array(&j, "pipeline_s", t_pipe, (size_t)repeats);
    cl_json_number(&j, "model_s", lab12_pipeline_time(bytes, chunk, in, out));
    cl_json_object_end(&j);
    for (int b = 0; b < 2; b++)
        lab12_pin_free(staging[b], chunk);
    free(src);
    free(dst);
    return cl_json_close(&j);
}

#ifdef CL_HAVE_CUDA
static cl_result run_gpu(const char *json_path, int repeats)
{
    const size_t bytes = (size_t)256 << 20, chunk = (size_t)4 << 20;
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count < 1) {
        cl_set_error("no usable GPU (%s)", cudaGetErrorName(err));
        return CL_ERR_UNSUPPORTED;
    }
    unsigned char *src = malloc(bytes), *back = malloc(bytes);
    void *dev = NULL, *pinned = NULL;
    if (!src || !back || cudaMalloc(&dev, bytes) != cudaSuccess ||
        cudaHostAlloc(&pinned, chunk, cudaHostAllocDefault) != cudaSuccess)
        return CL_ERR_NOMEM;
    cl_pretouch(src, bytes);
    double t_copy[64], t_h2d[64], t_pipe[64];
    size_t wrong = 0;
    cl_result rc = CL_OK;
    for (int r = 0; r < repeats && rc == CL_OK; r++) {
        uint64_t tag = cl_data_hash(0x12200 + (uint64_t)r);
        fill(src, bytes, tag);
        double start = cl_wtime(); /* link 1: pageable -> pinned, chunk by chunk */
        for (size_t off = 0; off < bytes; off += chunk)
            memcpy(pinned, src + off, chunk);
        t_copy[r] = cl_wtime() - start;
        start = cl_wtime(); /* link 2: pinned -> device, chunk by chunk */
        for (size_t off = 0; off < bytes; off += chunk)
            cudaMemcpyAsync((char *)dev + off, pinned, chunk, cudaMemcpyHostToDevice, 0);
        cudaDeviceSynchronize();
        t_h2d[r] = cl_wtime() - start;
        cudaMemset(dev, 0, bytes);
        cudaDeviceSynchronize();
        start = cl_wtime();
        rc = lab12_staged_h2d(dev, src, bytes, chunk);
        cudaDeviceSynchronize();
        t_pipe[r] = cl_wtime() - start;
        cudaMemcpy(back, dev, bytes, cudaMemcpyDeviceToHost);
        wrong += count_wrong(back, bytes, tag);
    }
    cl_json j;
    CL_CHECK(cl_json_open(&j, json_path));
    cl_json_object_start(&j, NULL);
    cl_json_string(&j, "status", cl_result_str(rc));
    cl_json_int(&j, "bytes", (long long)bytes);
    cl_json_int(&j, "wrong_bytes", (long long)wrong);
    cl_json_number_array(&j, "copy_alone_s", t_copy, (size_t)repeats);
    cl_json_number_array(&j, "h2d_alone_s", t_h2d, (size_t)repeats);
    cl_json_number_array(&j, "pipeline_s", t_pipe, (size_t)repeats);
    cl_json_object_end(&j);
    cudaFree(dev);
    cudaFreeHost(pinned);
    free(src);
    free(back);
    return cl_json_close(&j);
}
#else
static cl_result run_gpu(const char *json_path, int repeats)
{
    (void)json_path, (void)repeats;
    cl_set_error("built without CUDA");
    return CL_ERR_UNSUPPORTED;
}
#endif

static cl_result run_model(const char *json_path, int n, char **cases)
{
    cl_json j;
    CL_CHECK(cl_json_open(&j, json_path));
    cl_json_array_start(&j, NULL);
    for (int i = 0; i < n; i++) {
        setting st;
        CL_CHECK(parse_setting(cases[i], &st, 0, 0));
        cl_json_object_start(&j, NULL);
        cl_json_string(&j, "case", st.text);
        cl_json_number(&j, "time_s", lab12_pipeline_time(st.bytes, st.chunk, st.in, st.out));
        cl_json_int(&j, "best_chunk", (long long)lab12_best_chunk(st.bytes, st.in, st.out));
        cl_json_object_end(&j);
    }
    cl_json_array_end(&j);
    return cl_json_close(&j);
}

static int usage(void)
{
    fprintf(stderr, "usage: lab12 paths|decide FILE.xml --json OUT [SET...]\n"
                    "       lab12 levels|model --json OUT CASE...\n"
                    "       lab12 pipe|pipeperf|gpu [--repeats R] --json OUT\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *json_path = NULL, *file = NULL;
    char *args[256];
    int nargs = 0, repeats = 5;
    if (argc < 2)
        return usage();
    const char *mode = argv[1];
    int wants_file = strcmp(mode, "paths") == 0 || strcmp(mode, "decide") == 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
            json_path = argv[++i];
        else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc)
            repeats = atoi(argv[++i]);
        else if (wants_file && !file)
            file = argv[i];
        else if (nargs < 256)
            args[nargs++] = argv[i];
    }
    if (repeats < 1 || repeats > 64 || (wants_file && !file))
        return usage();
    cl_result rc;
    if (wants_file)
        rc = run_paths(file, json_path, nargs, args);
    else if (strcmp(mode, "levels") == 0)
        rc = run_levels(json_path, nargs, args);
    else if (strcmp(mode, "model") == 0)
        rc = run_model(json_path, nargs, args);
    else if (strcmp(mode, "pipe") == 0 && nargs == 0)
        rc = run_pipe(json_path);
    else if (strcmp(mode, "pipeperf") == 0 && nargs == 0)
        rc = run_pipeperf(json_path, repeats);
    else if (strcmp(mode, "gpu") == 0 && nargs == 0)
        rc = run_gpu(json_path, repeats);
    else
        return usage();
    if (rc != CL_OK)
        fprintf(stderr, "lab12 %s: %s%s%s\n", mode, cl_result_str(rc),
                cl_last_error()[0] ? ": " : "", cl_last_error());
    return cl_exit_status(rc);
}
