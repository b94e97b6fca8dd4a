/* test_sim_engine.c: max-min sharing and the flow engine against hand-computed cases. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "sim/sim_engine.h"
#include "sim/sim_maxmin.h"

#define NEAR(a, b) assert_true(fabs((a) - (double)(b)) <= 1e-9 * fabs((double)(b)) + 1e-12)

/* Link 0 (10) carries f0 and f1; link 1 (20) carries f1 and f2.
 * Fill: link 0 saturates first at 5 each; f2 then takes 20 - 5 = 15. */
static void test_three_flows_two_links(void **state)
{
    (void)state;
    double bw[2] = {10, 20};
    int off[4] = {0, 1, 3, 4};
    int path[4] = {0, 0, 1, 1};
    double rate[3];
    assert_int_equal(cl_sim_maxmin(2, bw, 3, off, path, NULL, rate), CL_OK);
    NEAR(rate[0], 5);
    NEAR(rate[1], 5);
    NEAR(rate[2], 15);
}

/* One link of 12 shared by three flows, one capped at 2: the others get 5 each. */
static void test_flow_cap(void **state)
{
    (void)state;
    double bw[1] = {12};
    int off[4] = {0, 1, 2, 3};
    int path[3] = {0, 0, 0};
    double cap[3] = {2, 0, 0};
    double rate[3];
    assert_int_equal(cl_sim_maxmin(1, bw, 3, off, path, cap, rate), CL_OK);
    NEAR(rate[0], 2);
    NEAR(rate[1], 5);
    NEAR(rate[2], 5);
}

/* Parking lot: links 0,1,2 of capacity 1; a long flow over all three and one
 * short flow on each link: everybody gets 1/2. */
static void test_parking_lot(void **state)
{
    (void)state;
    double bw[3] = {1, 1, 1};
    int off[5] = {0, 3, 4, 5, 6};
    int path[6] = {0, 1, 2, 0, 1, 2};
    double rate[4];
    assert_int_equal(cl_sim_maxmin(3, bw, 4, off, path, NULL, rate), CL_OK);
    for (int i = 0; i < 4; i++)
        NEAR(rate[i], 0.5);
}

/* Two flows on one 100 B/s link, 100 B and 300 B, latency 1 s and 0 s.
 * t=0..1: only flow 1 moves (100 B/s): 100 B left of its 300.
 * t=1..3: both at 50 B/s: flow 0 done at t=3 (100 B); flow 1 has 200 - 100 = 100 B left.
 * t=3..4: flow 1 alone at 100 B/s: done at t=4. */
static void test_engine_events(void **state)
{
    (void)state;
    cl_sim_graph g = {0};
    int a = cl_sim_graph_add_vertex(&g, CL_SIM_V_GPU, 0);
    int b = cl_sim_graph_add_vertex(&g, CL_SIM_V_GPU, 0);
    int l = cl_sim_graph_add_link(&g, a, b, 100, 0, CL_SIM_L_NVLINK);
    assert_int_equal(cl_sim_graph_finalize(&g), CL_OK);
    cl_sim_engine e;
    assert_int_equal(cl_sim_engine_init(&e, &g, 1.0), CL_OK);
    assert_int_equal(cl_sim_engine_add(&e, &l, 1, 100, 1.0, 0, 7), 0);
    assert_int_equal(cl_sim_engine_add(&e, &l, 1, 300, 0.0, 0, 8), 1);
    int done[4];
    assert_int_equal(cl_sim_engine_step(&e, INFINITY, done, 4), 1);
    assert_int_equal(done[0], 0);
    NEAR(e.now, 3.0);
    assert_int_equal(cl_sim_engine_step(&e, INFINITY, done, 4), 1);
    assert_int_equal(done[0], 1);
    NEAR(e.now, 4.0);
    assert_int_equal(cl_sim_engine_step(&e, INFINITY, done, 4), -1);
    cl_sim_engine_free(&e);
    cl_sim_graph_free(&g);
}

