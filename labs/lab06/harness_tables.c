/* harness_tables.c: lab 06's tables: the collectives the suite runs, each with its message
 * pattern (harness_patterns.c), and the lab's own modes and their option.
 */
#include "lab06_harness.h"

const cl_coll_entry lab06_collectives[] = {
    {.name = "ring", .kind = CL_COLL_ALLREDUCE, .pattern = cl_pattern_ring_allreduce},
    {.name = "recursive_doubling",
     .kind = CL_COLL_ALLREDUCE,
     .pattern = cl_pattern_recursive_doubling},
    {.name = "rabenseifner", .kind = CL_COLL_ALLREDUCE, .pattern = cl_pattern_halving_doubling},
    {.name = "tree", .kind = CL_COLL_ALLREDUCE, .pattern = cl_pattern_binomial_allreduce},
    {.name = "allreduce", .kind = CL_COLL_ALLREDUCE, .baseline = 1, .pattern = pattern_any},
    {.name = "broadcast", .kind = CL_COLL_BROADCAST, .pattern = cl_pattern_binomial_bcast},
    {.name = "reduce", .kind = CL_COLL_REDUCE, .pattern = cl_pattern_binomial_reduce},
    {0}};

const cl_mode lab06_modes[] = {{.name = "calibrate",
                                .help = "alpha, beta and gamma as your code meets them",
                                .ranks = calibrate_mode},
                               {.name = "select",
                                .help = "the four algorithms and your selector at each size, "
                                        "interleaved, checked",
                                .ranks = select_mode},
                               {.name = "model",
                                .help = "your cost of each algorithm and your choice: alpha= beta= "
                                        "gamma= p= bytes=",
                                .cases = model_case},
                               {0}};

const cl_option lab06_options[] = {
    {.name = "model", .help = "ALPHA,BETA,GAMMA for select, or measure", .fallback = "measure"},
    {0}};
