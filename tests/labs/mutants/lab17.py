"""Typical wrong answers in lab17 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("GPU index taken as is (no mirrorBits): GPUs with four local NICs collide",
           "    if (is_pow2(count))\n", "    if (0 && is_pow2(count))\n", ["cpu.local"]),
    Mutant("every channel on the first local NIC",
           "    net += c % per_gpu;", "    net += 0 * per_gpu;", ["cpu.local"]),
    Mutant("PXN ignored at NCCL_P2P_PXN_LEVEL=2: every send leaves by the sender's own NIC",
           "        if (p >= 0 && s->gpu_gpu[p][g] <= LAB17_NVL && s->gpu_nic[p][net] <= pxn_type(e)) {",
           "        if (0 && p >= 0 && s->gpu_gpu[p][g] <= LAB17_NVL &&\n"
           "            s->gpu_nic[p][net] <= pxn_type(e)) {",
           ["cpu.pxn", "sim.fabric"]),
    Mutant("NCCL_PXN_DISABLE read but the rail NIC still taken without a relay (CROSS_NIC ignored)",
           "    if (cross != 0 && level == 0)\n        return;\n",
           "    if (level == 0)\n        return;\n", ["cpu.pxn"]),
    Mutant("the Simple buffer's limit on the chunk forgotten",
           "    if (chunk * 8 > buff) /* NCCL_STEPS slots of the Simple buffer */",
           "    if (0 && chunk * 8 > buff) /* NCCL_STEPS slots of the Simple buffer */",
           ["cpu.chunk"]),
    Mutant("rounding loses the last bytes (no rail takes the remainder)",
           "        size_t n = i == r->k - 1 ? bytes - at : (size_t)((double)bytes * r->rate[i] / total);",
           "        size_t n = (size_t)((double)bytes * r->rate[i] / total);", ["cpu.stripe"]),
    Mutant("the last transfers never waited for",
           "    for (int i = 0; i < r->k; i++)\n        for (int d = 0; d < DEPTH; d++)\n"
           "            if (x[i][d].id)\n                CL_CHECK(lab17_rail_wait(comm, &x[i][d]));\n",
           "", ["cpu.stripe"]),
    Mutant("an equal share on every rail, whatever its rate",
           "        size_t n = i == r->k - 1 ? bytes - at : (size_t)((double)bytes * r->rate[i] / total);",
           "        size_t n = i == r->k - 1 ? bytes - at : bytes / (size_t)r->k;", ["cpu.uneven"]),
    Mutant("pieces of one size on every rail, one in flight, posted and waited in turn: every "
           "round waits for the slowest rail",
           "            size_t each = (len[i] + npieces - 1) / npieces;\n"
           "            size_t n = len[i] - done[i] < each ? len[i] - done[i] : each;\n"
           "            if (n == 0)\n"
           "                continue;\n"
           "            lab17_xfer *slot = &x[i][head[i]];",
           "            size_t each = piece;\n"
           "            size_t n = len[i] - done[i] < each ? len[i] - done[i] : each;\n"
           "            if (n == 0)\n"
           "                continue;\n"
           "            lab17_xfer *slot = &x[i][0];", ["cpu.uneven"]),
]
