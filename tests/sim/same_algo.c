/* same_algo.c: one ring allreduce written against p2p.h, run unchanged on any backend.
 *
 * Usage: same_algo [--backend cpu|sim] [--nranks N] [--system NAME] [--count C]
 *   cpu: mpirun -np 4 ./same_algo --backend cpu
 *   sim: ./same_algo --backend sim --nranks 4 --system dgx-a100
 * Rank 0 prints one line per element block checksum and "result ok|wrong";
 * the data are integers in float range, so every backend prints the same bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"
#include "p2p.h"

typedef struct job {
    size_t count;
    int failed;
} job;

/* In-place ring allreduce (reduce-scatter, then allgather) of count floats. */
static cl_result ring_allreduce(cl_comm *c, float *buf, float *tmp, size_t count)
{
    int n = cl_comm_size(c), r = cl_comm_rank(c);
    size_t chunk = (count + n - 1) / n;
    int right = (r + 1) % n, left = (r + n - 1) % n;
    for (int s = 0; s < n - 1; s++) {
        int si = (r - s + n) % n, ri = (r - s - 1 + 2 * n) % n;
        size_t so = si * chunk, ro = ri * chunk;
        size_t sl = so < count ? (count - so < chunk ? count - so : chunk) : 0;
        size_t rl = ro < count ? (count - ro < chunk ? count - ro : chunk) : 0;
        CL_CHECK(cl_sendrecv(c, buf + (so < count ? so : 0), sl * sizeof *buf, right, tmp,
                             rl * sizeof *buf, left));
        CL_CHECK(cl_reduce_local(c, buf + (ro < count ? ro : 0), tmp, rl, CL_FLOAT32, CL_SUM));
    }
    for (int s = 0; s < n - 1; s++) {
        int si = (r + 1 - s + n) % n, ri = (r - s + n) % n;
        size_t so = si * chunk, ro = ri * chunk;
        size_t sl = so < count ? (count - so < chunk ? count - so : chunk) : 0;
        size_t rl = ro < count ? (count - ro < chunk ? count - ro : chunk) : 0;
        CL_CHECK(cl_sendrecv(c, buf + (so < count ? so : 0), sl * sizeof *buf, right,
                             buf + (ro < count ? ro : 0), rl * sizeof *buf, left));
    }
    return CL_OK;
}

static cl_result body(cl_comm *c, void *arg)
{
    job *j = arg;
    int n = cl_comm_size(c), r = cl_comm_rank(c);
    size_t count = j->count;
    float *host = malloc(count * sizeof *host);
    float *buf, *tmp;
    if (!host)
        return CL_ERR_NOMEM;
    CL_CHECK(cl_mem_alloc(c, count * sizeof *buf, (void **)&buf));
    CL_CHECK(cl_mem_alloc(c, count * sizeof *tmp, (void **)&tmp));
    for (size_t i = 0; i < count; i++)
        host[i] = (float)((r + 1) * (int)(i % 97 + 1));
    CL_CHECK(cl_mem_upload(c, buf, host, count * sizeof *buf));
    CL_CHECK(ring_allreduce(c, buf, tmp, count));
    CL_CHECK(cl_mem_download(c, host, buf, count * sizeof *buf));
    long wrong = 0;
    for (size_t i = 0; i < count; i++)
        if (host[i] != (float)(n * (n + 1) / 2 * (int)(i % 97 + 1)))
            wrong++;
    if (r == 0) {
        unsigned long sum = 0;
        for (size_t i = 0; i < count; i++) {
            unsigned u;
            memcpy(&u, &host[i], sizeof u);
            sum = sum * 31 + u;
        }
        printf("ranks %d count %zu checksum %016lx\n", n, count, sum);
        printf("result %s (%ld wrong)\n", wrong ? "wrong" : "ok", wrong);
    }
    if (wrong)
        j->failed = 1;
    cl_mem_free(c, buf);
    cl_mem_free(c, tmp);
    free(host);
    return wrong ? CL_ERR_MISMATCH : CL_OK;
}

int main(int argc, char **argv)
{
    cl_launch_opts o = {
        .backend = "cpu", .nranks = 4, .system = "dgx-a100", .argc = &argc, .argv = &argv};
    job j = {.count = 100003};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--backend"))
            o.backend = argv[i + 1];
        else if (!strcmp(argv[i], "--nranks"))
            o.nranks = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--system"))
            o.system = argv[i + 1];
        else if (!strcmp(argv[i], "--count"))
            j.count = (size_t)atol(argv[i + 1]);
        else {
            fprintf(stderr, "same_algo: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    cl_result rc = cl_launch(&o, body, &j);
    if (rc != CL_OK) {
        fprintf(stderr, "same_algo: %s: %s\n", cl_result_str(rc), cl_last_error());
        return cl_exit_status(rc);
    }
    return 0;
}
