/* driver.c: lab 12's plug-in: PCIe paths of recorded servers, NCCL's GDR/P2P decisions, the
 * NIC of every GPU, and staged copies over links the harness emulates or drives.
 *
 *   lab12 paths  file=datasets/hwloc/X.xml          path classes, GPU-NIC and GPU-GPU
 *   lab12 levels path=N gdr=V p2p=V dis=V [amd=1 ngpus=2]   one decision (V: "-" unset,
 *                                                   x:HEX for values with blanks)
 *   lab12 decide file=X.xml gdr=V p2p=V dis=V       every pair of a server
 *   lab12 assign file=X.xml seed=N nic_gbps=G smp_gbps=S   your NIC per GPU, and its
 *                                                   bandwidth with all GPUs sending at once
 *   lab12 model  bytes=B chunk=C nbuf=N bw_in=.. lat_in=.. bw_out=.. lat_out=..
 *   lab12 pipe     [--backend cpu|sim|gpu]          staged copies of awkward sizes, checked
 *   lab12 pipeperf [--bytes 64M --staging 8M --in 2:20 --out 1.6:20 --rounds 5]
 *                                                   yours vs one staging buffer, paired
 *
 * The links: on "cpu" the harness emulates them in real time (a copy over a link ends at
 * start + latency + n / bandwidth, and a wait sleeps until then), on "sim" in virtual
 * time, and on "gpu" they are real: a CPU copy from pageable memory into pinned memory,
 * then cudaMemcpyAsync to the GPU. Data never passes through the student's program: on
 * "cpu" and "sim" the harness tracks where every staged and delivered byte came from, on
 * "gpu" it reads the GPU's copy back.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness.h"
#include "lab12.h"
#include "link.h"

#ifndef MAXD
#define MAXD LAB12_MAX_DEVICES
#endif

typedef struct paths_args {
    int32_t ngpus, nnics;
    lab12_pcipos gpu[MAXD], nic[MAXD];
    int8_t gpu_nic[MAXD * MAXD], gpu_gpu[MAXD * MAXD]; /* out */
} paths_args;

typedef struct setting {
    char gdr[64], p2p[64], dis[64]; /* "" with has_* 0: unset */
    int32_t has_gdr, has_p2p, has_dis, amd, ngpus;
} setting;

typedef struct levels_args {
    setting s;
    int32_t path;
    int32_t gdr_level, p2p_level, gdr, p2p; /* out */
} levels_args;

typedef struct decide_args {
    setting s;
    int32_t ngpus, nnics;
    int8_t gpu_nic[MAXD * MAXD], gpu_gpu[MAXD * MAXD]; /* in: path classes */
    int8_t gdr[MAXD * MAXD], p2p[MAXD * MAXD];         /* out */
} decide_args;

typedef struct assign_args {
    int32_t ngpus, nnics;
    lab12_pcipos gpu[MAXD], nic[MAXD];
    int32_t nic_of_gpu[MAXD]; /* out */
} assign_args;

typedef struct model_args {
    uint64_t bytes, chunk;
    int32_t nbuf;
    lab12_link in, out;
    double time_s; /* out */
} model_args;

typedef struct copy_args {
    lab12_job job;
    uint64_t chunk; /* out: the plan */
    int32_t nbuf;   /* out */
} copy_args;

#ifdef CL_STUDENT_SIDE

static const char *value(const char *v, int has) { return has ? v : NULL; }

static cl_result paths(cl_comm *c, void *args)
{
    (void)c;
    paths_args *a = args;
    for (int g = 0; g < a->ngpus; g++) {
        for (int n = 0; n < a->nnics; n++)
            a->gpu_nic[g * MAXD + n] = (int8_t)lab12_classify(&a->gpu[g], &a->nic[n]);
        for (int h = 0; h < a->ngpus; h++)
            a->gpu_gpu[g * MAXD + h] = (int8_t)lab12_classify(&a->gpu[g], &a->gpu[h]);
    }
    return CL_OK;
}

