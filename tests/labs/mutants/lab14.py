"""Typical wrong answers in lab14 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("fat tree: aggregation switch a cabled to core a + k/2 * j instead of a * k/2 + j",
           "core0 + a * h + j, p);", "core0 + j * h + a, p);", ["sim.build"]),
    Mutant("leaf-spine: uplinks in blocks per spine instead of spread over the spines",
           "spine0 + j % S, l * c + j / S);", "spine0 + j / c, l * c + j % c);", ["sim.build"]),
    Mutant("D-mod-K: d mod u at every level, without dividing by the lower levels' product",
           "W[lv + 1] = W[lv] * (u[lv] ? u[lv] : 1);", "W[lv + 1] = 1;", ["sim.dmodk"]),
    Mutant("up*/down*: a cable's up end is the one farther from the root",
           "#define UP_END(x, y) (rank[x] < rank[y] ||", "#define UP_END(x, y) (rank[x] > rank[y] ||",
           ["sim.updown"]),
    Mutant("cycle search: any visited channel taken for a cycle (no on-stack colour)",
           "if (color[b] == 1) {", "if (color[b]) {", ["sim.deadlock"]),
    Mutant("link loads: the host's own channel not counted",
           "            load[ch] += fl[i].bytes;",
           "            if (a >= f->nhosts)\n                load[ch] += fl[i].bytes;", ["sim.loads"]),
    Mutant("AlltoAll: a host sending to itself too",
           "                if (i != j && k < max)", "                if (k < max)", ["sim.loads"]),
    Mutant("plan: D-mod-K routes kept, the other jobs' channels ignored",
           "    if (top == 2)\n", "    if (top == -1)\n", ["sim.plan"]),
]
