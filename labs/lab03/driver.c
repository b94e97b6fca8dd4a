/* driver.c: lab 03's harness: runs the student's matrix and measurements, records, writes JSON.
 *
 *   lab03 matrix --kind uni|bidir|latency [--bytes N] [--warmup W] [--iters I]
 *                [--repeats R] [--backend cpu|gpu] --json FILE
 *       the student's complete matrix; with it, every process's record of each
 *       pair (operations, clock readings), so the grader can rebuild warm-up,
 *       repeats and medians, and the count of transfers whose data was wrong.
 *   lab03 bench [--bytes N] [--repeats R] --json FILE          (2 ranks)
 *       unidirectional bandwidth 0 -> 1: the harness's reference measurement
 *       and the student's lab03_measure(), interleaved, one sample each per repeat.
 *   lab03 metric --kind K --bytes N --seconds S --json FILE
 *       the student's lab03_metric() of one time.
 *
 * Every mode takes --deadline SECONDS (default 60): a process still running
 * then (a deadlock: the two sides of a pair made different calls) says so and
 * exits. Shared memory never outlives the run (common/shm.h).
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lab03.h"
#include "link.h"

typedef struct options {
    const char *mode, *json_path, *backend;
    lab03_kind kind;
    size_t bytes;
    double seconds;
    lab03_method method;
    int bench_repeats;
    cl_launch_opts launch;
} options;

static const char *kind_name(lab03_kind k)
{
    return k == LAB03_UNI ? "uni" : k == LAB03_BIDIR ? "bidir" : "latency";
}

/* --- output --------------------------------------------------------------------------- */

static void write_record(cl_json *j, int rank, const lab03_record *r)
{
    cl_json_object_start(j, NULL);
    cl_json_int(j, "rank", rank);
    cl_json_string(j, "kind", kind_name((lab03_kind)r->kind));
    cl_json_int(j, "i", r->i);
    cl_json_int(j, "j", r->j);
    cl_json_int(j, "bytes", r->bytes);
    cl_json_bool(j, "mixed", r->mixed);
    cl_json_int(j, "ops", r->ops);
    cl_json_bool(j, "t_overflow", r->t_overflow);
    cl_json_int_array(j, "t_ops", r->t_ops, (size_t)r->nt);
    cl_json_number_array(j, "t", r->t, (size_t)r->nt);
    cl_json_object_end(j);
}

static cl_result write_matrix(const options *opt, int n, const double *m, const int *writers,
                              long long bad, int nsets, int *counts, lab03_record **sets)
{
    cl_json j;
    CL_CHECK(cl_json_open(&j, opt->json_path));
    cl_json_object_start(&j, NULL);
    cl_json_string(&j, "mode", "matrix");
    cl_json_string(&j, "backend", opt->backend);
    cl_json_string(&j, "kind", kind_name(opt->kind));
    cl_json_int(&j, "n", n);
    cl_json_int(&j, "bytes", (long long)opt->bytes);
    cl_json_int(&j, "warmup", opt->method.warmup);
    cl_json_int(&j, "iters", opt->method.iters);
    cl_json_int(&j, "repeats", opt->method.repeats);
    cl_json_int(&j, "bad_transfers", bad);
    cl_json_array_start(&j, "matrix");
    for (int i = 0; i < n; i++)
        cl_json_number_array(&j, NULL, m + (size_t)i * n, (size_t)n);
    cl_json_array_end(&j);
    cl_json_array_start(&j, "writers"); /* processes that wrote each entry */
    for (int i = 0; i < n * n; i++)
        cl_json_int(&j, NULL, writers[i]);
    cl_json_array_end(&j);
    cl_json_array_start(&j, "records");
    for (int s = 0; s < nsets; s++)
        for (int k = 0; k < counts[s]; k++)
            write_record(&j, s, &sets[s][k]);
    cl_json_array_end(&j);
    cl_json_object_end(&j);
    return cl_json_close(&j);
}

/* --- matrix --------------------------------------------------------------------------- */

/* Run the student's matrix with every entry preset to NaN ("not written"). */
static cl_result run_matrix(lab03_link *l, const options *opt, double *m)
{
    int n = lab03_size(l);
    for (int k = 0; k < n * n; k++)
        m[k] = NAN;
    return lab03_matrix(l, opt->kind, opt->bytes, &opt->method, m);
}

