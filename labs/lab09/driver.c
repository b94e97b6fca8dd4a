/* driver.c: lab 09's harness: maps the rings, runs the student's transport, verifies, times.
 *
 *   lab09 stress    [--messages N] [--seed S] [--nslots K] [--chunk B] --json FILE
 *       2 ranks send each other N sequence-numbered, checksummed messages of
 *       random sizes at once, over small rings whose counters start just below
 *       2^64; every message is checked (torn, lost, reordered).
 *   lab09 allreduce [--seed S] --json FILE
 *       the student's AllReduce on 1..N ranks: uneven counts, 4 types, 4 ops.
 *   lab09 bench     [--bytes N] [--repeats R] --json FILE
 *       2 ranks: rank 0 -> rank 1 over the student's ring, interleaved with
 *       single-thread memcpy of the same bytes and MPI send/recv (Open MPI's
 *       shared-memory path) of the same bytes.
 *
 * Every mode takes --deadline SECONDS (default 60): a rank that is still
 * running then (a deadlock) prints so and exits, and mpirun stops the rest.
 * The shared segment's name is removed before any student code runs
 * (common/shm.h), so nothing is left in /dev/shm whatever happens.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lab09.h"
#include "msg.h"
#include "shm.h"

#define MAX_REPEATS 64

typedef struct options {
    const char *mode;
    const char *json_path;
    cl_launch_opts launch;
    int messages;
    uint64_t seed;
    uint64_t nslots;
    size_t chunk;
    size_t bytes;
    int repeats;
} options;

/* --- the segment: one ring per rank, ring k from rank k to rank k+1 ------------------ */

typedef struct rings {
    cl_shm shm;
    lab09_ring ring[64];
    int n;
} rings;

static cl_result rings_open(rings *R, cl_comm *comm, uint64_t nslots, size_t chunk,
                            uint64_t start)
{
    int p = cl_comm_size(comm);
    if (p > 64) {
        cl_set_error("at most 64 ranks");
        return CL_ERR_INVALID;
    }
    size_t one = lab09_ring_bytes(nslots, chunk);
    CL_CHECK(cl_shm_open_comm(&R->shm, comm, "lab09", one * (size_t)p));
    R->n = p;
    for (int k = 0; k < p; k++)
        lab09_ring_map(&R->ring[k], (unsigned char *)R->shm.base + (size_t)k * one, nslots,
                       chunk);
    if (cl_comm_rank(comm) == 0)
        for (int k = 0; k < p; k++)
            lab09_ring_reset(&R->ring[k], start);
    return cl_barrier(comm);
}

static lab09_ring *to_right(rings *R, int rank) { return &R->ring[rank]; }
static lab09_ring *from_left(rings *R, int rank) { return &R->ring[(rank - 1 + R->n) % R->n]; }

/* Sum counters over ranks onto rank 0 (plain MPI underneath: host memory on cpu). */
static cl_result sum_to_root(cl_comm *comm, long long *v, int n)
{
    int rank = cl_comm_rank(comm), p = cl_comm_size(comm);
    long long theirs[16];
    if (rank != 0)
        return cl_send(comm, v, (size_t)n * sizeof *v, 0);
    for (int r = 1; r < p; r++) {
        CL_CHECK(cl_recv(comm, theirs, (size_t)n * sizeof *v, r));
        for (int i = 0; i < n; i++)
            v[i] += theirs[i];
    }
    return CL_OK;
}

/* --- stress --------------------------------------------------------------------------- */

static void short_pause(uint64_t h)
{
    if (h % 4 != 0)
        return;
    double until = cl_wtime() + (double)(h % 40) * 1e-6;
    while (cl_wtime() < until) {
    }
}

