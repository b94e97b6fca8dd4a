/* test_sim_route.c: routing: D-mod-K on a small fat tree, ECMP spread, min-hop, inside a node. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sim/sim.h"

/* A 4-ary fat tree (16 hosts, 8 edge, 8 agg, 4 core switches), one GPU and NIC per node. */
static void build_fattree(cl_sim_machine *m, cl_sim_routing routing)
{
    cl_sim_system s;
    assert_int_equal(cl_sim_system_load("dgx-a100", &s), CL_OK);
    s.fabric = CL_SIM_FABRIC_FATTREE;
    s.fabric_radix = 4;
    s.routing = routing;
    cl_sim_overrides ov = {.nodes = 16, .gpus_per_node = 1, .nics_per_node = 1, .routing = -1};
    assert_int_equal(cl_sim_machine_build(&s, &ov, m), CL_OK);
}

/* Max over switch-to-switch links of the routes of shift permutation `shift`. */
static int shift_max_load(cl_sim_machine *m, int shift)
{
    int *load = calloc((size_t)m->g.nl, sizeof *load);
    int path[CL_SIM_MAX_PATH], worst = 0;
    for (int h = 0; h < 16; h++) {
        int len = cl_sim_route_fabric(m, h, (h + shift) % 16, 0, path, CL_SIM_MAX_PATH);
        assert_true(len >= 2);
        assert_int_equal(path[0], m->nic_up[h]);
        assert_int_equal(path[len - 1], m->nic_down[(h + shift) % 16]);
        for (int i = 1; i + 1 < len; i++) {
            assert_int_equal(m->g.l[path[i]].src, m->g.l[path[i - 1]].dst); /* connected */
            if (++load[path[i]] > worst)
                worst = load[path[i]];
        }
    }
    free(load);
    return worst;
}

static void test_dmodk_shift_is_contention_free(void **state)
{
    (void)state;
    cl_sim_machine m;
    build_fattree(&m, CL_SIM_ROUTE_DMODK);
    assert_int_equal(m.nhosts, 16);
    for (int s = 1; s < 16; s++)
        assert_int_equal(shift_max_load(&m, s), 1);
    cl_sim_machine_free(&m);
}

static void test_ecmp_spreads_and_repeats(void **state)
{
    (void)state;
    cl_sim_machine m;
    build_fattree(&m, CL_SIM_ROUTE_ECMP);
    int path1[CL_SIM_MAX_PATH], path2[CL_SIM_MAX_PATH];
    /* host 0 -> host 15 crosses the core: 2 aggs x 2 cores = 4 paths; 64 qps use them all */
    int used[4096] = {0}, distinct = 0;
    for (int qp = 0; qp < 64; qp++) {
        int n1 = cl_sim_route_fabric(&m, 0, 15, qp, path1, CL_SIM_MAX_PATH);
        int n2 = cl_sim_route_fabric(&m, 0, 15, qp, path2, CL_SIM_MAX_PATH);
        assert_int_equal(n2, n1);
        assert_int_equal(n1, 6); /* nic, edge-agg, agg-core, core-agg, agg-edge, nic */
        assert_memory_equal(path1, path2, sizeof(int) * (size_t)n1); /* deterministic */
        if (!used[path1[2]]++)
            distinct++;
    }
    assert_int_equal(distinct, 4); /* every agg-core uplink of the pod is used */
    /* hashing a shift permutation collides somewhere, unlike D-mod-K */
    int worst = 0;
    for (int s = 1; s < 16; s++) {
        int w = shift_max_load(&m, s);
        worst = w > worst ? w : worst;
    }
    assert_true(worst >= 2);
    cl_sim_machine_free(&m);
}

static void test_minhop_lengths_and_balance(void **state)
{
    (void)state;
    cl_sim_machine m;
    build_fattree(&m, CL_SIM_ROUTE_MINHOP);
    int path[CL_SIM_MAX_PATH];
    assert_int_equal(cl_sim_route_fabric(&m, 0, 1, 0, path, CL_SIM_MAX_PATH), 2); /* same edge */
    assert_int_equal(cl_sim_route_fabric(&m, 0, 2, 0, path, CL_SIM_MAX_PATH), 4); /* same pod */
    assert_int_equal(cl_sim_route_fabric(&m, 0, 4, 0, path, CL_SIM_MAX_PATH), 6); /* via core */
    /* two routes from the same edge to another pod take different uplinks */
    int a[CL_SIM_MAX_PATH], b[CL_SIM_MAX_PATH];
    cl_sim_route_fabric(&m, 0, 8, 0, a, CL_SIM_MAX_PATH);
    cl_sim_route_fabric(&m, 1, 9, 0, b, CL_SIM_MAX_PATH);
    assert_int_not_equal(a[1], b[1]);
    cl_sim_machine_free(&m);
}

