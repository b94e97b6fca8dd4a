/* driver.c: lab 01's harness: runs the student's functions and writes JSON.
 *
 *   lab01 sweep    [--backend B] [--system S] [--repeats R] [--max-bytes N] --json FILE
 *       ping-pong at sizes 8 B .. max (x4), the student's loop interleaved with
 *       the harness's own loop; then the student's fit of the student's times.
 *   lab01 bench    [--backend B] [--system S] [--bytes N] [--repeats R] --json FILE
 *       bandwidth of the student's loop and the harness's loop, interleaved.
 *   lab01 fit BYTES:SECONDS ... --json FILE
 *       the student's fit of given points (the grader's synthetic lines).
 *   lab01 estimate key=value ... --json FILE
 *       the student's step estimate for one workload/cluster/layout.
 *
 * Run sweep and bench under mpirun with 2 ranks (cpu, gpu) or alone (sim).
 * The student's code never sees the output file: only rank 0 of the harness
 * writes it, after verifying every message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab01.h"

#define MAX_SIZES 32

typedef struct options {
    const char *mode;
    const char *json_path;
    cl_launch_opts launch;
    int repeats;
    size_t max_bytes;
    size_t bench_bytes;
    int nkv;
    char **kv;
} options;

typedef struct sweep_result {
    int nsizes;
    double bytes[MAX_SIZES];
    double student_s[MAX_SIZES];  /* median one-way time of the student's loop */
    double baseline_s[MAX_SIZES]; /* median one-way time of the harness's loop */
    double external_s[MAX_SIZES]; /* the student's loop timed from outside, per message */
    size_t corrupt[MAX_SIZES];    /* bytes that arrived wrong, summed over repeats */
    double student_bw[64], baseline_bw[64]; /* bench: one sample per repeat */
} sweep_result;


/* The harness's reference loop: the same exchange as the student's. */
static cl_result baseline_pingpong(cl_comm *comm, void *buf, size_t bytes, int iters, double *t)
{
    int rank = cl_comm_rank(comm);
    if (rank > 1)
        return CL_OK;
    double start = cl_comm_time(comm);
    for (int i = 0; i < iters; i++) {
        if (rank == 0) {
            CL_CHECK(cl_send(comm, buf, bytes, 1));
            CL_CHECK(cl_recv(comm, buf, bytes, 1));
        } else {
            CL_CHECK(cl_recv(comm, buf, bytes, 0));
            CL_CHECK(cl_send(comm, buf, bytes, 0));
        }
    }
    *t = (cl_comm_time(comm) - start) / (2.0 * iters);
    return CL_OK;
}

static int iterations_for(size_t bytes)
{
    size_t n = ((size_t)16 << 20) / (bytes ? bytes : 1);
    return n < 10 ? 10 : n > 500 ? 500 : (int)n;
}

/* Fill the first `bytes` of host staging memory with the pattern of (rank,
 * tag) and upload it; rank 0's pattern is what both ranks must hold after a
 * correct ping-pong. */
static cl_result fill_pattern(cl_comm *comm, void *buf, unsigned char *host, size_t bytes,
                              int rank, uint64_t tag)
{
    for (size_t i = 0; i < bytes; i++)
        host[i] = (unsigned char)cl_data_hash(tag ^ ((uint64_t)rank << 56) ^ i);
    return cl_mem_upload(comm, buf, host, bytes);
}

static cl_result count_corrupt(cl_comm *comm, const void *buf, unsigned char *host, size_t bytes,
                               uint64_t tag, size_t *bad)
{
    CL_CHECK(cl_mem_download(comm, host, buf, bytes));
    for (size_t i = 0; i < bytes; i++)
        if (host[i] != (unsigned char)cl_data_hash(tag ^ i))
            (*bad)++;
    return CL_OK;
}

/* One timed student run at one size, with its data verified. */
static cl_result student_run(cl_comm *comm, void *buf, unsigned char *host, size_t bytes,
                             int iters, uint64_t tag, double *t, double *external, size_t *bad)
{
    int rank = cl_comm_rank(comm);
    CL_CHECK(fill_pattern(comm, buf, host, bytes, rank, tag));
    CL_CHECK(cl_barrier(comm));
    *t = 0;
    double start = cl_comm_time(comm);
    CL_CHECK(lab01_pingpong(comm, buf, bytes, iters, t));
    *external = (cl_comm_time(comm) - start) / (2.0 * iters);
    CL_CHECK(cl_barrier(comm));
    if (rank <= 1)
        CL_CHECK(count_corrupt(comm, buf, host, bytes, tag, bad));
    return CL_OK;
}