/* A time limit stops the engine in the middle of a transfer. */
static void test_engine_limit(void **state)
{
    (void)state;
    cl_sim_graph g = {0};
    int a = cl_sim_graph_add_vertex(&g, CL_SIM_V_GPU, 0);
    int b = cl_sim_graph_add_vertex(&g, CL_SIM_V_GPU, 0);
    int l = cl_sim_graph_add_link(&g, a, b, 10, 0, CL_SIM_L_NVLINK);
    assert_int_equal(cl_sim_graph_finalize(&g), CL_OK);
    cl_sim_engine e;
    assert_int_equal(cl_sim_engine_init(&e, &g, 0.5), CL_OK); /* 5 B/s */
    cl_sim_engine_add(&e, &l, 1, 50, 0, 0, 0);
    int done[1];
    assert_int_equal(cl_sim_engine_step(&e, 4.0, done, 1), 0);
    NEAR(e.now, 4.0);
    assert_int_equal(cl_sim_engine_step(&e, INFINITY, done, 1), 1);
    NEAR(e.now, 10.0);
    cl_sim_engine_free(&e);
    cl_sim_graph_free(&g);
}

/* 10,000 equal flows on 10,000 links end at one instant: the engine retires
 * them in one event and solves twice (start, and the empty set after), not once
 * per few hundred completions. A change on one link re-solves only the flows
 * that share links with it. */
static void test_engine_retires_an_instant_at_once(void **state)
{
    (void)state;
    enum { N = 10000 };
    cl_sim_graph g = {0};
    for (int i = 0; i < N; i++) {
        int a = cl_sim_graph_add_vertex(&g, CL_SIM_V_GPU, 0);
        int b = cl_sim_graph_add_vertex(&g, CL_SIM_V_GPU, 0);
        cl_sim_graph_add_link(&g, a, b, 100, 0, CL_SIM_L_NVLINK);
    }
    assert_int_equal(cl_sim_graph_finalize(&g), CL_OK);
    cl_sim_engine e;
    assert_int_equal(cl_sim_engine_init(&e, &g, 1.0), CL_OK);
    for (int i = 0; i < N; i++)
        assert_true(cl_sim_engine_add(&e, &i, 1, 100, 0, 0, i) >= 0);
    assert_int_equal(cl_sim_engine_run(&e), CL_OK);
    NEAR(e.now, 1.0);
    assert_int_equal(e.events, N);
    assert_true(e.solves <= 2);
    cl_sim_engine_free(&e);
    cl_sim_graph_free(&g);
}

/* Done flows are compacted away when the table fills: live flows keep their
 * tags, byte counts and completion times, and their new ids stay in order. */
static void test_engine_compaction(void **state)
{
    (void)state;
    enum { N = 256 };
    cl_sim_graph g = {0};
    for (int i = 0; i < N + 1; i++) {
        int a = cl_sim_graph_add_vertex(&g, CL_SIM_V_GPU, 0);
        int b = cl_sim_graph_add_vertex(&g, CL_SIM_V_GPU, 0);
        cl_sim_graph_add_link(&g, a, b, 100, 0, CL_SIM_L_NVLINK);
    }
    assert_int_equal(cl_sim_graph_finalize(&g), CL_OK);
    cl_sim_engine e;
    assert_int_equal(cl_sim_engine_init(&e, &g, 1.0), CL_OK);
    for (int i = 0; i < N; i++) /* flow i: (i + 1) x 100 B alone on link i: done at t = i + 1 */
        assert_int_equal(cl_sim_engine_add(&e, &i, 1, 100.0 * (i + 1), 0, 0, 1000 + i), i);
    int done[N];
    for (int k = 0; k < 200; k++)
        assert_int_equal(cl_sim_engine_step(&e, INFINITY, done, N), 1);
    NEAR(e.now, 200);
    assert_int_equal(e.nlive, N - 200);
    int last = N;
    int id = cl_sim_engine_add(&e, &last, 1, 50, 0, 0, 5000); /* the table is full: compact */
    assert_true(id < N);
    assert_int_equal(e.nf, N - 200 + 1);
    double t_prev = 200;
    for (int k = 0; k < N - 200 + 1; k++) {
        assert_int_equal(cl_sim_engine_step(&e, INFINITY, done, N), 1);
        long tag = e.f[done[0]].tag;
        if (tag == 5000) {
            NEAR(e.now, 200.5); /* 50 B at 100 B/s from t = 200 */
            continue;
        }
        NEAR(e.now, tag - 1000 + 1);
        assert_true(e.now >= t_prev);
        t_prev = e.now;
    }
    NEAR(e.now, N);
    cl_sim_engine_free(&e);
    cl_sim_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_three_flows_two_links),
        cmocka_unit_test(test_flow_cap),
        cmocka_unit_test(test_parking_lot),
        cmocka_unit_test(test_engine_events),
        cmocka_unit_test(test_engine_limit),
        cmocka_unit_test(test_engine_retires_an_instant_at_once),
        cmocka_unit_test(test_engine_compaction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
