/* test_sim_p2p.c: student-style code over p2p.h under the sim backend: data, time, determinism. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coll.h"
#include "harness/harness.h"
#include "launch.h"
#include "p2p.h"

#define NR    8
#define COUNT (NR * 32768) /* floats: 1 MiB per rank, 128 KiB chunks */

typedef struct job {
    double t_end[NR];
    float out[NR][16];
    int wrong;
    int baseline;
} job;

/* Ring allreduce over p2p.h, as a lab would write it (count divisible by n). */
static cl_result ring(cl_comm *c, float *buf, float *tmp, size_t count)
{
    int n = cl_comm_size(c), r = cl_comm_rank(c);
    size_t ch = count / n;
    int right = (r + 1) % n, left = (r + n - 1) % n;
    for (int s = 0; s < n - 1; s++) {
        int si = (r - s + n) % n, ri = (r - s - 1 + 2 * n) % n;
        CL_CHECK(cl_sendrecv(c, buf + si * ch, ch * 4, right, tmp, ch * 4, left));
        CL_CHECK(cl_reduce_local(c, buf + ri * ch, tmp, ch, CL_FLOAT32, CL_SUM));
    }
    for (int s = 0; s < n - 1; s++) {
        int si = (r + 1 - s + n) % n, ri = (r - s + n) % n;
        CL_CHECK(cl_sendrecv(c, buf + si * ch, ch * 4, right, buf + ri * ch, ch * 4, left));
    }
    return CL_OK;
}

static cl_result body(cl_comm *c, void *arg)
{
    job *j = arg;
    int r = cl_comm_rank(c), n = cl_comm_size(c);
    float *buf, *tmp, *scratch, *host = malloc(COUNT * sizeof *host);
    CL_CHECK(cl_mem_alloc(c, COUNT * 4, (void **)&buf));
    CL_CHECK(cl_mem_alloc(c, COUNT * 4, (void **)&tmp));
    CL_CHECK(cl_mem_alloc(c, COUNT * 4, (void **)&scratch));
    for (int i = 0; i < COUNT; i++)
        host[i] = (float)(r + 1) * (float)(i % 13 + 1);
    CL_CHECK(cl_mem_upload(c, buf, host, COUNT * 4));
    CL_CHECK(cl_barrier(c));
    if (j->baseline) { /* the library's AllReduce (what NCCL would run), into tmp */
        cl_coll_args a = {.sendbuf = buf,
                          .recvbuf = tmp,
                          .count = COUNT,
                          .dtype = CL_FLOAT32,
                          .op = CL_SUM,
                          .scratch = scratch,
                          .scratch_bytes = COUNT * 4};
        CL_CHECK(cl_library_coll(c, CL_COLL_ALLREDUCE, &a));
        CL_CHECK(cl_copy_local(c, buf, tmp, COUNT * 4));
    } else {
        CL_CHECK(ring(c, buf, tmp, COUNT));
    }
    j->t_end[r] = cl_comm_time(c);
    CL_CHECK(cl_mem_download(c, host, buf, COUNT * 4));
    for (int i = 0; i < COUNT; i++)
        if (host[i] != (float)(n * (n + 1) / 2) * (float)(i % 13 + 1))
            j->wrong++;
    memcpy(j->out[r], host + COUNT - 16, sizeof j->out[r]);
    cl_mem_free(c, buf);
    cl_mem_free(c, tmp);
    cl_mem_free(c, scratch);
    free(host);
    return CL_OK;
}

static void run(job *j, int baseline)
{
    memset(j, 0, sizeof *j);
    j->baseline = baseline;
    cl_launch_opts o = {.backend = "sim", .nranks = NR, .system = "dgx-a100"};
    cl_result rc = cl_launch(&o, body, j);
    if (rc != CL_OK)
        print_error("%s\n", cl_last_error());
    assert_int_equal(rc, CL_OK);
}

