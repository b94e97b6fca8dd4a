/* test_sim_channels.c: NCCL's ring search, its per-channel cap, routes (NVB, SHM, NET) and the
 * training-step model, against hand-computed cases and the recorded machines. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sim/sim_train.h"
#include "topo.h"

#define NEAR(a, b) assert_true(fabs((a) - (double)(b)) <= 1e-6 * fabs((double)(b)) + 1e-9)

static cl_topo topo;
static cl_sim_topo_net net;

static void build_text(const char *text, cl_sim_topo_params p)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    assert_non_null(f);
    assert_int_equal(cl_topo_parse_smi(f, "test", &topo), CL_OK);
    fclose(f);
    assert_int_equal(cl_sim_topo_net_build(&topo, &p, &net), CL_OK);
}

static void build_file(const char *name, cl_sim_topo_params p)
{
    char path[256];
    snprintf(path, sizeof path, "datasets/topologies/%s", name);
    assert_int_equal(cl_topo_load(path, &topo), CL_OK);
    assert_int_equal(cl_sim_topo_net_build(&topo, &p, &net), CL_OK);
}

static double busbw(const cl_sim_channels *c)
{
    double bw = -1;
    assert_int_equal(cl_sim_channels_busbw(&net, &c, 1, &bw), CL_OK);
    return bw;
}

static void search_all(int sm, cl_sim_channels *c)
{
    int m[CL_SIM_TOPO_MAX_GPUS];
    for (int i = 0; i < net.ngpus; i++)
        m[i] = i;
    assert_int_equal(cl_sim_channels_search(&net, m, net.ngpus, sm, CL_SIM_CHANNELS_MAX, c), CL_OK);
}

/* NCCL's table: 40 GB/s is the most one channel gets before Hopper, 60 from Hopper on. */
static void test_speed_tables(void **state)
{
    (void)state;
    NEAR(cl_sim_channel_cap(70, 0), 40);
    NEAR(cl_sim_channel_cap(80, 0), 40);
    NEAR(cl_sim_channel_cap(90, 0), 60);
    NEAR(cl_sim_channel_cap(90, 1), 48);
    int n = 6;
    double s = 40;
    cl_sim_channels_dup(80, &n, &s); /* A100: 6 x 40 -> 12 x 20 */
    assert_int_equal(n, 12);
    NEAR(s, 20);
    n = 6, s = 60;
    cl_sim_channels_dup(90, &n, &s); /* H100: 6 x 60 -> 12 x 30 */
    assert_int_equal(n, 12);
    NEAR(s, 30);
    n = 6, s = 20;
    cl_sim_channels_dup(70, &n, &s); /* below 25 GB/s: unchanged */
    assert_int_equal(n, 6);
    n = 8, s = 40;
    cl_sim_channels_dup(90, &n, &s); /* Hopper, under 50 GB/s with more than 4 channels */
    assert_int_equal(n, 8);
}

/* An NVSwitch port of 12 x 20 GB/s: one ring moves 40 (the cap), NCCL's search finds 6. */
static void test_nvswitch_needs_channels(void **state)
{
    (void)state;
    build_file("hgx-a100.topo.txt",
               (cl_sim_topo_params){.nvlink_gbps = 20, .pci_gbps = 24, .sys_gbps = 16});
    static cl_sim_channels one, all;
    one.k = 8, one.n = 1, one.cap = 40;
    for (int i = 0; i < 8; i++)
        one.ring[0][i] = i;
    NEAR(busbw(&one), 40);
    search_all(80, &all);
    assert_int_equal(all.n, 6);
    NEAR(all.speed, 40);
    NEAR(busbw(&all), 240);
    cl_sim_topo_net_free(&net);
}

/* DGX-1: 6 rings of 20 GB/s use every NVLink in both directions (120 GB/s); GPUs 3 and 4
 * have no NVLink but two common NVLink neighbours, so their route is NVB. */
static void test_dgx1(void **state)
{
    (void)state;
    build_file("dgx1-v100.topo.txt",
               (cl_sim_topo_params){.nvlink_gbps = 20, .pci_gbps = 12, .sys_gbps = 6});
    assert_string_equal(net.path_code[3][4], "NVB");
    assert_int_equal(net.npath[3][4], 2);
    assert_string_equal(net.path_code[0][3], "NVL");
    static cl_sim_channels all;
    search_all(70, &all);
    NEAR(all.n * all.speed, 120);
    NEAR(busbw(&all), 120);
    assert_int_equal(cl_sim_channels_worst_path(&net, &all), CL_SIM_PATH_NVL);
    cl_sim_topo_net_free(&net);
}