static cl_result write_sweep(const options *opt, const sweep_result *res);

/* Add rank 1's corruption counts to rank 0's, through device-capable memory. */
static cl_result gather_corruption(cl_comm *comm, void *buf, sweep_result *res)
{
    size_t bytes = sizeof res->corrupt;
    int rank = cl_comm_rank(comm);
    if (rank == 1) {
        CL_CHECK(cl_mem_upload(comm, buf, res->corrupt, bytes));
        CL_CHECK(cl_send(comm, buf, bytes, 0));
    } else if (rank == 0) {
        size_t theirs[MAX_SIZES];
        CL_CHECK(cl_recv(comm, buf, bytes, 1));
        CL_CHECK(cl_mem_download(comm, theirs, buf, bytes));
        for (int i = 0; i < MAX_SIZES; i++)
            res->corrupt[i] += theirs[i];
    }
    return CL_OK;
}

static cl_result sweep_body(cl_comm *comm, void *arg)
{
    const options *opt = arg;
    sweep_result *res = calloc(1, sizeof *res);
    if (!res)
        return CL_ERR_NOMEM;
    if (cl_comm_size(comm) < 2) {
        cl_set_error("the ping-pong needs 2 ranks, got %d", cl_comm_size(comm));
        return CL_ERR_INVALID;
    }
    size_t max = strcmp(opt->mode, "bench") == 0 ? opt->bench_bytes : opt->max_bytes;
    if (max < sizeof res->corrupt)
        max = sizeof res->corrupt;
    void *buf;
    unsigned char *host = malloc(max);
    if (!host)
        return CL_ERR_NOMEM;
    cl_pretouch(host, max);
    CL_CHECK(cl_mem_alloc(comm, max, &buf));

    double student[64], baseline[64], external[64];
    int bench = strcmp(opt->mode, "bench") == 0;
    size_t first = bench ? opt->bench_bytes : 8;
    int n = 0;
    for (size_t bytes = first; bytes <= max && n < MAX_SIZES; bytes *= 4, n++) {
        /* bench samples last ~30 ms each, long enough to ride out scheduler noise */
        int iters = bench ? 50 : iterations_for(bytes);
        double warm;
        CL_CHECK(baseline_pingpong(comm, buf, bytes, 2, &warm));
        for (int r = 0; r < opt->repeats; r++) {
            uint64_t tag = cl_data_hash(((uint64_t)n << 32) | (uint64_t)r);
            CL_CHECK(cl_barrier(comm));
            CL_CHECK(baseline_pingpong(comm, buf, bytes, iters, &baseline[r]));
            CL_CHECK(student_run(comm, buf, host, bytes, iters, tag, &student[r], &external[r],
                                 &res->corrupt[n]));
            if (bench) {
                res->baseline_bw[r] = bytes / baseline[r] / 1e9;
                res->student_bw[r] = student[r] > 0 ? bytes / student[r] / 1e9 : 0;
            }
        }
        res->bytes[n] = (double)bytes;
        res->student_s[n] = cl_median(student, (size_t)opt->repeats);
        res->baseline_s[n] = cl_median(baseline, (size_t)opt->repeats);
        res->external_s[n] = cl_median(external, (size_t)opt->repeats);
        if (bench)
            break;
    }
    res->nsizes = n + bench;
    CL_CHECK(gather_corruption(comm, buf, res));
    if (cl_comm_rank(comm) == 0)
        CL_CHECK(write_sweep(opt, res));
    CL_CHECK(cl_mem_free(comm, buf));
    free(host);
    free(res);
    return CL_OK;
}

