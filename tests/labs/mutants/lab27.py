"""Typical wrong answers in lab27 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("AllReduce's busbw factor (n-1)/n, as for AllGather",
           "s->bus_factor = 2.0 * (nranks - 1) / nranks;",
           "s->bus_factor = (double)(nranks - 1) / nranks;",
           ["sim.numbers"]),
    Mutant("AllGather without nccl-tests' 16-byte rounding of the per-rank count",
           "size_t base = (n / p) & ~(size_t)(16 / es - 1);",
           "size_t base = n / p;",
           ["sim.numbers"]),
    Mutant("the time of all iterations, not of one call",
           "int64_t ps[1] = {(int64_t)((cl_comm_time(c) - t0) / iters * 1e12 + 0.5)};",
           "int64_t ps[1] = {(int64_t)((cl_comm_time(c) - t0) * 1e12 + 0.5)};",
           ["sim.numbers"]),
    Mutant("the untimed call counted in the time (the clock starts before it)",
           "    for (int i = 0; i < warmup; i++)\n"
           "        CL_CHECK(lab27_coll(c, kind, in, out, total));\n"
           "    CL_CHECK(cl_barrier(c));\n    double t0 = cl_comm_time(c);\n",
           "    double t0 = cl_comm_time(c);\n"
           "    for (int i = 0; i < warmup; i++)\n"
           "        CL_CHECK(lab27_coll(c, kind, in, out, total));\n"
           "    CL_CHECK(cl_barrier(c));\n",
           ["sim.numbers"]),
    Mutant("#wrong of this rank only, not summed over the ranks",
           "    int64_t v[1] = {w};\n    CL_CHECK(cl_agree(c, CL_SUM, v, 1));\n    *wrong = v[0];",
           "    *wrong = w;",
           ["sim.wrong"]),
    Mutant("AllGather checked as if it were a reduction over every rank",
           "CL_CHECK(lab27_check(c, (float *)out + (size_t)j * block, block, j, j + 1,",
           "CL_CHECK(lab27_check(c, (float *)out + (size_t)j * block, block, 0, p,",
           ["sim.wrong", "cpu.wrong"]),
    Mutant("no check at all: #wrong always 0",
           "        CL_CHECK(check_once(c, kind, &r->s, in, recvbuf, &r->wrong[ip]));\n", "",
           ["sim.wrong", "cpu.wrong"]),
    Mutant("the time column always %7.2f",
           "    if (us >= 10000.0)\n        put(text, cap, used, \"  %7.0f\", us);\n"
           "    else if (us >= 100.0)\n        put(text, cap, used, \"  %7.1f\", us);\n"
           "    else\n",
           "",
           ["sim.format", "cpu.format"]),
    Mutant("no 'Out of bounds values' line",
           "    put(text, cap, &used, \"# Out of bounds values : %d %s\\n\", errors, "
           "errors ? \"FAILED\" : \"OK\");\n", "",
           ["sim.format", "cpu.format"]),
    Mutant("effect as the ratio of the medians, not the median of the paired ratios",
           "e->effect = median_of(ratio, n); /* sorts ratio */",
           "e->effect = median_of(a, n) / median_of(b, n);\n    median_of(ratio, n);",
           ["cpu.compare"]),
    Mutant("verdict from the median alone: any effect is real",
           "e->verdict = q1 > 1 ? 1 : q3 < 1 ? -1 : 0;",
           "e->verdict = e->effect > 1 ? 1 : -1;\n    (void)q1, (void)q3;",
           ["cpu.verdict"]),
    Mutant("verdict from the range: one outlier makes every change inconclusive",
           "e->verdict = q1 > 1 ? 1 : q3 < 1 ? -1 : 0;",
           "e->verdict = e->lo > 1 ? 1 : e->hi < 1 ? -1 : 0;\n    (void)q1, (void)q3;",
           ["cpu.verdict"]),
]