static cl_result levels(cl_comm *c, void *args)
{
    (void)c;
    levels_args *a = args;
    const setting *s = &a->s;
    a->gdr_level = lab12_parse_level(value(s->gdr, s->has_gdr));
    a->p2p_level = lab12_parse_level(value(s->p2p, s->has_p2p));
    a->gdr = lab12_gdr_enabled((lab12_path)a->path, value(s->gdr, s->has_gdr));
    a->p2p = lab12_p2p_enabled((lab12_path)a->path, value(s->dis, s->has_dis),
                               value(s->p2p, s->has_p2p), s->amd, s->ngpus);
    return CL_OK;
}

static cl_result decide(cl_comm *c, void *args)
{
    (void)c;
    decide_args *a = args;
    const setting *s = &a->s;
    for (int g = 0; g < a->ngpus; g++) {
        for (int n = 0; n < a->nnics; n++)
            a->gdr[g * MAXD + n] = (int8_t)lab12_gdr_enabled((lab12_path)a->gpu_nic[g * MAXD + n],
                                                             value(s->gdr, s->has_gdr));
        for (int h = 0; h < a->ngpus; h++)
            a->p2p[g * MAXD + h] = (int8_t)lab12_p2p_enabled(
                (lab12_path)a->gpu_gpu[g * MAXD + h], value(s->dis, s->has_dis),
                value(s->p2p, s->has_p2p), s->amd, s->ngpus);
    }
    return CL_OK;
}

static cl_result assign(cl_comm *c, void *args)
{
    (void)c;
    assign_args *a = args;
    int out[MAXD];
    CL_CHECK(lab12_assign_nics(a->gpu, a->ngpus, a->nic, a->nnics, out));
    for (int g = 0; g < a->ngpus; g++)
        a->nic_of_gpu[g] = out[g];
    return CL_OK;
}

static cl_result model(cl_comm *c, void *args)
{
    (void)c;
    model_args *a = args;
    a->time_s = lab12_pipeline_time(a->bytes, a->chunk, a->nbuf, a->in, a->out);
    return CL_OK;
}

static cl_result copy(cl_comm *c, void *args)
{
    copy_args *a = args;
    size_t chunk = 0;
    int nbuf = 0;
    CL_CHECK(lab12_plan(&a->job, &chunk, &nbuf));
    a->chunk = chunk, a->nbuf = nbuf;
    return lab12_staged_copy(c, &a->job, chunk, nbuf);
}

CL_STUDENT_ENTRIES({"paths", paths}, {"levels", levels}, {"decide", decide}, {"assign", assign},
                   {"model", model}, {"copy", copy});

#else

#include "lab12_harness.h"

static cl_result server_of(cl_case *c, server *s)
{
    const char *file;
    CL_CHECK(cl_case_str(c, "file", &file));
    return server_load(file, s);
}

/* =========================================================================================
 * Cases: paths, levels, decide, model
 * ========================================================================================= */

static void col_matrix(cl_row *row, const char *key, const int8_t *m, int rows, int cols)
{
    long long v[MAXD * MAXD];
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            v[i * cols + j] = m[i * MAXD + j];
    cl_col_ints(row, key, v, (size_t)rows * (size_t)cols);
}

static cl_result paths_case(cl_case *c)
{
    server s;
    CL_CHECK(server_of(c, &s));
    paths_args *a = calloc(1, sizeof *a);
    if (!a) {
        server_free(&s);
        return CL_ERR_NOMEM;
    }
    a->ngpus = s.ngpus, a->nnics = s.nnics;
    memcpy(a->gpu, s.gpu, sizeof s.gpu);
    memcpy(a->nic, s.nic, sizeof s.nic);
    server_free(&s);
    cl_result rc = cl_case_call(c, "paths", a, sizeof *a);
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "gpus", a->ngpus);
    cl_col_int(row, "nics", a->nnics);
    col_matrix(row, "gpu_nic", a->gpu_nic, a->ngpus, a->nnics);
    col_matrix(row, "gpu_gpu", a->gpu_gpu, a->ngpus, a->ngpus);
    free(a);
    return rc;
}