static cl_result write_sweep(const options *opt, const sweep_result *res)
{
    cl_json j;
    CL_CHECK(cl_json_open(&j, opt->json_path));
    cl_json_object_start(&j, NULL);
    cl_json_string(&j, "mode", opt->mode);
    cl_json_string(&j, "backend", opt->launch.backend);
    size_t n = (size_t)res->nsizes;
    long long corrupt[MAX_SIZES];
    for (size_t i = 0; i < n; i++)
        corrupt[i] = (long long)res->corrupt[i];
    cl_json_number_array(&j, "bytes", res->bytes, n);
    cl_json_number_array(&j, "student_s", res->student_s, n);
    cl_json_number_array(&j, "baseline_s", res->baseline_s, n);
    cl_json_number_array(&j, "external_s", res->external_s, n);
    cl_json_int_array(&j, "corrupt_bytes", corrupt, n);
    if (strcmp(opt->mode, "bench") == 0) {
        cl_json_number_array(&j, "student_gbps", res->student_bw, (size_t)opt->repeats);
        cl_json_number_array(&j, "baseline_gbps", res->baseline_bw, (size_t)opt->repeats);
    } else {
        double alpha = 0, beta = 0;
        cl_clear_error();
        cl_result rc = lab01_fit_alpha_beta(res->bytes, res->student_s, res->nsizes, &alpha, &beta);
        cl_json_string(&j, "fit_status", cl_result_str(rc));
        cl_json_string(&j, "fit_error", cl_last_error());
        cl_json_number(&j, "alpha_s", rc == CL_OK ? alpha : 0.0 / 0.0);
        cl_json_number(&j, "beta_s_per_byte", rc == CL_OK ? beta : 0.0 / 0.0);
    }
    cl_json_object_end(&j);
    return cl_json_close(&j);
}

static cl_result run_pingpong(options *opt)
{
    opt->launch.nranks = 2;
    return cl_launch(&opt->launch, sweep_body, opt);
}

/* --- estimate mode --- */

typedef struct kv_field {
    const char *key;
    char type; /* 'd' double, 'i' int */
    size_t offset;
    int which; /* 0 workload, 1 cluster, 2 layout */
} kv_field;

#define W(f, t) {#f, t, offsetof(lab01_workload, f), 0}
#define C(k, f, t) {k, t, offsetof(lab01_cluster, f), 1}
#define L(f) {#f, 'i', offsetof(lab01_layout, f), 2}
static const kv_field fields[] = {
    W(params, 'd'), W(bytes_per_element, 'd'), W(layers, 'i'), W(hidden, 'i'),
    W(seq_len, 'i'), W(micro_batch, 'i'), W(micro_batches, 'i'), W(compute_s, 'd'),
    C("nodes", nodes, 'i'), C("gpus_per_node", gpus_per_node, 'i'),
    C("intra_alpha_s", intra.alpha_s, 'd'), C("intra_bandwidth_Bps", intra.bandwidth_Bps, 'd'),
    C("inter_alpha_s", inter.alpha_s, 'd'), C("inter_bandwidth_Bps", inter.bandwidth_Bps, 'd'),
    L(tp), L(pp), L(dp),
};

