"""Typical wrong answers in lab21 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("wrong group order: the order's last kind varies fastest",
           "            for (int i = 0; i < g->ndims; i++) {\n                int digit;",
           "            for (int i = g->ndims - 1; i >= 0; i--) {\n                int digit;",
           ["cpu.groups", "cpu.comms", "sim.comms"]),
    Mutant("ep and cp both above 1 accepted in one generator",
           "if (s->ep > 1 && s->cp > 1) {", "if (0) {", ["cpu.generator"]),
    Mutant("a kind of size > 1 left out of the order is appended instead of refused",
           "            if (size[d] != 1) {", "            if (0) {", ["cpu.generator"]),
    Mutant("the embedding group holds the first stage only",
           "color[LAB21_EMBD] = stage == 0 || stage == p->pp - 1 ? color[LAB21_PP] : -1;",
           "color[LAB21_EMBD] = stage == 0 ? color[LAB21_PP] : -1;",
           ["cpu.comms", "sim.comms"]),
    Mutant("gradients reduced over dp alone: the dp-cp group forgotten",
           '"dp",    "dp-cp",', '"dp",    "dp",', ["cpu.comms", "sim.comms"]),
    Mutant("the expert data-parallel size never checked against dp",
           "if (!pp_last && p->pp > 1 && edp != dp) {", "if (0) {", ["cpu.comms"], count=2),
    Mutant("the rule of thumb: TP 8 inside every node, whatever the model",
           "for (int tp = 1; tp <= n; tp++)", "for (int tp = 8; tp <= 8; tp++)", ["sim.plan"]),
    Mutant("a plan that ignores the GPUs' memory",
           "if (mem > j->c.mem_GB * 1e9)", "if (0)", ["sim.plan"]),
]