/* A setting's value: "-" unset, "x:HEX" hex-encoded bytes (values with blanks), else as is. */
static cl_result setting_value(cl_case *c, const char *key, char *out, int32_t *has)
{
    const char *v;
    *has = 0;
    out[0] = '\0';
    if (cl_case_str(c, key, &v) != CL_OK || strcmp(v, "-") == 0)
        return CL_OK;
    *has = 1;
    if (strncmp(v, "x:", 2) != 0) {
        snprintf(out, 64, "%s", v);
        return CL_OK;
    }
    size_t n = strlen(v + 2) / 2;
    for (size_t i = 0; i < n && i < 63; i++) {
        unsigned byte;
        if (sscanf(v + 2 + 2 * i, "%2x", &byte) != 1) {
            cl_set_error("%s: bad hex '%s'", key, v);
            return CL_ERR_INVALID;
        }
        out[i] = (char)byte;
        out[i + 1] = '\0';
    }
    return CL_OK;
}

static cl_result read_setting(cl_case *c, setting *s, int amd, int ngpus)
{
    memset(s, 0, sizeof *s);
    CL_CHECK(setting_value(c, "gdr", s->gdr, &s->has_gdr));
    CL_CHECK(setting_value(c, "p2p", s->p2p, &s->has_p2p));
    CL_CHECK(setting_value(c, "dis", s->dis, &s->has_dis));
    const char *v; /* optional: the server's own values otherwise */
    s->amd = cl_case_str(c, "amd", &v) == CL_OK ? atoi(v) : amd;
    s->ngpus = cl_case_str(c, "ngpus", &v) == CL_OK ? atoi(v) : ngpus;
    cl_clear_error();
    return CL_OK;
}

static cl_result levels_case(cl_case *c)
{
    levels_args a;
    long long path;
    CL_CHECK(read_setting(c, &a.s, 0, 8));
    CL_CHECK(cl_case_int(c, "path", &path));
    a.path = (int32_t)path;
    cl_result rc = cl_case_call(c, "levels", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "gdr_level", a.gdr_level);
    cl_col_int(row, "p2p_level", a.p2p_level);
    cl_col_int(row, "gdr", a.gdr);
    cl_col_int(row, "p2p", a.p2p);
    return rc;
}

static cl_result decide_case(cl_case *c)
{
    server s;
    CL_CHECK(server_of(c, &s));
    decide_args *a = calloc(1, sizeof *a);
    cl_result rc = a ? read_setting(c, &a->s, s.amd, s.ngpus) : CL_ERR_NOMEM;
    if (rc == CL_OK) {
        a->ngpus = s.ngpus, a->nnics = s.nnics;
        /* The true classes: this decides, it does not classify (that is paths' job). */
        for (int g = 0; g < s.ngpus; g++) {
            for (int n = 0; n < s.nnics; n++)
                a->gpu_nic[g * MAXD + n] = (int8_t)ref_classify(&s.gpu[g], &s.nic[n]);
            for (int h = 0; h < s.ngpus; h++)
                a->gpu_gpu[g * MAXD + h] = (int8_t)ref_classify(&s.gpu[g], &s.gpu[h]);
        }
        rc = cl_case_call(c, "decide", a, sizeof *a);
        cl_row *row = cl_case_row(c);
        col_matrix(row, "gdr", a->gdr, s.ngpus, s.nnics);
        col_matrix(row, "p2p", a->p2p, s.ngpus, s.ngpus);
    }
    free(a);
    server_free(&s);
    return rc;
}

static cl_result read_link(cl_case *c, const char *bw, const char *lat, lab12_link *l)
{
    CL_CHECK(cl_case_num(c, bw, &l->bandwidth_Bps));
    return cl_case_num(c, lat, &l->latency_s);
}

static cl_result model_case(cl_case *c)
{
    model_args a = {0};
    double bytes, chunk, nbuf;
    CL_CHECK(cl_case_num(c, "bytes", &bytes));
    CL_CHECK(cl_case_num(c, "chunk", &chunk));
    CL_CHECK(cl_case_num(c, "nbuf", &nbuf));
    CL_CHECK(read_link(c, "bw_in", "lat_in", &a.in));
    CL_CHECK(read_link(c, "bw_out", "lat_out", &a.out));
    a.bytes = (uint64_t)bytes, a.chunk = (uint64_t)chunk, a.nbuf = (int32_t)nbuf;
    cl_result rc = cl_case_call(c, "model", &a, sizeof a);
    cl_col_num(cl_case_row(c), "time_s", a.time_s, "%.9g");
    return rc;
}

