"""Typical wrong answers in lab12 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("two devices on one switch counted as several bridges (PXB instead of PIX)",
           "a->nbridges - common <= 1 && b->nbridges - common <= 1",
           "a->nbridges - common == 0 && b->nbridges - common == 0",
           ["cpu.paths.aws-p5en.48xlarge"]),
    Mutant("NUMA nodes ignored: cross-socket paths classified PHB",
           "    if (a->numa != b->numa)\n        return LAB12_SYS;\n", "",
           ["cpu.paths.aws-p4d.24xlarge", "cpu.paths.aws-p5en.48xlarge"]),
    Mutant("legacy level numbers taken as path values",
           "return legacy[old > 5 ? 5 : old];", "return (int)(old > 9 ? 9 : old);",
           ["cpu.levels"]),
    Mutant("GPUDirect RDMA allowed through the CPU by default",
           "level = LAB12_P2C; /* NCCL_NET_GDR_C2C=1", "level = LAB12_PHB; /* NCCL_NET_GDR_C2C=1",
           ["cpu.levels", "cpu.decide"]),
    Mutant("NCCL_P2P_DISABLE ignored",
           "if (p2p_disable && strtol(p2p_disable, NULL, 0) == 1)", "if (0)",
           ["cpu.levels", "cpu.decide"]),
    Mutant("staging memory not locked",
           "if (mlock(p, bytes) != 0) {", "if (0) {", ["cpu.pipe"]),
    Mutant("the writer skips the short last chunk",
           "off < bytes; off += chunk, k++) {", "off + chunk <= bytes; off += chunk, k++) {",
           ["cpu.pipe"]),
    Mutant("one staging buffer: reading and writing never overlap",
           "k % 2", "0", ["cpu.pipeperf"], count=11),
    Mutant("model charges the short last chunk at full size",
           "double n = (double)(bytes - off < chunk ? bytes - off : chunk);",
           "double n = (double)chunk;", ["sim.model"]),
    Mutant("the largest chunk is always chosen (no pipelining)",
           "        if (t < best_t) {", "        if (1) {", ["sim.chunk"]),
]
