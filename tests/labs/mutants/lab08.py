"""Typical wrong answers in lab08 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("NVLS moves S instead of S(G+1)/G through each port",
           "bw_us = bytes * (G + 1) / G / port / s->nvls_eff;",
           "bw_us = bytes / port / s->nvls_eff;", ["sim.model"]),
    Mutant("LL without its bus bandwidth cap (llMaxBw)",
           "if (proto == CL_PROTO_LL && s->ll_max_gbps[0] > 0)",
           "if (proto == CL_PROTO_LL && s->ll_max_gbps[0] < 0)", ["sim.model"]),
    Mutant("ring latency counted for G-1 steps instead of 2(G-1)",
           "lat = s->lat_ring_base[proto] + 2.0 * (G - 1) * (s->lat_ring_nvl[proto] + hop);",
           "lat = s->lat_ring_base[proto] + (G - 1) * (s->lat_ring_nvl[proto] + hop);",
           ["sim.model"]),
    Mutant("NVLS offered on systems without NVLink SHARP",
           "(algo == LAB08_NVLS && (!s->nvls || proto != CL_PROTO_SIMPLE))",
           "(algo == LAB08_NVLS && proto != CL_PROTO_SIMPLE)", ["sim.model"]),
    Mutant("selector keeps the slowest pair",
           "            if (t < best) {", "            if (isinf(best) || t > best) {",
           ["sim.table", "sim.perf"]),
]