static uint64_t mix(uint64_t a, uint64_t b) { return cl_data_hash(a * 0x9E3779B97F4A7C15ULL ^ b); }

static cl_result assign_case(cl_case *c)
{
    server s;
    long long seed;
    double nic_gbps, smp_gbps;
    CL_CHECK(cl_case_int(c, "seed", &seed));
    CL_CHECK(cl_case_num(c, "nic_gbps", &nic_gbps));
    CL_CHECK(cl_case_num(c, "smp_gbps", &smp_gbps));
    CL_CHECK(server_of(c, &s));
    if (s.ngpus < 1 || s.nnics < 1) {
        server_free(&s);
        cl_set_error("the server has %d GPUs and %d RDMA NICs", s.ngpus, s.nnics);
        return CL_ERR_INVALID;
    }
    /* The student sees the devices in an order of the seed's choosing. */
    int gperm[MAXD], nperm[MAXD];
    int count[2] = {s.ngpus, s.nnics}, *perm[2] = {gperm, nperm};
    uint64_t h = (uint64_t)seed;
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < count[k]; i++)
            perm[k][i] = i;
        for (int i = count[k] - 1; i > 0; i--) {
            h = mix(h, (uint64_t)i);
            int j = (int)(h % (uint64_t)(i + 1)), t = perm[k][i];
            perm[k][i] = perm[k][j], perm[k][j] = t;
        }
    }
    assign_args *a = calloc(1, sizeof *a);
    if (!a) {
        server_free(&s);
        return CL_ERR_NOMEM;
    }
    a->ngpus = s.ngpus, a->nnics = s.nnics;
    for (int g = 0; g < s.ngpus; g++)
        a->gpu[g] = s.gpu[gperm[g]];
    for (int n = 0; n < s.nnics; n++)
        a->nic[n] = s.nic[nperm[n]];
    for (int g = 0; g < s.ngpus; g++)
        a->nic_of_gpu[g] = -1;
    cl_result rc = cl_case_call(c, "assign", a, sizeof *a);
    int mine[MAXD], ref[MAXD];
    long long shown[MAXD];
    for (int g = 0; g < s.ngpus; g++) { /* back in bus-id order */
        int n = a->nic_of_gpu[g];
        mine[gperm[g]] = n >= 0 && n < s.nnics ? nperm[n] : -1;
    }
    double got = 0, best = 0;
    int valid = 1;
    for (int g = 0; g < s.ngpus; g++)
        valid &= mine[g] >= 0, shown[g] = mine[g];
    ref_assign(&s, ref);
    cl_result mr = aggregate(&s, ref, nic_gbps, smp_gbps, &best);
    if (mr == CL_OK && valid && rc == CL_OK)
        mr = aggregate(&s, mine, nic_gbps, smp_gbps, &got);
    cl_row *row = cl_case_row(c);
    cl_col_ints(row, "nic_of_gpu", shown, (size_t)s.ngpus);
    cl_col_num(row, "gbps", got, "%.2f");
    cl_col_num(row, "reference_gbps", best, "%.2f");
    free(a);
    server_free(&s);
    if (rc == CL_OK && !valid) {
        cl_set_error("a GPU was given no NIC, or a NIC that does not exist");
        rc = CL_ERR_INVALID;
    }
    return rc != CL_OK ? rc : mr;
}

/* The student's plan and copy of job, timed by the harness. */
static cl_result student_copy(cl_comm *c, const lab12_job *job, outcome *o)
{
    copy_args a = {.job = *job};
    cl_call_result res;
    memset(o, 0, sizeof *o);
    links_open(c, job);
    CL_CHECK(cl_student_run(c, "copy", &a, sizeof a, CL_ALLOW_LAB, &res));
    o->seconds = res.seconds, o->chunk = a.chunk, o->nbuf = a.nbuf, o->status = res.status;
    snprintf(o->error, sizeof o->error, "%s", res.error);
    return links_close(o);
}

