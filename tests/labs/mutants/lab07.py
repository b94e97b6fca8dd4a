"""Typical wrong answers in lab07 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("no search: rank r on GPU r, whatever the topology",
           "    CL_CHECK(place(&s, 0));\n    memcpy(out->gpu_of_rank, s.best.gpu_of_rank, "
           "sizeof out->gpu_of_rank);",
           "    for (int r = 0; r < ngpus; r++)\n        out->gpu_of_rank[r] = r;",
           ["sim.chapter1", "sim.optimum"]),
    Mutant("NV# read as one NVLink whatever the count",
           "return link->nvlinks * node->nvlink_gbps;", "return node->nvlink_gbps;",
           ["sim.bandwidth"]),
    Mutant("SYS paths given the PCIe bandwidth (the socket link forgotten)",
           "return node->sys_gbps < node->pcie_gbps ? node->sys_gbps : node->pcie_gbps;",
           "return node->pcie_gbps;", ["sim.bandwidth"]),
    Mutant("TP and DP colours swapped",
           "p->tp_color[r] = d + l->dp * s;", "p->tp_color[r] = t + l->tp * s;", ["sim.split"]),
    Mutant("a GPU given to two ranks (the used mask never set)",
           "        s->used |= 1 << g;\n", "", ["sim.valid"]),
]
