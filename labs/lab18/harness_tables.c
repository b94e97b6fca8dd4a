/* harness_tables.c: lab 18's tables: its modes (the suite's verify, bench and sweep among
 * them, harness_suite.c), their options, and the AllReduce with its two-level pattern.
 */
#include "lab18_harness.h"

const cl_mode lab18_modes[] = {
    {.name = "verify",
     .help = "your two-level AllReduce on many counts, types and ops, every output "
             "checked, and its pattern",
     .ranks = verify_mode},
    {.name = "bench",
     .help = "yours (--coll allreduce) at --bytes against the library's AllReduce",
     .ranks = bench_mode},
    {.name = "sweep",
     .help = "yours and the library's from -b to -e bytes, nccl-tests' table",
     .ranks = sweep_mode},
    {.name = "compare",
     .help = "the given flat ring and yours at --bytes, interleaved; your model's times "
             "and choice",
     .ranks = compare_mode},
    {.name = "choose",
     .help = "your choice for system=S nodes=N bytes=B against the simulator's times",
     .cases = choose_case},
    {0}};

const cl_option lab18_options[] = {
    {.name = "ranks-per-node",
     .help = "ranks of one node (default: by host; sim: "
             "the system's GPUs)"},
    {.name = "placement", .help = "block or cyclic, with --ranks-per-node", .fallback = "block"},
    {.name = "intra", .help = "compare: the model's intra-node link, GB/s:us", .fallback = "5:2"},
    {.name = "inter", .help = "compare: the model's NIC, GB/s:us", .fallback = "0.025:80"},
    {.name = "nics", .help = "compare: the model's NICs per node", .fallback = "1"},
    {.name = "launch", .help = "compare: the model's fixed cost per call, us", .fallback = "0"},
    {0}};

const cl_coll_entry lab18_collectives[] = {
    {.name = "allreduce", .kind = CL_COLL_ALLREDUCE, .baseline = 1, .pattern = hier_pattern}, {0}};