/* NCCL_P2P_LEVEL: PIX pairs go through host memory when the level is below PIX. */
static void test_p2p_level(void **state)
{
    (void)state;
    const char *text = "\tGPU0\tGPU1\tGPU2\tGPU3\n"
                       "GPU0\t X \tPIX\tSYS\tSYS\n"
                       "GPU1\tPIX\t X \tSYS\tSYS\n"
                       "GPU2\tSYS\tSYS\t X \tPIX\n"
                       "GPU3\tSYS\tSYS\tPIX\t X \n";
    build_text(text, (cl_sim_topo_params){.nvlink_gbps = 20, .pci_gbps = 24, .sys_gbps = 10});
    assert_int_equal(net.npath[0][1], 2); /* GPU, switch, GPU */
    cl_sim_topo_net_free(&net);
    build_text(
        text, (cl_sim_topo_params){
                  .nvlink_gbps = 20, .pci_gbps = 24, .sys_gbps = 10, .p2p_level = CL_SIM_PATH_NVL});
    assert_int_equal(net.npath[0][1], 6); /* up to the CPU and back down */
    assert_string_equal(net.path_code[0][1], "PIX");
    cl_sim_topo_net_free(&net);
}

/* Two nodes: GPU pairs across them go through the nearest NICs and the network switch;
 * two groups sharing the socket link get half of it each. */
static void test_two_nodes(void **state)
{
    (void)state;
    build_file("pcie-rtx4090-8x.topo.txt",
               (cl_sim_topo_params){
                   .nvlink_gbps = 12, .pci_gbps = 24, .sys_gbps = 10, .nodes = 2, .net_gbps = 12});
    assert_int_equal(net.ngpus, 16);
    assert_int_equal(net.nnics, 1);
    assert_string_equal(net.path_code[0][8], "NET");
    NEAR(cl_sim_topo_path_gbps(&net, 0, 8), 12);
    assert_string_equal(net.path_code[0][4], "SYS");
    static cl_sim_channels a, b;
    a.k = b.k = 2, a.n = b.n = 1;
    a.ring[0][0] = 0, a.ring[0][1] = 4; /* both across the sockets of node 0 */
    b.ring[0][0] = 1, b.ring[0][1] = 5;
    const cl_sim_channels *sets[2] = {&a, &b};
    double bw[2];
    assert_int_equal(cl_sim_channels_busbw(&net, sets, 2, bw), CL_OK);
    NEAR(bw[0], 5);
    NEAR(bw[1], 5);
    cl_sim_topo_net_free(&net);
}

/* The step model on the chapter's reconstructed matrix: TP 4 inside the NV2 domains
 * (6 rings of 20 GB/s: 120) against TP 8 across them (4 NV1 links: 80). */
static void test_train_chapter(void **state)
{
    (void)state;
    build_file("chapter1-hybrid-mesh.topo.txt",
               (cl_sim_topo_params){.nvlink_gbps = 20, .pci_gbps = 12, .sys_gbps = 6});
    cl_sim_train *t;
    assert_int_equal(cl_sim_train_new(&net, 70, &t), CL_OK);
    cl_sim_train_model m = {.params = 6.7e9,
                            .layers = 32,
                            .hidden = 4096,
                            .seq_len = 2048,
                            .micro_batch = 1,
                            .global_batch = 16,
                            .bytes = 2,
                            .compute_s = 1,
                            .gpu_mem_bytes = 32.0 * 1073741824};
    cl_sim_train_plan p = {.tp = 4, .pp = 1, .dp = 2};
    for (int r = 0; r < 8; r++)
        p.gpu_of_rank[r] = r;
    cl_sim_train_cost c4, c8;
    assert_int_equal(cl_sim_train_cost_of(t, &m, &p, &c4), CL_OK);
    NEAR(c4.tp_busbw, 120);
    NEAR(c4.dp_busbw, 20);
    assert_int_equal(c4.fits, 1);
    p.tp = 8, p.dp = 1;
    assert_int_equal(cl_sim_train_cost_of(t, &m, &p, &c8), CL_OK);
    NEAR(c8.tp_busbw, 80);
    assert_true(c8.tp_s > c4.tp_s + c4.dp_s);
    /* Megatron's orders: rank 5 of 2 x 2 x 2 */
    cl_sim_train_plan q = {.tp = 2, .pp = 2, .dp = 2, .order = CL_SIM_ORDER_TP_DP_PP};
    int x, d, s;
    cl_sim_train_coords(&q, 5, &x, &d, &s);
    assert_true(x == 1 && d == 0 && s == 1);
    q.order = CL_SIM_ORDER_TP_PP_DP;
    cl_sim_train_coords(&q, 5, &x, &d, &s);
    assert_true(x == 1 && d == 1 && s == 0);
    assert_int_equal(cl_sim_train_rank(&q, 1, 1, 0), 5);
    cl_sim_train_plan best;
    cl_sim_train_cost bc;
    assert_int_equal(cl_sim_train_best(t, &m, NULL, &best, &bc), CL_OK);
    assert_true(bc.step_s <= c4.step_s + 1e-12);
    cl_sim_train_free(t);
    cl_sim_topo_net_free(&net);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_speed_tables), cmocka_unit_test(test_nvswitch_needs_channels),
        cmocka_unit_test(test_dgx1),         cmocka_unit_test(test_p2p_level),
        cmocka_unit_test(test_two_nodes),    cmocka_unit_test(test_train_chapter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