static cl_result matrix_body(cl_comm *comm, void *arg)
{
    const options *opt = arg;
    int rank = cl_comm_rank(comm), p = cl_comm_size(comm);
    lab03_link *l;
    CL_CHECK(lab03_link_open_cpu(comm, opt->bytes, &l));
    double *m = malloc((size_t)p * p * sizeof *m), *theirs = malloc((size_t)p * p * sizeof *m);
    int *writers = calloc((size_t)p * p, sizeof *writers);
    if (!m || !theirs || !writers)
        return CL_ERR_NOMEM;
    CL_CHECK(run_matrix(l, opt, m));
    CL_CHECK(cl_barrier(comm));
    int nrec;
    const lab03_record *rec = lab03_link_records(l, &nrec);
    long long bad = lab03_link_bad(l);
    if (rank != 0) {
        long long head[2] = {nrec, bad};
        CL_CHECK(cl_send(comm, m, (size_t)p * p * sizeof *m, 0));
        CL_CHECK(cl_send(comm, head, sizeof head, 0));
        if (nrec > 0)
            CL_CHECK(cl_send(comm, rec, (size_t)nrec * sizeof *rec, 0));
    } else {
        int *counts = calloc((size_t)p, sizeof *counts);
        lab03_record **sets = calloc((size_t)p, sizeof *sets);
        if (!counts || !sets)
            return CL_ERR_NOMEM;
        counts[0] = nrec;
        sets[0] = (lab03_record *)rec;
        for (int k = 0; k < p * p; k++)
            writers[k] = !isnan(m[k]);
        for (int r = 1; r < p; r++) {
            long long head[2];
            CL_CHECK(cl_recv(comm, theirs, (size_t)p * p * sizeof *theirs, r));
            CL_CHECK(cl_recv(comm, head, sizeof head, r));
            counts[r] = (int)head[0];
            bad += head[1];
            sets[r] = malloc((size_t)(counts[r] ? counts[r] : 1) * sizeof(lab03_record));
            if (!sets[r])
                return CL_ERR_NOMEM;
            if (counts[r] > 0)
                CL_CHECK(cl_recv(comm, sets[r], (size_t)counts[r] * sizeof(lab03_record), r));
            for (int k = 0; k < p * p; k++)
                if (!isnan(theirs[k])) {
                    writers[k]++;
                    m[k] = theirs[k];
                }
        }
        CL_CHECK(write_matrix(opt, p, m, writers, bad, p, counts, sets));
        for (int r = 1; r < p; r++)
            free(sets[r]);
        free(sets);
        free(counts);
    }
    free(m);
    free(theirs);
    free(writers);
    return lab03_link_close(l);
}

static cl_result run_gpu_matrix(const options *opt)
{
    lab03_link *l;
    CL_CHECK(lab03_link_open_gpu(opt->bytes, &l));
    int n = lab03_size(l);
    double *m = malloc((size_t)n * n * sizeof *m);
    int *writers = calloc((size_t)n * n, sizeof *writers);
    if (!m || !writers)
        return CL_ERR_NOMEM;
    CL_CHECK(run_matrix(l, opt, m));
    for (int k = 0; k < n * n; k++)
        writers[k] = !isnan(m[k]);
    int nrec;
    lab03_record *rec = (lab03_record *)lab03_link_records(l, &nrec);
    CL_CHECK(write_matrix(opt, n, m, writers, lab03_link_bad(l), 1, &nrec, &rec));
    free(m);
    free(writers);
    return lab03_link_close(l);
}

/* --- bench ---------------------------------------------------------------------------- */

/* The harness's own measurement, written from the handout: the reference. */
static cl_result reference_measure(lab03_link *l, lab03_kind kind, int i, int j, size_t bytes,
                                   const lab03_method *m, double *value)
{
    double per_op[LAB03_MAX_REPEATS];
    for (int k = 0; k < m->warmup; k++)
        CL_CHECK(lab03_op(l, kind, i, j, bytes));
    for (int r = 0; r < m->repeats; r++) {
        double t0 = cl_wtime();
        for (int k = 0; k < m->iters; k++)
            CL_CHECK(lab03_op(l, kind, i, j, bytes));
        per_op[r] = (cl_wtime() - t0) / m->iters;
    }
    *value = (double)bytes / cl_median(per_op, (size_t)m->repeats) / 1e9;
    return CL_OK;
}

static cl_result bench_body(cl_comm *comm, void *arg)
{
    const options *opt = arg;
    if (cl_comm_size(comm) != 2) {
        cl_set_error("bench needs 2 ranks, got %d", cl_comm_size(comm));
        return CL_ERR_INVALID;
    }
    lab03_link *l;
    CL_CHECK(lab03_link_open_cpu(comm, opt->bytes, &l));
    double mine[64], ref[64];
    for (int r = -1; r < opt->bench_repeats; r++) { /* r == -1 warms both up */
        double a = 0, b = 0;
        CL_CHECK(lab03_sync(l));
        CL_CHECK(reference_measure(l, LAB03_UNI, 0, 1, opt->bytes, &opt->method, &a));
        CL_CHECK(lab03_sync(l));
        CL_CHECK(lab03_measure(l, LAB03_UNI, 0, 1, opt->bytes, &opt->method, &b));
        if (r >= 0)
            ref[r] = a, mine[r] = b;
    }
    CL_CHECK(lab03_sync(l));
    long long bad = lab03_link_bad(l), theirs = 0;
    if (cl_comm_rank(comm) == 1)
        CL_CHECK(cl_send(comm, &bad, sizeof bad, 0));
    else {
        CL_CHECK(cl_recv(comm, &theirs, sizeof theirs, 1));
        cl_json j;
        CL_CHECK(cl_json_open(&j, opt->json_path));
        cl_json_object_start(&j, NULL);
        cl_json_string(&j, "mode", "bench");
        cl_json_int(&j, "bytes", (long long)opt->bytes);
        cl_json_int(&j, "bad_transfers", bad + theirs);
        cl_json_number_array(&j, "student_gbps", mine, (size_t)opt->bench_repeats);
        cl_json_number_array(&j, "reference_gbps", ref, (size_t)opt->bench_repeats);
        cl_json_object_end(&j);
        CL_CHECK(cl_json_close(&j));
    }
    return lab03_link_close(l);
}