static cl_result stress_body(cl_comm *comm, void *arg)
{
    const options *opt = arg;
    int rank = cl_comm_rank(comm);
    if (cl_comm_size(comm) != 2) {
        cl_set_error("stress needs 2 ranks, got %d", cl_comm_size(comm));
        return CL_ERR_INVALID;
    }
    rings R;
    CL_CHECK(rings_open(&R, comm, opt->nslots, opt->chunk, UINT64_MAX - 37));
    size_t cap = 6 * opt->chunk + 64;
    unsigned char *out = malloc(cap), *in = malloc(cap);
    if (!out || !in)
        return CL_ERR_NOMEM;
    long long counts[4] = {0}; /* messages, torn, lost/reordered, bytes */
    uint64_t my_stream = opt->seed * 2 + (uint64_t)rank, peer_stream = opt->seed * 2 + 1 - rank;
    cl_result rc = CL_OK;
    for (int k = 0; k < opt->messages && rc == CL_OK; k++) {
        size_t sb = lab09_msg_size((uint64_t)k, my_stream, opt->chunk);
        size_t rb = lab09_msg_size((uint64_t)k, peer_stream, opt->chunk);
        lab09_msg_fill(out, sb, (uint64_t)k, my_stream);
        memset(in, 0xa5, rb + 1);
        short_pause(cl_data_hash(my_stream ^ (uint64_t)k));
        rc = lab09_sendrecv(to_right(&R, rank), out, sb, from_left(&R, rank), in, rb);
        if (rc != CL_OK)
            break;
        int v = lab09_msg_check(in, rb, (uint64_t)k, peer_stream);
        if (v == 0 && in[rb] != 0xa5)
            v = 2; /* wrote past the message */
        counts[0]++;
        counts[1] += v == 2;
        counts[2] += v == 1;
        counts[3] += (long long)rb;
    }
    if (rc != CL_OK) /* the peer may be waiting for us: cl_launch stops the job */
        return rc;
    CL_CHECK(cl_barrier(comm));
    CL_CHECK(sum_to_root(comm, counts, 4));
    if (rank == 0) {
        cl_json j;
        CL_CHECK(cl_json_open(&j, opt->json_path));
        cl_json_object_start(&j, NULL);
        cl_json_string(&j, "mode", "stress");
        cl_json_int(&j, "messages", counts[0]);
        cl_json_int(&j, "expected_messages", 2LL * opt->messages);
        cl_json_int(&j, "torn", counts[1]);
        cl_json_int(&j, "lost_or_reordered", counts[2]);
        cl_json_int(&j, "bytes", counts[3]);
        cl_json_int(&j, "nslots", (long long)opt->nslots);
        cl_json_int(&j, "chunk", (long long)opt->chunk);
        cl_json_object_end(&j);
        CL_CHECK(cl_json_close(&j));
    }
    free(out);
    free(in);
    return cl_shm_detach(&R.shm);
}

/* --- allreduce ------------------------------------------------------------------------ */

static cl_result allreduce_body(cl_comm *comm, void *arg)
{
    const options *opt = arg;
    int rank = cl_comm_rank(comm), p = cl_comm_size(comm);
    rings R;
    CL_CHECK(rings_open(&R, comm, 4, 4104, UINT64_MAX - 11));
    const size_t counts[] = {0, 1, 3, 7, 1000, 12345, 100003};
    enum { NCASES = (int)(sizeof counts / sizeof counts[0]) };
    size_t maxc = 100003;
    void *buf = malloc(maxc * 8), *scratch = malloc((maxc / (size_t)p + 1) * 8);
    if (!buf || !scratch)
        return CL_ERR_NOMEM;
    cl_pretouch(buf, maxc * 8);
    cl_pretouch(scratch, (maxc / (size_t)p + 1) * 8);
    lab09_comm c = {.rank = rank, .size = p, .to_right = to_right(&R, rank),
                    .from_left = from_left(&R, rank), .scratch = scratch,
                    .scratch_bytes = (maxc / (size_t)p + 1) * 8};
    long long wrong[NCASES] = {0};
    for (int i = 0; i < NCASES; i++) {
        cl_dtype t = (cl_dtype)(i % CL_DTYPE_COUNT);
        cl_op op = (cl_op)((i / 2 + (int)opt->seed) % CL_OP_COUNT);
        uint64_t seed = cl_data_hash(opt->seed * 131 + (uint64_t)i);
        CL_CHECK(cl_data_fill(buf, 0, counts[i], t, op, rank, seed));
        CL_CHECK(cl_barrier(comm));
        CL_CHECK(lab09_allreduce(&c, buf, counts[i], t, op));
        size_t bad = 0;
        CL_CHECK(cl_data_check(buf, 0, counts[i], t, op, p, seed, &bad));
        wrong[i] = (long long)bad;
    }
    CL_CHECK(cl_barrier(comm));
    CL_CHECK(sum_to_root(comm, wrong, NCASES));
    if (rank == 0) {
        cl_json j;
        CL_CHECK(cl_json_open(&j, opt->json_path));
        cl_json_object_start(&j, NULL);
        cl_json_string(&j, "mode", "allreduce");
        cl_json_int(&j, "ranks", p);
        cl_json_array_start(&j, "cases");
        for (int i = 0; i < NCASES; i++) {
            cl_json_object_start(&j, NULL);
            cl_json_int(&j, "count", (long long)counts[i]);
            cl_json_string(&j, "dtype", cl_dtype_name((cl_dtype)(i % CL_DTYPE_COUNT)));
            cl_json_string(&j, "op", cl_op_name((cl_op)((i / 2 + (int)opt->seed) % CL_OP_COUNT)));
            cl_json_int(&j, "wrong", wrong[i]);
            cl_json_object_end(&j);
        }
        cl_json_array_end(&j);
        cl_json_object_end(&j);
        CL_CHECK(cl_json_close(&j));
    }
    free(buf);
    free(scratch);
    return cl_shm_detach(&R.shm);
}

