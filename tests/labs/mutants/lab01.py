"""Typical wrong answers in lab01 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("round trip reported as one-way time",
           "/ (2.0 * iters);", "/ iters;", ["cpu.pingpong", "sim.pingpong"]),
    Mutant("off-by-one message size",
           "buf, bytes, peer", "buf, bytes - 1, peer", ["cpu.pingpong"], count=4),
    Mutant("intercept without the slope term",
           "*alpha_s = mean_y - *beta_s_per_byte * mean_x;", "*alpha_s = mean_y;",
           ["cpu.fit"]),
    Mutant("ring AllReduce without the (p-1)/p factor",
           "2.0 * (p - 1) / p * bytes", "2.0 * bytes", ["cpu.estimate"]),
    Mutant("DP group placed without counting the TP ranks",
           "l->tp * l->dp <= c->gpus_per_node ? c->intra", "l->dp <= c->gpus_per_node ? c->intra",
           ["cpu.estimate"]),
    Mutant("two TP AllReduces per layer instead of four",
           "4.0 * w->layers", "2.0 * w->layers", ["cpu.estimate"]),
    Mutant("a buffer allocated inside the timed loop (slow loop)",
           "    for (int i = 0; i < iters; i++) {\n        if (rank == 0) {",
           "    for (int i = 0; i < iters; i++) {\n"
           "        void *scratch;\n"
           "        CL_CHECK(cl_mem_alloc(comm, bytes, &scratch));\n"
           "        CL_CHECK(cl_mem_free(comm, scratch));\n"
           "        if (rank == 0) {",
           ["cpu.perf"])
]