/* --- main ----------------------------------------------------------------------------- */

static cl_result run_metric(const options *opt)
{
    cl_json j;
    double v = lab03_metric(opt->kind, opt->bytes, opt->seconds);
    CL_CHECK(cl_json_open(&j, opt->json_path));
    cl_json_object_start(&j, NULL);
    cl_json_number(&j, "value", v);
    cl_json_object_end(&j);
    return cl_json_close(&j);
}

static void on_deadline(int sig)
{
    static const char msg[] = "lab03: deadline reached: a pair is still waiting (did both "
                              "sides make the same lab03_op calls?); stopping\n";
    (void)sig;
    if (write(2, msg, sizeof msg - 1) < 0) {
    }
    _exit(3);
}

static int usage(void)
{
    fprintf(stderr, "usage: lab03 matrix|bench|metric [--kind uni|bidir|latency] [--bytes N]\n"
                    "             [--warmup W] [--iters I] [--repeats R] [--seconds S]\n"
                    "             [--backend cpu|gpu] [--deadline S] --json FILE\n");
    return 2;
}

int main(int argc, char **argv)
{
    options opt = {.backend = "cpu", .kind = LAB03_UNI, .bytes = 4 << 20,
                   .method = {.warmup = 3, .iters = 10, .repeats = 5}, .bench_repeats = 9};
    opt.launch = (cl_launch_opts){.backend = "cpu", .argc = &argc, .argv = &argv};
    int deadline = 60, bytes_set = 0;
    if (argc < 2)
        return usage();
    opt.mode = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return usage();
        if (strcmp(a, "--json") == 0)
            opt.json_path = v;
        else if (strcmp(a, "--kind") == 0) {
            if (strcmp(v, "uni") == 0)
                opt.kind = LAB03_UNI;
            else if (strcmp(v, "bidir") == 0)
                opt.kind = LAB03_BIDIR;
            else if (strcmp(v, "latency") == 0)
                opt.kind = LAB03_LATENCY;
            else
                return usage();
        } else if (strcmp(a, "--bytes") == 0)
            opt.bytes = strtoull(v, NULL, 0), bytes_set = 1;
        else if (strcmp(a, "--seconds") == 0)
            opt.seconds = strtod(v, NULL);
        else if (strcmp(a, "--warmup") == 0)
            opt.method.warmup = atoi(v);
        else if (strcmp(a, "--iters") == 0)
            opt.method.iters = atoi(v);
        else if (strcmp(a, "--repeats") == 0)
            opt.method.repeats = opt.bench_repeats = atoi(v);
        else if (strcmp(a, "--backend") == 0)
            opt.backend = v;
        else if (strcmp(a, "--deadline") == 0)
            deadline = atoi(v);
        else
            return usage();
        i++;
    }
    if (opt.kind == LAB03_LATENCY && !bytes_set)
        opt.bytes = 8;
    if (opt.method.warmup < 0 || opt.method.iters < 1 || opt.method.repeats < 1 ||
        opt.method.repeats > LAB03_MAX_REPEATS || deadline < 1)
        return usage();
    signal(SIGALRM, on_deadline);
    alarm((unsigned)deadline);

    cl_result rc;
    if (strcmp(opt.mode, "metric") == 0)
        rc = run_metric(&opt);
    else if (strcmp(opt.mode, "matrix") == 0 && strcmp(opt.backend, "gpu") == 0)
        rc = run_gpu_matrix(&opt);
    else if (strcmp(opt.mode, "matrix") == 0)
        rc = cl_launch(&opt.launch, matrix_body, &opt);
    else if (strcmp(opt.mode, "bench") == 0) {
        opt.method = (lab03_method){.warmup = 2, .iters = 8, .repeats = 3};
        rc = cl_launch(&opt.launch, bench_body, &opt);
    } else
        return usage();
    if (rc != CL_OK)
        fprintf(stderr, "lab03 %s: %s%s%s\n", opt.mode, cl_result_str(rc),
                cl_last_error()[0] ? ": " : "", cl_last_error());
    return cl_exit_status(rc);
}
