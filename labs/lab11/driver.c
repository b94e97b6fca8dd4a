/* driver.c: lab 11's harness: times compute, communication and the student's overlapped step.
 *
 *   lab11 overlap [--count N] [--gbps G] [--repeats R] --json FILE
 *       under mpirun -np 2 (cpu): every MPI_Iallreduce crosses the emulated
 *       link of netem.c (G GB/s, default 0.125: 1 Gb/s). The computation is
 *       sized to take 1.3 x as long as the AllReduce; then, R times, interleaved:
 *       compute alone, AllReduce alone (MPI_Iallreduce + MPI_Wait), and the
 *       student's overlapped step with fresh data, verified element by element.
 *   lab11 gpu [--count N] [--repeats R] --json FILE
 *       under mpirun, one rank per GPU (gpu.c): the same with a CUDA kernel and
 *       ncclAllReduce on the student's two streams.
 *   lab11 chunk ELEM_S SEGMENT_S COUNT --json FILE
 *       what lab11_chunk_elems answers.
 *
 * Step times are the slowest rank's. Only rank 0 writes the JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab11.h"
#include "lab11_gpu.h"
#include "lab11_netem.h"

#define MAX_REPEATS 64
#define LINK_LATENCY_S 10e-6
#define COMPUTE_OVER_COMM 1.3

typedef struct options {
    const char *mode, *json;
    size_t count;
    double gbps;
    int repeats;
} options;

static double slowest(double t)
{
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return t;
}

static double comm_only(double *grad, double *sum, size_t count)
{
    MPI_Request req;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Iallreduce(grad, sum, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    return slowest(MPI_Wtime() - t0);
}

static double compute_only(const lab11_task *t, double *next)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    lab11_compute(t, next, 0, t->count);
    return slowest(MPI_Wtime() - t0);
}

/* Median of five runs of f: calibration must see the machine as the timed runs will. */
#define MEDIAN5(expr)                                                                    \
    ({                                                                                   \
        double s_[5];                                                                    \
        for (int i_ = 0; i_ < 5; i_++)                                                   \
            s_[i_] = (expr);                                                             \
        cl_median(s_, 5);                                                                \
    })

/* Size the computation to COMPUTE_OVER_COMM x the AllReduce: the AllReduce can
 * hide entirely behind it, with room for a loaded machine's jitter. */