/* --- bench ---------------------------------------------------------------------------- */

static cl_result bench_body(cl_comm *comm, void *arg)
{
    const options *opt = arg;
    int rank = cl_comm_rank(comm);
    if (cl_comm_size(comm) != 2) {
        cl_set_error("bench needs 2 ranks, got %d", cl_comm_size(comm));
        return CL_ERR_INVALID;
    }
    rings R;
    CL_CHECK(rings_open(&R, comm, opt->nslots, opt->chunk, 0));
    size_t n = opt->bytes;
    unsigned char *src, *dst;
    CL_CHECK(cl_mem_alloc(comm, n, (void **)&src)); /* pre-touched */
    CL_CHECK(cl_mem_alloc(comm, n, (void **)&dst));
    for (size_t i = 0; i < n; i++)
        src[i] = (unsigned char)(i * 131 + 7 + (size_t)rank);
    /* ~25 ms per sample at 10 GB/s */
    int iters = (int)(250e6 / (double)n) < 1 ? 1 : (int)(250e6 / (double)n);
    double ring_gbs[MAX_REPEATS], mpi_gbs[MAX_REPEATS], memcpy_gbs[MAX_REPEATS];
    long long bad = 0;
    for (int r = -1; r < opt->repeats; r++) { /* r == -1: warm-up, not recorded */
        /* single-thread memcpy on rank 0 */
        CL_CHECK(cl_barrier(comm));
        double t0 = cl_wtime();
        if (rank == 0)
            for (int i = 0; i < iters; i++) {
                memcpy(dst, src, n);
                __asm__ volatile("" ::"r"(dst) : "memory");
            }
        double tm = cl_wtime() - t0;
        /* MPI send/recv: Open MPI's shared-memory path */
        CL_CHECK(cl_barrier(comm));
        t0 = cl_wtime();
        for (int i = 0; i < iters; i++) {
            if (rank == 0)
                CL_CHECK(cl_send(comm, src, n, 1));
            else
                CL_CHECK(cl_recv(comm, dst, n, 0));
        }
        double tmpi = cl_wtime() - t0;
        /* the student's ring */
        if (rank == 1)
            memset(dst, 0, n);
        CL_CHECK(cl_barrier(comm));
        t0 = cl_wtime();
        for (int i = 0; i < iters; i++) {
            if (rank == 0)
                CL_CHECK(lab09_sendrecv(to_right(&R, 0), src, n, NULL, NULL, 0));
            else
                CL_CHECK(lab09_sendrecv(NULL, NULL, 0, from_left(&R, 1), dst, n));
        }
        double tring = cl_wtime() - t0;
        if (rank == 1)
            for (size_t i = 0; i < n; i++)
                bad += dst[i] != (unsigned char)(i * 131 + 7);
        /* rank 1 finished last for the transfers, rank 0 did the memcpy */
        double times[2] = {tmpi, tring};
        if (rank == 1)
            CL_CHECK(cl_send(comm, times, sizeof times, 0));
        else
            CL_CHECK(cl_recv(comm, times, sizeof times, 1));
        if (rank == 0 && r >= 0) {
            memcpy_gbs[r] = (double)n * iters / tm / 1e9;
            mpi_gbs[r] = (double)n * iters / times[0] / 1e9;
            ring_gbs[r] = (double)n * iters / times[1] / 1e9;
        }
    }
    CL_CHECK(sum_to_root(comm, &bad, 1));
    if (rank == 0) {
        cl_json j;
        CL_CHECK(cl_json_open(&j, opt->json_path));
        cl_json_object_start(&j, NULL);
        cl_json_string(&j, "mode", "bench");
        cl_json_int(&j, "bytes", (long long)n);
        cl_json_int(&j, "iters", iters);
        cl_json_int(&j, "nslots", (long long)opt->nslots);
        cl_json_int(&j, "chunk", (long long)opt->chunk);
        cl_json_int(&j, "corrupt_bytes", bad);
        cl_json_number_array(&j, "ring_gbps", ring_gbs, (size_t)opt->repeats);
        cl_json_number_array(&j, "mpi_gbps", mpi_gbs, (size_t)opt->repeats);
        cl_json_number_array(&j, "memcpy_gbps", memcpy_gbs, (size_t)opt->repeats);
        cl_json_object_end(&j);
        CL_CHECK(cl_json_close(&j));
    }
    CL_CHECK(cl_mem_free(comm, src));
    CL_CHECK(cl_mem_free(comm, dst));
    return cl_shm_detach(&R.shm);
}

