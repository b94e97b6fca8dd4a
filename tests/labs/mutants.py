"""Typical wrong answers, as small edits of each reference solution, and the checks
that must catch them. tests/labs/test_labs.py grades every mutant."""

from collections import namedtuple

# name: what the mistake is; old/new: the edit (old must occur exactly once in the
# solution file, unless count says otherwise); caught_by: checks that must not pass.
Mutant = namedtuple("Mutant", "name old new caught_by count", defaults=(1,))

MUTANTS = {
    "lab01": [
        Mutant("round trip reported as one-way time",
               "/ (2.0 * iters);", "/ iters;", ["cpu.pingpong"]),
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
               ["cpu.perf"]),
    ],
    "lab02": [
        Mutant("NVLink count read from the wrong offset",
               "out->nvlinks = atoi(code + 2);", "out->nvlinks = atoi(code + 3);", ["cpu.codes"]),
        Mutant("glued cells not split (NV codes are always 3 characters)",
               'return 2 + strspn(s + 2, "0123456789");', "return 3;",
               ["cpu.split", "cpu.parse.hgx-a100", "cpu.parse.hgx-h200"]),
        Mutant("NIC legend ignored",
               "            apply_legend_line(line, out);", "            (void)apply_legend_line;",
               ["cpu.parse.hgx-a100", "cpu.parse.hgx-h200"]),
        Mutant("error reported one line late",
               'cl_set_error("%s:%d: %s", path, lineno, why);',
               'cl_set_error("%s:%d: %s", path, lineno + 1, why);', ["cpu.malformed"]),
        Mutant("X accepted off the diagonal",
               "if ((l->kind == CL_LINK_SELF) != (j == row)) {",
               "if (j == row && l->kind != CL_LINK_SELF) {", ["cpu.malformed"]),
    ],
}