static void calibrate(lab11_task *t, double *grad, double *sum, double *next, int nranks)
{
    double comm = MEDIAN5(comm_only(grad, sum, t->count));
    /* compute time is a + b * work: two probes give a and b */
    t->work = 8;
    double p8 = MEDIAN5(compute_only(t, next));
    t->work = 40;
    double p40 = MEDIAN5(compute_only(t, next));
    double b = (p40 - p8) / 32, a = p8 - 8 * b;
    double work = b > 0 ? (COMPUTE_OVER_COMM * comm - a) / b : 1;
    MPI_Bcast(&work, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    t->work = work < 1 ? 1 : work > 1e6 ? 1000000 : (int)(work + 0.5);
    t->elem_s = MEDIAN5(compute_only(t, next)) / (double)t->count;
    MPI_Bcast(&t->elem_s, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    t->segment_s = lab11_netem_segment_s(t->count * sizeof(double), nranks);
}

static long count_wrong(const double *a, const double *b, size_t n)
{
    long wrong = 0;
    for (size_t i = 0; i < n; i++)
        wrong += memcmp(&a[i], &b[i], sizeof a[i]) != 0;
    return wrong;
}

static cl_result run_overlap(const options *o)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    lab11_netem_configure(o->gbps, LINK_LATENCY_S);
    size_t n = o->count, bytes = n * sizeof(double);
    double *grad = malloc(bytes), *sum = malloc(bytes), *next = malloc(bytes),
           *want = malloc(bytes);
    if (!grad || !sum || !next || !want)
        return CL_ERR_NOMEM;
    cl_pretouch(grad, bytes), cl_pretouch(sum, bytes), cl_pretouch(next, bytes);
    cl_pretouch(want, bytes);
    CL_CHECK(cl_data_fill(grad, 0, n, CL_FLOAT64, CL_SUM, rank, 1));
    lab11_task t = {.count = n, .seed = 0x1ab11};
    calibrate(&t, grad, sum, next, size);
    lab11_compute(&t, want, 0, n);

    double comp[MAX_REPEATS], comm[MAX_REPEATS], over[MAX_REPEATS];
    long wrong_sum = 0, wrong_next = 0;
    cl_result status = CL_OK;
    int done = 0;
    cl_clear_error();
    for (int r = 0; r < o->repeats && status == CL_OK; r++, done++) {
        comp[r] = compute_only(&t, next);
        comm[r] = comm_only(grad, sum, n);
        uint64_t seed = cl_data_hash(0x1100 + (uint64_t)r);
        CL_CHECK(cl_data_fill(grad, 0, n, CL_FLOAT64, CL_SUM, rank, seed));
        CL_CHECK(cl_data_poison(sum, n, CL_FLOAT64));
        CL_CHECK(cl_data_poison(next, n, CL_FLOAT64));
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        status = lab11_overlap_step(MPI_COMM_WORLD, &t, grad, sum, next);
        over[r] = slowest(MPI_Wtime() - t0);
        int bad = status != CL_OK;
        MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (bad) {
            if (status == CL_OK)
                status = CL_ERR_BACKEND;
            break;
        }
        size_t w = 0;
        CL_CHECK(cl_data_check(sum, 0, n, CL_FLOAT64, CL_SUM, size, seed, &w));
        wrong_sum += (long)w;
        wrong_next += count_wrong(next, want, n);
    }
    MPI_Allreduce(MPI_IN_PLACE, &wrong_sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &wrong_next, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        cl_json j;
        CL_CHECK(cl_json_open(&j, o->json));
        cl_json_object_start(&j, NULL);
        cl_json_string(&j, "backend", "cpu");
        cl_json_int(&j, "ranks", size);
        cl_json_int(&j, "count", (long long)n);
        cl_json_number(&j, "link_gbps", o->gbps);
        cl_json_number(&j, "segment_s", t.segment_s);
        cl_json_number(&j, "elem_s", t.elem_s);
        cl_json_int(&j, "work", t.work);
        cl_json_int(&j, "chunk", (long long)lab11_chunk_elems(&t));
        cl_json_string(&j, "status", cl_result_str(status));
        cl_json_string(&j, "error", cl_last_error());
        cl_json_int(&j, "steps", done);
        cl_json_int(&j, "wrong_sum", wrong_sum);
        cl_json_int(&j, "wrong_next", wrong_next);
        cl_json_number_array(&j, "compute_s", comp, (size_t)done);
        cl_json_number_array(&j, "comm_s", comm, (size_t)done);
        cl_json_number_array(&j, "overlap_s", over, (size_t)done);
        cl_json_object_end(&j);
        CL_CHECK(cl_json_close(&j));
    }
    free(grad), free(sum), free(next), free(want);
    return CL_OK;
}

static cl_result run_chunk(char **args, const char *json)
{
    lab11_task t = {.elem_s = strtod(args[0], NULL), .segment_s = strtod(args[1], NULL),
                    .count = strtoull(args[2], NULL, 0)};
    cl_json j;
    CL_CHECK(cl_json_open(&j, json));
    cl_json_object_start(&j, NULL);
    cl_json_int(&j, "chunk", (long long)lab11_chunk_elems(&t));
    cl_json_object_end(&j);
    return cl_json_close(&j);
}

static int usage(void)
{
    fprintf(stderr, "usage: lab11 overlap [--count N] [--gbps G] [--repeats R] --json FILE\n"
                    "       lab11 gpu [--count N] [--repeats R] --json FILE\n"
                    "       lab11 chunk ELEM_S SEGMENT_S COUNT --json FILE\n");
    return 2;
}

int main(int argc, char **argv)
{
    options o = {.count = 1 << 17, .gbps = 0.125, .repeats = 15};
    char *pos[3];
    int npos = 0;
    if (argc < 2)
        return usage();
    o.mode = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--json") == 0 && v)
            o.json = argv[++i];
        else if (strcmp(a, "--count") == 0 && v)
            o.count = strtoull(argv[++i], NULL, 0);
        else if (strcmp(a, "--gbps") == 0 && v)
            o.gbps = strtod(argv[++i], NULL);
        else if (strcmp(a, "--repeats") == 0 && v)
            o.repeats = atoi(argv[++i]);
        else if (a[0] != '-' && npos < 3)
            pos[npos++] = argv[i];
        else
            return usage();
    }
    if (!o.json || o.repeats < 1 || o.repeats > MAX_REPEATS || o.count < 64 ||
        o.count > (1u << 28))
        return usage();
    cl_result rc;
    if (strcmp(o.mode, "chunk") == 0) {
        if (npos != 3)
            return usage();
        rc = run_chunk(pos, o.json);
    } else if (strcmp(o.mode, "overlap") == 0 || strcmp(o.mode, "gpu") == 0) {
        if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
            fprintf(stderr, "lab11: MPI_Init failed\n");
            return 1;
        }
        rc = strcmp(o.mode, "gpu") == 0 ? lab11_gpu_run(o.count, o.repeats, o.json)
                                         : run_overlap(&o);
        MPI_Finalize();
    } else {
        return usage();
    }
    if (rc != CL_OK)
        fprintf(stderr, "lab11 %s: %s%s%s\n", o.mode, cl_result_str(rc),
                cl_last_error()[0] ? ": " : "", cl_last_error());
    return cl_exit_status(rc);
}