static cl_result parse_kv(const options *opt, lab01_workload *w, lab01_cluster *c,
                          lab01_layout *l)
{
    char *bases[3] = {(char *)w, (char *)c, (char *)l};
    int seen = 0;
    for (int i = 0; i < opt->nkv; i++) {
        const char *arg = opt->kv[i], *eq = strchr(arg, '=');
        size_t k;
        for (k = 0; eq && k < sizeof fields / sizeof fields[0]; k++)
            if (strlen(fields[k].key) == (size_t)(eq - arg) &&
                strncmp(arg, fields[k].key, (size_t)(eq - arg)) == 0)
                break;
        if (!eq || k == sizeof fields / sizeof fields[0]) {
            cl_set_error("unknown parameter '%s'", arg);
            return CL_ERR_INVALID;
        }
        char *end;
        double v = strtod(eq + 1, &end);
        if (*end || end == eq + 1) {
            cl_set_error("parameter %s: not a number", arg);
            return CL_ERR_INVALID;
        }
        char *dst = bases[fields[k].which] + fields[k].offset;
        if (fields[k].type == 'd')
            *(double *)dst = v;
        else
            *(int *)dst = (int)v;
        seen++;
    }
    if (seen != (int)(sizeof fields / sizeof fields[0])) {
        cl_set_error("expected all %zu parameters, got %d", sizeof fields / sizeof fields[0], seen);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

static cl_result run_estimate(const options *opt)
{
    lab01_workload w = {0};
    lab01_cluster c = {0};
    lab01_layout l = {0};
    lab01_estimate e = {0};
    CL_CHECK(parse_kv(opt, &w, &c, &l));
    cl_result rc = lab01_estimate_step(&w, &c, &l, &e);
    cl_json j;
    CL_CHECK(cl_json_open(&j, opt->json_path));
    cl_json_object_start(&j, NULL);
    cl_json_string(&j, "status", cl_result_str(rc));
    cl_json_string(&j, "error", cl_last_error());
    cl_json_number(&j, "tp_s", e.tp_s);
    cl_json_number(&j, "dp_s", e.dp_s);
    cl_json_number(&j, "pp_s", e.pp_s);
    cl_json_number(&j, "comm_s", e.comm_s);
    cl_json_number(&j, "share", e.share);
    cl_json_number(&j, "ring_allreduce_check_s",
                   lab01_ring_allreduce_time(l.dp, 1e9, c.inter)); /* TODO 3 on its own */
    cl_json_object_end(&j);
    CL_CHECK(cl_json_close(&j));
    return rc;
}

/* --- fit mode --- */

static cl_result run_fit(const options *opt)
{
    double bytes[64], seconds[64];
    int n = 0;
    for (int i = 0; i < opt->nkv && n < 64; i++, n++)
        if (sscanf(opt->kv[i], "%lf:%lf", &bytes[n], &seconds[n]) != 2) {
            cl_set_error("bad point '%s' (expected BYTES:SECONDS)", opt->kv[i]);
            return CL_ERR_INVALID;
        }
    double alpha = 0, beta = 0;
    cl_clear_error();
    cl_result rc = lab01_fit_alpha_beta(bytes, seconds, n, &alpha, &beta);
    cl_json j;
    CL_CHECK(cl_json_open(&j, opt->json_path));
    cl_json_object_start(&j, NULL);
    cl_json_string(&j, "status", cl_result_str(rc));
    cl_json_string(&j, "error", cl_last_error());
    cl_json_number(&j, "alpha_s", alpha);
    cl_json_number(&j, "beta_s_per_byte", beta);
    cl_json_object_end(&j);
    CL_CHECK(cl_json_close(&j));
    return CL_OK; /* the status is in the JSON: an invalid input is a valid answer */
}

static int usage(void)
{
    fprintf(stderr, "usage: lab01 sweep|bench [--backend cpu|gpu|sim] [--system S] [--repeats R]\n"
                    "             [--max-bytes N] [--bytes N] --json FILE\n"
                    "       lab01 fit BYTES:SECONDS ... --json FILE\n"
                    "       lab01 estimate key=value ... --json FILE\n");
    return 2;
}

int main(int argc, char **argv)
{
    options opt = {.repeats = 5, .max_bytes = 4 << 20, .bench_bytes = 4 << 20};
    opt.launch = (cl_launch_opts){.backend = "cpu", .system = "dgx-a100", .argc = &argc,
                                  .argv = &argv};
    char *kv[64];
    opt.kv = kv;
    if (argc < 2)
        return usage();
    opt.mode = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--json") == 0 && v)
            opt.json_path = argv[++i];
        else if (strcmp(a, "--backend") == 0 && v)
            opt.launch.backend = argv[++i];
        else if (strcmp(a, "--system") == 0 && v)
            opt.launch.system = argv[++i];
        else if (strcmp(a, "--repeats") == 0 && v)
            opt.repeats = atoi(argv[++i]);
        else if (strcmp(a, "--max-bytes") == 0 && v)
            opt.max_bytes = strtoull(argv[++i], NULL, 0);
        else if (strcmp(a, "--bytes") == 0 && v)
            opt.bench_bytes = strtoull(argv[++i], NULL, 0);
        else if ((strchr(a, '=') || strchr(a, ':')) && opt.nkv < 64)
            opt.kv[opt.nkv++] = argv[i];
        else
            return usage();
    }
    if (opt.repeats < 1 || opt.repeats > 64 || opt.max_bytes < 8 || opt.bench_bytes < 1)
        return usage();

    cl_result rc;
    if (strcmp(opt.mode, "estimate") == 0)
        rc = run_estimate(&opt);
    else if (strcmp(opt.mode, "fit") == 0)
        rc = run_fit(&opt);
    else if (strcmp(opt.mode, "sweep") == 0 || strcmp(opt.mode, "bench") == 0)
        rc = run_pingpong(&opt);
    else
        return usage();
    if (rc != CL_OK)
        fprintf(stderr, "lab01 %s: %s%s%s\n", opt.mode, cl_result_str(rc),
                cl_last_error()[0] ? ": " : "", cl_last_error());
    return cl_exit_status(rc);
}
