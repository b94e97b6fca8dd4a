/* sim_launch.c: CUDA_VISIBLE_DEVICES and NCCL_P2P_LEVEL of a plan, read as NCCL would. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim_launch.h"
#include "sim_topo.h"

/* The field's value (len bytes at most, maybe unterminated) as a string. */
static void terminated(char text[CL_SIM_LAUNCH_MAX_LEN + 1], const char *value, size_t len)
{
    snprintf(text, CL_SIM_LAUNCH_MAX_LEN + 1, "%.*s",
             (int)(len < CL_SIM_LAUNCH_MAX_LEN ? len : CL_SIM_LAUNCH_MAX_LEN), value);
}

cl_result cl_sim_launch_visible(const char *value, size_t len, int gpus, const char *where,
                                int *gpu)
{
    char text[CL_SIM_LAUNCH_MAX_LEN + 1];
    terminated(text, value, len);
    uint64_t used = 0;
    int i = 0;
    for (const char *s = text; *s && i <= gpus; i++) {
        char *end;
        long g = strtol(s, &end, 10);
        if (end == s || g < 0 || g >= gpus || (used >> g & 1) || (*end && *end != ',')) {
            cl_set_error("CUDA_VISIBLE_DEVICES=\"%s\"%s: expected each of GPU 0..%d once, "
                         "separated by commas",
                         text, where, gpus - 1);
            return CL_ERR_INVALID;
        }
        used |= (uint64_t)1 << g;
        if (i < gpus)
            gpu[i] = (int)g;
        s = *end ? end + 1 : end;
    }
    if (i != gpus) {
        cl_set_error("CUDA_VISIBLE_DEVICES=\"%s\"%s lists %d GPUs; every one of the %d GPUs runs a "
                     "rank",
                     text, where, i, gpus);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

cl_result cl_sim_launch_p2p_level(const char *value, size_t len, int *level)
{
    char text[CL_SIM_LAUNCH_MAX_LEN + 1];
    terminated(text, value, len);
    *level = text[0] ? cl_sim_path_parse(text) : CL_SIM_PATH_PXB;
    if (*level < CL_SIM_PATH_LOC || *level > CL_SIM_PATH_SYS || *level == CL_SIM_PATH_NVB) {
        cl_set_error("NCCL_P2P_LEVEL=\"%s\": LOC, NVL, PIX, PXB, PHB or SYS, or \"\" to leave "
                     "it unset",
                     text);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}