/* --- main ----------------------------------------------------------------------------- */

static void on_deadline(int sig)
{
    static const char msg[] = "lab09: deadline reached: no progress (a deadlock?); stopping\n";
    (void)sig;
    if (write(2, msg, sizeof msg - 1) < 0) {
    }
    _exit(3);
}

static int usage(void)
{
    fprintf(stderr,
            "usage: lab09 stress|allreduce|bench [--messages N] [--seed S] [--nslots K]\n"
            "             [--chunk B] [--bytes N] [--repeats R] [--deadline S] --json FILE\n");
    return 2;
}

int main(int argc, char **argv)
{
    options opt = {.messages = 4000, .seed = 1, .nslots = 4, .chunk = 1000,
                   .bytes = 16 << 20, .repeats = 9};
    opt.launch = (cl_launch_opts){.backend = "cpu", .argc = &argc, .argv = &argv};
    int deadline = 60, nslots_set = 0, chunk_set = 0;
    if (argc < 2)
        return usage();
    opt.mode = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return usage();
        if (strcmp(a, "--json") == 0)
            opt.json_path = v;
        else if (strcmp(a, "--messages") == 0)
            opt.messages = atoi(v);
        else if (strcmp(a, "--seed") == 0)
            opt.seed = strtoull(v, NULL, 0);
        else if (strcmp(a, "--nslots") == 0)
            opt.nslots = strtoull(v, NULL, 0), nslots_set = 1;
        else if (strcmp(a, "--chunk") == 0)
            opt.chunk = strtoull(v, NULL, 0), chunk_set = 1;
        else if (strcmp(a, "--bytes") == 0)
            opt.bytes = strtoull(v, NULL, 0);
        else if (strcmp(a, "--repeats") == 0)
            opt.repeats = atoi(v);
        else if (strcmp(a, "--deadline") == 0)
            deadline = atoi(v);
        else
            return usage();
        i++;
    }
    if (strcmp(opt.mode, "bench") == 0) { /* NCCL-like defaults for bandwidth */
        if (!nslots_set)
            opt.nslots = 8;
        if (!chunk_set)
            opt.chunk = 128 << 10;
    }
    if (opt.messages < 1 || opt.nslots < 1 || (opt.nslots & (opt.nslots - 1)) || opt.chunk < 1 ||
        opt.bytes < 1 || opt.repeats < 1 || opt.repeats > MAX_REPEATS || deadline < 1)
        return usage();
    signal(SIGALRM, on_deadline);
    alarm((unsigned)deadline);

    cl_rank_body body;
    if (strcmp(opt.mode, "stress") == 0)
        body = stress_body;
    else if (strcmp(opt.mode, "allreduce") == 0)
        body = allreduce_body;
    else if (strcmp(opt.mode, "bench") == 0)
        body = bench_body;
    else
        return usage();
    cl_result rc = cl_launch(&opt.launch, body, &opt);
    if (rc != CL_OK)
        fprintf(stderr, "lab09 %s: %s%s%s\n", opt.mode, cl_result_str(rc),
                cl_last_error()[0] ? ": " : "", cl_last_error());
    return cl_exit_status(rc);
}
