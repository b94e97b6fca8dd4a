"""Typical wrong answers in lab04 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("no search: one ring in index order (3 -> 4 goes through a third GPU on a DGX-1)",
           "    if (G < 2)\n        return CL_OK;\n    double best",
           "    if (G >= 1)\n        return CL_OK;\n    double best", ["sim.perf"]),
    Mutant("no search, only enough copies of the index ring to fill the fastest link "
           "(right on an NVSwitch, wrong on every NVLink mesh)",
           "    if (G < 2)\n        return CL_OK;\n    double best",
           "    if (G < 2)\n        return CL_OK;\n"
           "    double top = 0;\n"
           "    for (int l = 0; l < m->nlinks; l++)\n"
           "        top = fmax(top, m->link_gbps[l]);\n"
           "    for (*nrings = 1; *nrings < max_rings && (*nrings + 1) * m->channel_cap_gbps <= top;\n"
           "         (*nrings)++)\n"
           "        memcpy(rings[*nrings], rings[0], sizeof rings[0]);\n"
           "    return CL_OK;\n"
           "    double best", ["sim.perf"]),
    Mutant("one ring is enough: a single channel, however fast the links",
           "            s.max = max_rings;", "            s.max = 1;", ["sim.perf"]),
    Mutant("no per-channel cap: one ring is taken to fill an NVSwitch port",
           "    double s = m->channel_cap_gbps;", "    double s = INFINITY;",
           ["sim.bottleneck", "sim.perf"]),
    Mutant("a link used several times by one ring counted once",
           "        if (load[l] && m->link_gbps[l] / load[l] < s)\n"
           "            s = m->link_gbps[l] / load[l];",
           "        if (load[l] && m->link_gbps[l] < s)\n"
           "            s = m->link_gbps[l];",
           ["sim.bottleneck"]),
    Mutant("a ring closed one GPU early: the first GPU stored twice, one GPU missing",
           "    if (depth == G) {\n",
           "    if (depth == G - 1) {\n        s->cur[c][depth] = s->cur[c][0];\n",
           ["sim.rings", "sim.perf"]),
    Mutant("a tree with a missing child",
           "t[k]->down[g][1] = d1 < 0 ? -1 : order[d1];", "t[k]->down[g][1] = -1;",
           ["sim.trees"]),
    Mutant("second tree a copy of the first (not mirrored or shifted)",
           "                tree1(n, p, &u, &d0, &d1);", "                btree(n, p, &u, &d0, &d1);",
           ["sim.trees"]),
    Mutant("graph file without the tree graph",
           "    for (int id = 0; id < 2 && ok; id++) {", "    for (int id = 0; id < 1 && ok; id++) {",
           ["sim.xml"]),
    Mutant("graph file of the rings as found, without NCCL's channel duplication",
           "    if (speed >= 25.0 && !(m->sm > 80", "    if (0 && speed >= 25.0 && !(m->sm > 80",
           ["sim.xml"]),
]
