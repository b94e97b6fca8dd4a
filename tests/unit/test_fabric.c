/* test_fabric.c: ibnetdiscover files, route checks, channel dependency cycles, link loads,
 * and flows on explicit paths (common/fabric.h, common/sim/sim_paths.h). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fabric.h"
#include "sim/sim_paths.h"

#define X5 "datasets/lab14/psmn-x5.topofile"

static char *write_tmp(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/commlab-fabric-%d.topo", (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* The recorded X5 fabric: 89 HCAs, 11 switches, every cable seen from both ends. */
static void test_read_x5(void **state)
{
    (void)state;
    cl_fabric *f = malloc(sizeof *f);
    assert_int_equal(cl_fabric_read(X5, 100, f), CL_OK);
    assert_int_equal(f->nhosts, 89);
    assert_int_equal(f->nnodes - f->nhosts, 11);
    int qdr = 0, ddr = 0;
    for (int a = 0; a < f->nnodes; a++)
        for (int p = 0; p < f->nports[a]; p++) {
            cl_fabric_end e = f->link[a][p];
            if (e.node < 0)
                continue;
            assert_int_equal(f->link[e.node][e.port].node, a);
            assert_int_equal(f->link[e.node][e.port].port, p);
            qdr += f->gbps[a][p] == 32;
            ddr += f->gbps[a][p] == 16;
        }
    assert_true(qdr > 0 && ddr > 0); /* 4xQDR and 4xDDR cables both appear */
    for (int h = 0; h < f->nhosts; h++)
        assert_int_equal(f->level[h], 0);
    assert_string_equal(f->id[0], "H-003048c707b60000"); /* the first Ca record */
    free(f);
}

/* A malformed line is reported with the file and the line. */
static void test_malformed(void **state)
{
    (void)state;
    cl_fabric *f = malloc(sizeof *f);
    const char *text = "Switch\t8 \"S-01\"\t# \"sw\"\n[1]\t\"H-02\"[1](2)\t# \"h\" lid 2 4xEDR\n"
                       "[2]\t\"S-09\"\n";
    char *path = write_tmp(text);
    assert_int_equal(cl_fabric_read(path, 100, f), CL_ERR_PARSE);
    assert_non_null(strstr(cl_last_error(), ":3:"));
    /* two ends disagreeing about a cable */
    text = "Switch\t8 \"S-01\"\n[1]\t\"S-02\"[1]\n[2]\t\"H-03\"[1]\n"
           "Switch\t8 \"S-02\"\n[1]\t\"S-01\"[2]\n[2]\t\"H-04\"[1]\n";
    path = write_tmp(text);
    assert_int_equal(cl_fabric_read(path, 100, f), CL_ERR_PARSE);
    assert_non_null(strstr(cl_last_error(), "disagree"));
    unlink(path);
    free(f);
}

/* Three switches in a ring, one host each: clockwise routes deliver every pair but
 * their channel dependencies close a cycle; a table that bounces a packet loops. */