/* Bit-exact data, and the alpha-beta time of the ring on one DGX A100:
 * each step moves a 128 KiB chunk over a 12 x 20 GB/s NVSwitch port after
 * 3.4 us (NVLink Simple) + 2 x 0.0125 us (NVSwitch hop); a reduction of a
 * chunk reads two and writes one chunk at 1610 GB/s; the upload of the input
 * before it crosses PCIe. */
static void test_ring_data_and_time(void **state)
{
    (void)state;
    job j;
    run(&j, 0);
    assert_int_equal(j.wrong, 0);
    double chunk = COUNT / NR * 4.0;
    double step = 3.4e-6 + 0.025e-6 + chunk / 240e9;
    double red = 3 * chunk / 1610e9;
    double upload = COUNT * 4.0 / 24e9; /* the input crosses PCIe Gen4 (24 GB/s) first */
    double want = upload + (NR - 1) * (step + red) + (NR - 1) * step;
    for (int r = 0; r < NR; r++)
        if (!(fabs(j.t_end[r] - want) <= 1e-9 * want))
            fail_msg("rank %d ends at %.6f us, want %.6f us", r, j.t_end[r] * 1e6, want * 1e6);
}

static void test_deterministic(void **state)
{
    (void)state;
    job a, b;
    run(&a, 0);
    run(&b, 0);
    assert_memory_equal(a.t_end, b.t_end, sizeof a.t_end);
    assert_memory_equal(a.out, b.out, sizeof a.out);
}

static void test_baseline_allreduce(void **state)
{
    (void)state;
    job j;
    run(&j, 1);
    assert_int_equal(j.wrong, 0);
    assert_true(j.t_end[0] > 0);
}

static cl_result deadlock_body(cl_comm *c, void *arg)
{
    (void)arg;
    char x[8];
    return cl_recv(c, x, sizeof x, 1 - cl_comm_rank(c)); /* both receive: nobody sends */
}

static void test_deadlock_reported(void **state)
{
    (void)state;
    cl_launch_opts o = {.backend = "sim", .nranks = 2, .system = "dgx-a100"};
    assert_int_equal(cl_launch(&o, deadlock_body, NULL), CL_ERR_BACKEND);
    assert_non_null(strstr(cl_last_error(), "deadlock"));
}

static cl_result size_body(cl_comm *c, void *arg)
{
    (void)arg;
    char x[16] = {0};
    if (cl_comm_rank(c) == 0)
        return cl_send(c, x, 16, 1);
    return cl_recv(c, x, 8, 0);
}

static void test_truncation_rejected(void **state)
{
    (void)state;
    cl_launch_opts o = {.backend = "sim", .nranks = 2, .system = "dgx-a100"};
    assert_int_equal(cl_launch(&o, size_body, NULL), CL_ERR_INVALID);
}

/* cl_agree_gather over more ranks than one cl_agree() combines (CL_AGREE_MAX). */
#define GATHER_RANKS 40
static int64_t gathered[GATHER_RANKS][GATHER_RANKS];

static cl_result gather_body(cl_comm *c, void *arg)
{
    (void)arg;
    int r = cl_comm_rank(c);
    return cl_agree_gather(c, 1000 * r - 7, gathered[r]);
}

static void test_agree_gather(void **state)
{
    (void)state;
    memset(gathered, 0, sizeof gathered);
    cl_launch_opts o = {.backend = "sim", .nranks = GATHER_RANKS, .system = "dgx-a100"};
    assert_int_equal(cl_launch(&o, gather_body, NULL), CL_OK);
    for (int r = 0; r < GATHER_RANKS; r++)
        for (int i = 0; i < GATHER_RANKS; i++)
            assert_int_equal(gathered[r][i], 1000 * i - 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_data_and_time),  cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_baseline_allreduce),  cmocka_unit_test(test_deadlock_reported),
        cmocka_unit_test(test_truncation_rejected), cmocka_unit_test(test_agree_gather),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
