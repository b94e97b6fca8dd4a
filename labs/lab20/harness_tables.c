/* harness_tables.c: lab 20's tables: the collectives the suite runs (with their message
 * patterns, harness_pattern.c), the lab's own modes and their options.
 */
#include "lab20_harness.h"

const cl_coll_entry lab20_collectives[] = {
    {.name = "alltoall", .kind = CL_COLL_ALLTOALL, .baseline = 1, .pattern = pairwise_pattern},
    {.name = "alltoallv", .kind = CL_COLL_ALLTOALLV, .baseline = 1, .pattern = pairwise_v_pattern},
    {0}};

const cl_mode lab20_modes[] = {{.name = "hier",
                                .help = "the two-level AlltoAll on many counts and types, and its "
                                        "message pattern (--local L)",
                                .ranks = lab20_hier_verify},
                               {.name = "compare",
                                .help = "pairwise, two-level and the library's AlltoAll from -b to "
                                        "-e bytes per rank, timed",
                                .ranks = lab20_compare},
                               {.name = "moe",
                                .help = "MoE layers: your plan's dispatch against every other way "
                                        "of moving the tokens",
                                .ranks = lab20_moe_mode},
                               {0}};

const cl_option lab20_options[] = {
    {"local", "ranks per node (0: the system's GPUs per node on sim, else 1)", "0"},
    {"tokens", "moe: tokens per rank, a list", "64,512,4096"},
    {"skew", "moe: Zipf exponents of the experts' popularity, a list", "0,1.2"},
    {"budget", "moe: the drop budgets, a list of fractions", "0,0.01"},
    {"experts", "moe: experts (0: twice the ranks)", "0"},
    {"topk", "moe: experts per token", "2"},
    {"token-bytes", "moe: bytes of one token's hidden state", "8K"},
    {0}};
