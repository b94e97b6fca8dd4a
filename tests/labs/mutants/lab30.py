"""Typical wrong answers in lab30 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("one flat ring in rank order instead of rings along each dimension",
           "    lab30_torus_dims(p, LAB30_MAX_DIMS, dims);\n    for (int d = 0, s = 1;",
           "    dims[0] = p, dims[1] = dims[2] = 1;\n    for (int d = 0, s = 1;",
           ["sim.torus"]),
    Mutant("AllGather in the same order as the ReduceScatter (segments of the wrong level)",
           "    for (int d = LAB30_MAX_DIMS - 1; d >= 0; d--) {",
           "    for (int d = 0; d < LAB30_MAX_DIMS; d++) {", ["sim.torus"]),
    Mutant("the ReduceScatter of the last dimension skipped",
           "    for (int d = 0; d < LAB30_MAX_DIMS; d++) {\n        int k = dims[d], i = coord[d];",
           "    for (int d = 0; d < LAB30_MAX_DIMS - 1; d++) {\n        int k = dims[d], i = coord[d];",
           ["sim.torus"]),
    Mutant("in-network reduction never chosen (NVLS with SHARP left out)",
           "            if (!(f->algos & (1 << k)))\n                continue;\n            double t;",
           "            if (!(f->algos & (1 << k)) || k == LAB30_NVLS)\n                continue;\n"
           "            double t;",
           ["sim.choice"]),
    Mutant("a torus ring over one link instead of one ring per link of a chip",
           "bytes / (2.0 * f->ndims * B);", "bytes / B;", ["sim.choice"]),
    Mutant("switched fabrics: NCCL's tree always (the small-message answer at every size)",
           "            else if (fits[k].ok)", "            else if (fits[k].ok && k == LAB30_TREE)",
           ["sim.choice"]),
]