static cl_result lab_op(cl_run *run, cl_comm *c, int code, void *args, size_t bytes)
{
    (void)run;
    if (bytes != sizeof(lab12_op)) {
        cl_set_error("lab12: a link operation of %zu bytes", bytes);
        return CL_ERR_INVALID;
    }
    return links_op(c, code, args);
}

/* =========================================================================================
 * Ranks modes: pipe (correctness) and pipeperf (performance)
 * ========================================================================================= */

static cl_result parse_link(const char *text, lab12_link *l)
{
    double gbps, us;
    if (sscanf(text, "%lf:%lf", &gbps, &us) != 2 || !(gbps > 0) || !(us >= 0)) {
        cl_set_error("a link is GBPS:LATENCY_US (e.g. 2:20), not '%s'", text);
        return CL_ERR_INVALID;
    }
    *l = (lab12_link){.bandwidth_Bps = gbps * 1e9, .latency_s = us * 1e-6};
    return CL_OK;
}

static cl_result one_rank(cl_comm *c, lab12_job *job, cl_run *run)
{
    if (cl_comm_size(c) != 1) {
        cl_set_error("the staged copy runs on one rank (--nranks 1, or mpirun -np 1)");
        return CL_ERR_INVALID;
    }
    size_t staging;
    CL_CHECK(cl_parse_size(cl_opt(run, "staging"), &staging));
    job->staging_bytes = staging;
    if (links_real(c)) {
        CL_CHECK(gpu_setup(job));
    } else {
        CL_CHECK(parse_link(cl_opt(run, "in"), &job->in));
        CL_CHECK(parse_link(cl_opt(run, "out"), &job->out));
    }
    return CL_OK;
}

static void col_outcome(cl_row *row, const lab12_job *job, const outcome *o)
{
    cl_col_int(row, "bytes", (long long)job->bytes);
    cl_col_int(row, "chunk", (long long)o->chunk);
    cl_col_int(row, "nbuf", o->nbuf);
    cl_col_str(row, "status", cl_result_str(o->status));
    cl_col_str(row, "error", o->error);
    cl_col_int(row, "wrong_bytes", (long long)o->wrong);
    cl_col_int(row, "bytes_in", (long long)o->bytes_in);
    cl_col_int(row, "bytes_out", (long long)o->bytes_out);
    cl_col_int(row, "hazards", o->hazards);
}

static cl_result pipe_mode(cl_run *run, cl_comm *c)
{
    static const size_t sizes[] = {1, 4095, 65537, ((size_t)5 << 20) + 3, ((size_t)33 << 20) + 17};
    lab12_job job = {.bytes = sizes[4]};
    CL_CHECK(one_rank(c, &job, run));
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        job.bytes = sizes[i];
        if (links_real(c))
            CL_CHECK(gpu_fresh(cl_data_hash(0x1200 + i), job.bytes));
        outcome o;
        CL_CHECK(student_copy(c, &job, &o));
        cl_row *row = cl_row_begin(run, c);
        col_outcome(row, &job, &o);
        cl_col_num(row, "seconds", o.seconds, "%.6f");
        cl_row_end(row);
    }
    gpu_teardown();
    return CL_OK;
}