/* DGX-1: GPU0-GPU1 is one NVLink, GPU0-GPU5 two NVLink hops through a GPU
 * (NCCL's NVB), GPU0's NIC is the one on its PCIe switch. */
static void test_intra_node_paths(void **state)
{
    (void)state;
    cl_sim_machine m;
    assert_int_equal(cl_sim_machine_load("dgx1-v100", NULL, &m), CL_OK);
    int path[CL_SIM_MAX_PATH];
    cl_sim_pclass cls;
    assert_int_equal(cl_sim_route(&m, 0, 1, -1, 0, path, CL_SIM_MAX_PATH, &cls), 1);
    assert_int_equal(cls, CL_SIM_P_NVL);
    assert_int_equal(cl_sim_route(&m, 0, 5, -1, 0, path, CL_SIM_MAX_PATH, &cls), 2);
    assert_int_equal(cls, CL_SIM_P_NVL);
    assert_int_equal(m.gpu_nic[0], 0);
    assert_int_equal(m.gpu_nic[7], 3);
    cl_sim_machine_free(&m);
    /* PCIe server: GPU0 -> GPU1 share a switch (2 links), GPU0 -> GPU7 cross the SMP link */
    assert_int_equal(cl_sim_machine_load("pcie-8gpu", NULL, &m), CL_OK);
    assert_int_equal(cl_sim_route(&m, 0, 1, -1, 0, path, CL_SIM_MAX_PATH, &cls), 2);
    assert_int_equal(cls, CL_SIM_P_PCI);
    int n = cl_sim_route(&m, 0, 7, -1, 0, path, CL_SIM_MAX_PATH, &cls);
    assert_int_equal(n, 5);
    int sys = 0;
    for (int i = 0; i < n; i++)
        sys += m.g.l[path[i]].kind == CL_SIM_L_SYS;
    assert_int_equal(sys, 1);
    cl_sim_machine_free(&m);
}

/* Rail-optimised DGX A100 pair: a ring edge between nodes stays on its rail. */
static void test_rail_alignment(void **state)
{
    (void)state;
    cl_sim_machine m;
    cl_sim_overrides ov = {.nodes = 2, .routing = -1};
    assert_int_equal(cl_sim_machine_load("dgx-a100", &ov, &m), CL_OK);
    int path[CL_SIM_MAX_PATH];
    cl_sim_pclass cls;
    int n = cl_sim_route(&m, 3, 8 + 3, 3, 0, path, CL_SIM_MAX_PATH, &cls);
    assert_true(n > 0);
    assert_int_equal(cls, CL_SIM_P_NET);
    int switches = 0;
    for (int i = 0; i < n; i++)
        switches += m.g.vkind[m.g.l[path[i]].dst] == CL_SIM_V_SWITCH;
    assert_int_equal(switches, 1); /* one rail leaf, no spine */
    cl_sim_machine_free(&m);
}

/* Parser errors carry file:line. */
static void test_parse_error(void **state)
{
    (void)state;
    char path[] = "/tmp/commlab_sim_bad_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *text = "name = x\n# comment\nnodes = two\n";
    assert_int_equal(write(fd, text, strlen(text)), (int)strlen(text));
    close(fd);
    cl_sim_system s;
    assert_int_equal(cl_sim_system_parse(path, &s), CL_ERR_PARSE);
    char want[128];
    snprintf(want, sizeof want, "%s:3: nodes", path);
    assert_non_null(strstr(cl_last_error(), want));
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dmodk_shift_is_contention_free),
        cmocka_unit_test(test_ecmp_spreads_and_repeats),
        cmocka_unit_test(test_minhop_lengths_and_balance),
        cmocka_unit_test(test_intra_node_paths),
        cmocka_unit_test(test_rail_alignment),
        cmocka_unit_test(test_parse_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
