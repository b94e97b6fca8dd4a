"""Typical wrong answers in lab03 and the checks that must catch them."""

from tests.labs.mutants import Mutant

WARM = ("    for (; k < m->warmup; k++)\n"
        "        CL_CHECK(lab03_op(comm, kind, i, j, bytes, k));\n")

MUTANTS = [
    Mutant("the last run reported instead of the median",
           "median(per_op, m->repeats)", "per_op[m->repeats - 1]", ["sim.method"]),
    Mutant("the mean of the runs reported instead of the median",
           "*value = lab03_metric(kind, bytes, median(per_op, m->repeats));",
           "double sum = 0;\n"
           "        for (int q = 0; q < m->repeats; q++)\n"
           "            sum += per_op[q];\n"
           "        *value = lab03_metric(kind, bytes, sum / m->repeats);",
           ["sim.method", "cpu.method"]),
    Mutant("no warm-up before the timed runs",
           WARM, "", ["cpu.method", "sim.method"]),
    Mutant("the clock started before the warm-up (warm-up timed with the first run)",
           WARM + "    double per_op[LAB03_MAX_REPEATS];\n"
           "    for (int r = 0; r < m->repeats; r++) {\n"
           "        double t0 = cl_comm_time(comm);",
           "    double t00 = cl_comm_time(comm);\n" + WARM +
           "    double per_op[LAB03_MAX_REPEATS];\n"
           "    for (int r = 0; r < m->repeats; r++) {\n"
           "        double t0 = r == 0 ? t00 : cl_comm_time(comm);",
           ["sim.method"]),
    Mutant("a pause before every timed operation (to let the peer catch up)",
           "        for (int n = 0; n < m->iters; n++, k++)\n"
           "            CL_CHECK(lab03_op(comm, kind, i, j, bytes, k));",
           "        for (int n = 0; n < m->iters; n++, k++) {\n"
           "            for (double t = cl_comm_time(comm); cl_comm_time(comm) - t < 1e-3;)\n"
           "                ;\n"
           "            CL_CHECK(lab03_op(comm, kind, i, j, bytes, k));\n"
           "        }", ["cpu.perf"]),
    Mutant("bidirectional bandwidth counts one direction only",
           "case LAB03_BIDIR: return 2.0 * (double)bytes / seconds / 1e9;",
           "case LAB03_BIDIR: return (double)bytes / seconds / 1e9;",
           ["cpu.metric", "cpu.method", "sim.method"]),
    Mutant("round-trip time reported as latency",
           "case LAB03_LATENCY: return seconds / 2.0 * 1e6;",
           "case LAB03_LATENCY: return seconds * 1e6;", ["cpu.metric", "cpu.method"]),
    Mutant("symmetric matrices measured per ordered pair (twice, not symmetric)",
           "for (int j = symmetric ? i + 1 : 0; j < n; j++)", "for (int j = 0; j < n; j++)",
           ["cpu.matrix"]),
    Mutant("no barrier between pairs (pairs overlap)",
           "            CL_CHECK(cl_barrier(comm));\n            double v = NAN;",
           "            double v = NAN;", ["cpu.matrix", "sim.method"]),
    Mutant("links read from bandwidths that still carry the latency",
           "bw[i * n + j] = t > 0 ? (double)bytes / t / 1e9 : uni[i * n + j];",
           "bw[i * n + j] = uni[i * n + j];", ["sim.infer", "sim.hidden"]),
    Mutant("every non-NVLink pair called PCI (sockets not told apart)",
           "bw[i * n + j] < 0.9 * pci_max", "bw[i * n + j] < 0.0 * pci_max",
           ["sim.infer", "sim.hidden"]),
]