static cl_result pipeperf_mode(cl_run *run, cl_comm *c)
{
    const cl_opts *opts = cl_run_opts(run);
    lab12_job job = {.bytes = opts->bytes};
    CL_CHECK(one_rank(c, &job, run));
    long rounds = strtol(cl_opt(run, "rounds"), NULL, 10);
    if (rounds < 1 || rounds > 64) {
        cl_set_error("--rounds wants 1..64");
        return CL_ERR_INVALID;
    }
    if (links_real(c)) {
        CL_CHECK(gpu_fresh(cl_data_hash(0x1210), job.bytes));
        CL_CHECK(gpu_figures(c, &job));
    }
    double mine[64], base[64], overlap = 0;
    size_t wrong = 0, chunk = 0, in = 0, out = 0;
    int nbuf = 0, hazards = 0;
    outcome o, b;
    for (long r = -1; r < rounds; r++) { /* round -1 warms both up */
        if (links_real(c))
            CL_CHECK(gpu_fresh(cl_data_hash(0x1220 + (uint64_t)(r + 1)), job.bytes));
        CL_CHECK(links_baseline(c, &job, &b));
        if (b.status != CL_OK || b.wrong) {
            cl_set_error("the harness's own copy failed (%zu wrong bytes)", b.wrong);
            return CL_ERR_BACKEND;
        }
        if (links_real(c))
            CL_CHECK(gpu_fresh(cl_data_hash(0x1240 + (uint64_t)(r + 1)), job.bytes));
        CL_CHECK(student_copy(c, &job, &o));
        if (o.status != CL_OK) {
            cl_set_error("%s", o.error);
            return o.status;
        }
        if (r < 0)
            continue;
        mine[r] = o.seconds, base[r] = b.seconds;
        wrong += o.wrong, hazards += o.hazards, chunk = o.chunk, nbuf = o.nbuf;
        in += o.bytes_in, out += o.bytes_out, overlap += o.overlap_s;
    }
    double slow = fmin(job.in.bandwidth_Bps, job.out.bandwidth_Bps);
    cl_report_num(run, "bw_in", job.in.bandwidth_Bps);
    cl_report_num(run, "lat_in", job.in.latency_s);
    cl_report_num(run, "bw_out", job.out.bandwidth_Bps);
    cl_report_num(run, "lat_out", job.out.latency_s);
    cl_report_int(run, "staging", (long long)job.staging_bytes);
    cl_row *row = cl_row_begin(run, c);
    cl_col_int(row, "bytes", (long long)job.bytes);
    cl_col_int(row, "chunk", (long long)chunk);
    cl_col_int(row, "nbuf", nbuf);
    cl_col_nums(row, "student_s", mine, (size_t)rounds, "%.6f");
    cl_col_nums(row, "baseline_s", base, (size_t)rounds, "%.6f");
    cl_col_num(row, "bound_s", (double)job.bytes / slow, "%.6f");
    cl_col_num(row, "model_s", ref_pipeline(job.bytes, chunk, nbuf, job.in, job.out), "%.6f");
    cl_col_num(row, "overlap_s", overlap / (double)rounds, "%.6f");
    cl_col_int(row, "wrong_bytes", (long long)wrong);
    cl_col_int(row, "hazards", hazards);
    cl_col_int(row, "bytes_in", (long long)(in / (size_t)rounds));
    cl_col_int(row, "bytes_out", (long long)(out / (size_t)rounds));
    cl_row_end(row);
    gpu_teardown();
    return CL_OK;
}

const cl_lab cl_lab_def = {
    .name = "lab12",
    .title = "PCIe 与 GPUDirect: paths, NCCL's decisions, NICs and staged copies",
    .modes =
        (const cl_mode[]){
            {.name = "paths",
             .help = "your path classes of a server (file=X.xml)",
             .cases = paths_case},
            {.name = "levels",
             .help = "your GDR/P2P decision for path=N gdr=V p2p=V dis=V",
             .cases = levels_case},
            {.name = "decide",
             .help = "your decisions for every pair of file=X.xml",
             .cases = decide_case},
            {.name = "assign",
             .help = "your NIC per GPU of file=X.xml, and its bandwidth",
             .cases = assign_case},
            {.name = "model", .help = "your modelled time of a staged copy", .cases = model_case},
            {.name = "pipe",
             .help = "your staged copies of awkward sizes, every byte checked",
             .ranks = pipe_mode},
            {.name = "pipeperf",
             .help = "your staged copy vs one staging buffer, paired rounds",
             .ranks = pipeperf_mode},
            {0}},
    .options =
        (const cl_option[]){
            {.name = "staging", .help = "pinned staging memory", .fallback = "8M"},
            {.name = "in", .help = "link in, GB/s:latency us (cpu, sim)", .fallback = "2:20"},
            {.name = "out", .help = "link out, GB/s:latency us (cpu, sim)", .fallback = "1.6:20"},
            {.name = "rounds", .help = "pipeperf: paired samples", .fallback = "5"},
            {0}},
    .lab_op = lab_op,
};

#endif
