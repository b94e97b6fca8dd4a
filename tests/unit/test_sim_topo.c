/* test_sim_topo.c: servers built from topo -m matrices and ring channels, against hand-computed
 * cases. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sim/sim_system.h"
#include "sim/sim_topo.h"
#include "topo.h"

#define NEAR(a, b) assert_true(fabs((a) - (double)(b)) <= 1e-9 * fabs((double)(b)) + 1e-12)

static cl_topo topo;
static cl_sim_topo_net net;

static void build(const char *text, double nv, double pci, double sys)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    assert_non_null(f);
    assert_int_equal(cl_topo_parse_smi(f, "test", &topo), CL_OK);
    fclose(f);
    cl_sim_topo_params p = {.nvlink_gbps = nv, .pci_gbps = pci, .sys_gbps = sys};
    assert_int_equal(cl_sim_topo_net_build(&topo, &p, &net), CL_OK);
}

static double busbw(const int *rings, int n)
{
    double bw = -1;
    assert_int_equal(cl_sim_topo_rings_busbw(&net, rings, n, &bw), CL_OK);
    return bw;
}

/* Two PCIe switches of two GPUs on two sockets: an index ring crosses the 10 GB/s SMP
 * link once each way; an interleaved ring crosses it twice each way (5 GB/s). */
static void test_pcie_two_sockets(void **state)
{
    (void)state;
    build("\tGPU0\tGPU1\tGPU2\tGPU3\n"
          "GPU0\t X \tPIX\tSYS\tSYS\n"
          "GPU1\tPIX\t X \tSYS\tSYS\n"
          "GPU2\tSYS\tSYS\t X \tPIX\n"
          "GPU3\tSYS\tSYS\tPIX\t X \n",
          20, 24, 10);
    assert_int_equal(net.ngpus, 4);
    assert_int_equal(net.nvswitch, 0);
    assert_string_equal(net.path_code[0][1], "PIX");
    assert_string_equal(net.path_code[1][2], "SYS");
    assert_int_equal(net.npath[0][1], 2);
    int index[4] = {0, 1, 2, 3}, cross[4] = {0, 2, 1, 3};
    NEAR(busbw(index, 1), 10);
    NEAR(busbw(cross, 1), 5);
    cl_sim_topo_net_free(&net);
}

/* Every pair NV12 on 3 GPUs: 24 links per GPU is more than a GPU has, so an NVSwitch
 * with 12 x 20 = 240 GB/s ports; any number of rings shares the ports. */
static void test_nvswitch(void **state)
{
    (void)state;
    build("\tGPU0\tGPU1\tGPU2\n"
          "GPU0\t X \tNV12\tNV12\n"
          "GPU1\tNV12\t X \tNV12\n"
          "GPU2\tNV12\tNV12\t X \n",
          20, 24, 16);
    assert_int_equal(net.nvswitch, 1);
    assert_int_equal(net.npath[0][2], 2);
    assert_string_equal(net.path_code[0][2], "NVL");
    int rings[6] = {0, 1, 2, 0, 2, 1};
    NEAR(busbw(rings, 1), 240);
    NEAR(busbw(rings, 2), 240);
    cl_sim_topo_net_free(&net);
}

/* A ring of single NVLinks: one channel 20 GB/s, the ring and its reverse 40, the
 * same ring twice still 20; a repeated GPU is rejected. */
static void test_nvlink_ring(void **state)
{
    (void)state;
    build("\tGPU0\tGPU1\tGPU2\tGPU3\n"
          "GPU0\t X \tNV1\tSYS\tNV1\n"
          "GPU1\tNV1\t X \tNV1\tSYS\n"
          "GPU2\tSYS\tNV1\t X \tNV1\n"
          "GPU3\tNV1\tSYS\tNV1\t X \n",
          20, 12, 6);
    assert_int_equal(net.nvswitch, 0);
    assert_int_equal(net.npath[0][1], 1);
    NEAR(cl_sim_topo_link_gbps(&net, net.path[0][1][0]), 20);
    int fwd_rev[8] = {0, 1, 2, 3, 0, 3, 2, 1}, twice[8] = {0, 1, 2, 3, 0, 1, 2, 3};
    NEAR(busbw(fwd_rev, 1), 20);
    NEAR(busbw(fwd_rev, 2), 40);
    NEAR(busbw(twice, 2), 20);
    int bad[4] = {0, 1, 1, 3};
    double bw;
    assert_int_equal(cl_sim_topo_ring_ok(&net, bad), 0);
    assert_int_equal(cl_sim_topo_rings_busbw(&net, bad, 1, &bw), CL_ERR_INVALID);
    cl_sim_topo_net_free(&net);
}

/* A system file's node structure is a transcription of a recorded topology:
 * check it against the recording, pair by pair. */
static void check_system_matches(const char *system, const char *recording)
{
    static cl_sim_system sys;
    static cl_topo t;
    char path[256];
    snprintf(path, sizeof path, "datasets/systems/%s.conf", system);
    assert_int_equal(cl_sim_system_parse(path, &sys), CL_OK);
    snprintf(path, sizeof path, "datasets/topologies/%s", recording);
    assert_int_equal(cl_topo_load(path, &t), CL_OK);
    int g = cl_topo_gpu_count(&t);
    assert_int_equal(sys.gpus_per_node, g);
    for (int a = 0; a < g; a++)
        for (int b = 0; b < g; b++) {
            if (a == b)
                continue;
            int want = t.link[a][b].kind == CL_LINK_NVLINK ? t.link[a][b].nvlinks : 0;
            int got = 0;
            if (sys.node == CL_SIM_NODE_NVSWITCH)
                got = sys.nvlinks_per_gpu;
            for (int i = 0; i < sys.nnvpairs; i++)
                if ((sys.nvpairs[i].a == a && sys.nvpairs[i].b == b) ||
                    (sys.nvpairs[i].a == b && sys.nvpairs[i].b == a))
                    got = sys.nvpairs[i].count;
            if (got != want)
                fail_msg("%s: GPU%d-GPU%d has %d NVLinks, %s says %d", system, a, b, got, recording,
                         want);
        }
}

static void test_systems_match_recordings(void **state)
{
    (void)state;
    check_system_matches("dgx1-v100", "dgx1-v100.topo.txt");
    check_system_matches("dgx-a100", "hgx-a100.topo.txt");
    check_system_matches("dgx-h100", "ibm-vpc-h100-vsi.nccl.xml");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pcie_two_sockets),
        cmocka_unit_test(test_nvswitch),
        cmocka_unit_test(test_nvlink_ring),
        cmocka_unit_test(test_systems_match_recordings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
