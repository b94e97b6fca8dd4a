/* test_sim_node_topo.c: a simulated node read from a recorded topology (node = topo). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/sim.h"

/* dgx-a100's constants, with the links of a recorded 8x RTX 4090 PCIe server. */
static void build(cl_sim_machine *m, const char *topology)
{
    cl_sim_system s;
    assert_int_equal(cl_sim_system_load("dgx-a100", &s), CL_OK);
    s.node = CL_SIM_NODE_TOPO;
    snprintf(s.topology, sizeof s.topology, "%s", topology);
    snprintf(s.path, sizeof s.path, "datasets/systems/dgx-a100.conf");
    cl_sim_overrides ov = {.nodes = 1, .routing = -1};
    assert_int_equal(cl_sim_machine_build(&s, &ov, m), CL_OK);
}

/* The narrowest link on the route from GPU a to GPU b, GB/s. */
static double route_gbps(cl_sim_machine *m, int a, int b, cl_sim_pclass *cls)
{
    int path[CL_SIM_MAX_PATH];
    int len = cl_sim_route(m, a, b, -1, 0, path, CL_SIM_MAX_PATH, cls);
    assert_true(len > 0);
    double bw = 1e30;
    for (int i = 0; i < len; i++)
        bw = m->g.l[path[i]].bw < bw ? m->g.l[path[i]].bw : bw;
    return bw / 1e9;
}

static void test_pcie_server(void **state)
{
    (void)state;
    cl_sim_machine m;
    build(&m, "../topologies/pcie-rtx4090-8x.topo.txt"); /* beside the system file */
    cl_sim_pclass cls;
    assert_int_equal(m.gpus, 8);
    assert_float_equal(route_gbps(&m, 0, 3, &cls), 24.0, 1e-9); /* PIX: PCIe */
    assert_int_equal(cls, CL_SIM_P_PCI);
    assert_float_equal(route_gbps(&m, 1, 6, &cls), 16.0, 1e-9); /* SYS: the SMP link */
    cl_sim_machine_free(&m);
}

static void test_nvswitch_server(void **state)
{
    (void)state;
    cl_sim_machine m;
    build(&m, "../topologies/hgx-a100.topo.txt");
    cl_sim_pclass cls;
    assert_float_equal(route_gbps(&m, 2, 7, &cls), 240.0, 1e-9); /* NV12 x 20 GB/s */
    assert_int_equal(cls, CL_SIM_P_NVL);
    cl_sim_machine_free(&m);
}

static void test_wrong_gpu_count(void **state)
{
    (void)state;
    cl_sim_system s;
    cl_sim_machine m;
    assert_int_equal(cl_sim_system_load("dgx-a100", &s), CL_OK);
    s.node = CL_SIM_NODE_TOPO;
    s.gpus_per_node = 4;
    snprintf(s.topology, sizeof s.topology, "../topologies/hgx-a100.topo.txt");
    snprintf(s.path, sizeof s.path, "datasets/systems/dgx-a100.conf");
    cl_sim_overrides ov = {.nodes = 1, .routing = -1};
    assert_int_equal(cl_sim_machine_build(&s, &ov, &m), CL_ERR_INVALID);
    assert_non_null(strstr(cl_last_error(), "8 GPUs"));
    cl_sim_machine_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pcie_server),
        cmocka_unit_test(test_nvswitch_server),
        cmocka_unit_test(test_wrong_gpu_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
