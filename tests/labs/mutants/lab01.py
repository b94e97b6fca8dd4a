"""Typical wrong answers in lab01 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("round trip reported as one-way time",
           "/ (2.0 * iters);", "/ iters;", ["cpu.pingpong", "sim.pingpong"]),
    Mutant("off-by-one message size",
           "buf, bytes, peer", "buf, bytes - 1, peer", ["cpu.pingpong"], count=4),
    # The hole the trace closes: half the round trips keep the data right and the reported
    # one-way time equal to the call's, and double the bandwidth.
    Mutant("half the round trips",
           "for (int i = 0; i < iters; i++) {", "for (int i = 0; i < iters / 2; i++) {",
           ["cpu.pingpong", "cpu.perf"]),
    Mutant("a buffer allocated inside the timed loop (slow loop)",
           "    for (int i = 0; i < iters; i++) {\n        if (rank == 0) {",
           "    for (int i = 0; i < iters; i++) {\n"
           "        void *scratch;\n"
           "        CL_CHECK(cl_mem_alloc(comm, bytes, &scratch));\n"
           "        CL_CHECK(cl_mem_free(comm, scratch));\n"
           "        if (rank == 0) {",
           ["cpu.perf"]),
    Mutant("plain least squares: the largest messages decide alpha",
           "double w = 1.0 / (seconds[i] * seconds[i]);", "double w = 1.0;", ["cpu.fit"],
           count=2),
    Mutant("intercept without the slope term",
           "*alpha_s = mean_y - *beta_s_per_byte * mean_x;", "*alpha_s = mean_y;",
           ["cpu.fit"]),
    Mutant("ring AllReduce without the (p-1)/p factor",
           "2.0 * (p - 1) / p * bytes", "2.0 * bytes", ["cpu.estimate"]),
    Mutant("one alpha per AllReduce instead of one per ring step",
           "c.alpha_s = 2.0 * (p - 1) * link.alpha_s;", "c.alpha_s = link.alpha_s;",
           ["cpu.estimate"]),
    Mutant("DP group placed without counting the TP ranks",
           "link_of(c, (long)l->tp * l->dp)", "link_of(c, l->dp)", ["cpu.estimate"]),
    Mutant("two TP AllReduces per layer instead of four",
           "4.0 * w->layers", "2.0 * w->layers", ["cpu.estimate"]),
    Mutant("no pipeline bubble",
           "out->bubble_s = out->compute_s * (l->pp - 1) / m;", "out->bubble_s = 0;",
           ["cpu.estimate", "cpu.layout"]),
    Mutant("the first layout that fits, not the fastest",
           "if (!found || e.step_s < best) {", "if (!found) {", ["cpu.layout"]),
    Mutant("TP always fills the node",
           "for (int tp = 1; tp <= gpus; tp *= 2)",
           "for (int tp = c->gpus_per_node; tp <= c->gpus_per_node; tp *= 2)", ["cpu.layout"]),
    Mutant("memory ignored",
           "16.0 * w->params / ((double)tp * pp) > c->mem_bytes ||", "", ["cpu.layout"]),
]