static void test_ring_cycle_and_loop(void **state)
{
    (void)state;
    const char *text = "Switch\t3 \"S-10\"\n[1]\t\"H-01\"[1]\n[2]\t\"S-11\"[3]\n[3]\t\"S-12\"[2]\n"
                       "Switch\t3 \"S-11\"\n[1]\t\"H-02\"[1]\n[2]\t\"S-12\"[3]\n[3]\t\"S-10\"[2]\n"
                       "Switch\t3 \"S-12\"\n[1]\t\"H-03\"[1]\n[2]\t\"S-10\"[3]\n[3]\t\"S-11\"[2]\n";
    char *path = write_tmp(text);
    cl_fabric *f = malloc(sizeof *f);
    assert_int_equal(cl_fabric_read(path, 100, f), CL_OK);
    unlink(path);
    assert_int_equal(f->nhosts, 3);
    cl_fabric_routes r;
    assert_int_equal(cl_fabric_routes_init(f, &r), CL_OK);
    for (int s = 0; s < 3; s++)
        for (int d = 0; d < 3; d++)
            r.out[s * 3 + d] = (int16_t)(s == d ? 0 : 1); /* clockwise */
    cl_fabric_check k;
    assert_int_equal(cl_fabric_check_routes(f, &r, &k), CL_OK);
    assert_int_equal(k.delivered, 6);
    assert_int_equal(k.acyclic, 0);
    assert_int_equal(k.cycle_len, 3);
    for (int i = 0; i < k.cycle_len; i++)
        assert_true(cl_fabric_depends(k.cycle[i], k.cycle[(i + 1) % k.cycle_len]));
    /* the shortest way instead: no host pair uses two switch cables in a row */
    for (int s = 0; s < 3; s++)
        for (int d = 0; d < 3; d++)
            r.out[s * 3 + d] = (int16_t)(s == d ? 0 : (d == (s + 1) % 3 ? 1 : 2));
    assert_int_equal(cl_fabric_check_routes(f, &r, &k), CL_OK);
    assert_int_equal(k.delivered, 6);
    assert_int_equal(k.acyclic, 1);
    /* loads: every pair once, 1 byte: each switch-to-switch channel carries one flow */
    int src[6], dst[6], n = 0;
    double w[6] = {1, 1, 1, 1, 1, 1};
    for (int s = 0; s < 3; s++)
        for (int d = 0; d < 3; d++)
            if (s != d) {
                src[n] = s;
                dst[n++] = d;
            }
    double *load = calloc(CL_FABRIC_CHANNELS, sizeof *load);
    assert_int_equal(cl_fabric_loads(f, &r, src, dst, w, 6, load), CL_OK);
    assert_true(load[CL_FABRIC_CHANNEL(3, 1)] == 1 && load[CL_FABRIC_CHANNEL(3, 2)] == 1);
    assert_true(load[CL_FABRIC_CHANNEL(0, 0)] == 2); /* host 0 sends twice */
    /* switch 1 sends host 0's packets back to switch 0, which sends them on: a loop */
    r.out[0 * 3 + 2] = 1;
    r.out[1 * 3 + 2] = 2;
    assert_int_equal(cl_fabric_check_routes(f, &r, &k), CL_OK);
    assert_true(k.delivered < 6);
    assert_non_null(strstr(k.why, "loops"));
    free(load);
    cl_fabric_routes_free(&r);
    free(f);
}

/* Two flows on explicit paths sharing one link of 100 B/s: 100 B each, both done at 2 s;
 * a third of 0 B is done when its latency ends. */
static void test_paths(void **state)
{
    (void)state;
    cl_sim_graph g = {0};
    for (int i = 0; i < 3; i++)
        cl_sim_graph_add_vertex(&g, CL_SIM_V_SWITCH, 1);
    int l0 = cl_sim_graph_add_link(&g, 0, 1, 100, 0, CL_SIM_L_NET);
    int l1 = cl_sim_graph_add_link(&g, 1, 2, 100, 0, CL_SIM_L_NET);
    assert_int_equal(cl_sim_graph_finalize(&g), CL_OK);
    int a[2] = {l0, l1}, b[1] = {l0}, c[1] = {l1};
    cl_sim_path_flow fl[3] = {{a, 2, 100, 0}, {b, 1, 100, 0}, {c, 1, 0, 0.5}};
    double fin[3];
    assert_int_equal(cl_sim_paths_run(&g, fl, 3, fin), CL_OK);
    assert_true(fabs(fin[0] - 2) < 1e-9 && fabs(fin[1] - 2) < 1e-9);
    assert_true(fabs(fin[2] - 0.5) < 1e-9);
    int bad[1] = {7};
    cl_sim_path_flow wrong = {bad, 1, 1, 0};
    assert_int_equal(cl_sim_paths_run(&g, &wrong, 1, fin), CL_ERR_INVALID);
    cl_sim_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_x5),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_ring_cycle_and_loop),
        cmocka_unit_test(test_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
