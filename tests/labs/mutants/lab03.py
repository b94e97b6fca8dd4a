"""Typical wrong answers in lab03 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("the last run reported instead of the median",
           "cl_median(per_op, (size_t)m->repeats)", "per_op[m->repeats - 1]", ["cpu.method"]),
    Mutant("no warm-up before the timed runs",
           "    for (int k = 0; k < m->warmup; k++)\n"
           "        CL_CHECK(lab03_op(l, kind, i, j, bytes));\n",
           "", ["cpu.method"]),
    Mutant("bidirectional bandwidth counts one direction only",
           "return 2.0 * (double)bytes / seconds / 1e9;", "return (double)bytes / seconds / 1e9;",
           ["cpu.metric", "cpu.method"]),
    Mutant("round-trip time reported as latency",
           "return seconds / 2.0 * 1e6;", "return seconds * 1e6;", ["cpu.metric", "cpu.method"]),
    Mutant("symmetric matrices measured per ordered pair (twice, not symmetric)",
           "for (int j = symmetric ? i + 1 : 0; j < n; j++)", "for (int j = 0; j < n; j++)",
           ["cpu.matrix"]),
    Mutant("no lab03_sync() between pairs (pairs overlap)",
           "            CL_CHECK(lab03_sync(l));\n            if (!lab03_involves",
           "            if (!lab03_involves", ["cpu.matrix"]),
]
