/* test_sim_train_levels.c: a plan's CUDA_VISIBLE_DEVICES and NCCL_P2P_LEVEL as the planning
 * labs read them, and one node's models by P2P level. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "sim/sim_launch.h"
#include "sim/sim_train_levels.h"

static void test_visible(void **state)
{
    (void)state;
    int gpu[8] = {0};
    const char field[32] = "3,6,0,5,2,7,1,4"; /* a plan's field: unterminated when full */
    assert_int_equal(cl_sim_launch_visible(field, sizeof field, 8, "", gpu), CL_OK);
    assert_int_equal(gpu[0], 3);
    assert_int_equal(gpu[7], 4);
    assert_int_equal(cl_sim_launch_visible("0,1,2,3,4,5,6,6", 32, 8, " on node 1", gpu),
                     CL_ERR_INVALID);
    assert_string_equal(cl_last_error(), "CUDA_VISIBLE_DEVICES=\"0,1,2,3,4,5,6,6\" on node 1: "
                                         "expected each of GPU 0..7 once, separated by commas");
    assert_int_equal(cl_sim_launch_visible("0,1,2", 32, 4, "", gpu), CL_ERR_INVALID);
    assert_string_equal(cl_last_error(), "CUDA_VISIBLE_DEVICES=\"0,1,2\" lists 3 GPUs; every one "
                                         "of the 4 GPUs runs a rank");
    assert_int_equal(cl_sim_launch_visible("0,1,2,3,4", 32, 4, "", gpu), CL_ERR_INVALID);
    assert_int_equal(cl_sim_launch_visible("0,1;2,3", 32, 4, "", gpu), CL_ERR_INVALID);
    cl_clear_error();
}

static void test_p2p_level(void **state)
{
    (void)state;
    char field[8] = "";
    int level = -1;
    assert_int_equal(cl_sim_launch_p2p_level(field, sizeof field, &level), CL_OK);
    assert_int_equal(level, CL_SIM_PATH_PXB); /* NCCL's default */
    memcpy(field, "SYS", 4);
    assert_int_equal(cl_sim_launch_p2p_level(field, sizeof field, &level), CL_OK);
    assert_int_equal(level, CL_SIM_PATH_SYS);
    memcpy(field, "NVB", 4); /* a path type, not a level NCCL_P2P_LEVEL takes */
    assert_int_equal(cl_sim_launch_p2p_level(field, sizeof field, &level), CL_ERR_INVALID);
    memcpy(field, "NVLNVLNV", 8); /* full, unterminated */
    assert_int_equal(cl_sim_launch_p2p_level(field, sizeof field, &level), CL_ERR_INVALID);
    assert_string_equal(cl_last_error(), "NCCL_P2P_LEVEL=\"NVLNVLNV\": LOC, NVL, PIX, PXB, PHB or "
                                         "SYS, or \"\" to leave it unset");
    cl_clear_error();
}

/* A level's model is built once and kept until the next node is loaded. */
static void test_models_by_level(void **state)
{
    (void)state;
    static cl_sim_train_levels l;
    cl_sim_topo_params p = {.nvlink_gbps = 20, .pci_gbps = 12, .sys_gbps = 6};
    cl_sim_train *pxb, *again, *sys;
    assert_int_equal(cl_sim_train_levels_load(&l, "datasets/topologies/dgx1-v100.topo.txt", &p, 70),
                     CL_OK);
    assert_int_equal(cl_sim_train_levels_model(&l, CL_SIM_PATH_PXB, &pxb), CL_OK);
    assert_int_equal(cl_sim_train_levels_model(&l, CL_SIM_PATH_PXB, &again), CL_OK);
    assert_ptr_equal(pxb, again);
    assert_int_equal(cl_sim_train_levels_model(&l, CL_SIM_PATH_SYS, &sys), CL_OK);
    assert_ptr_not_equal(pxb, sys);
    assert_int_equal(l.net[CL_SIM_PATH_SYS]->ngpus, 8);
    assert_null(l.train[CL_SIM_PATH_NVL]);
    assert_int_equal(cl_sim_train_levels_load(&l, "datasets/topologies/hgx-a100.topo.txt", &p, 80),
                     CL_OK);
    assert_null(l.train[CL_SIM_PATH_PXB]);
    assert_int_equal(cl_sim_train_levels_load(&l, "datasets/topologies/none.topo.txt", &p, 80),
                     CL_ERR_IO);
    cl_clear_error();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_visible),
        cmocka_unit_test(test_p2p_level),
        cmocka_unit_test(test_models_by_level),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
