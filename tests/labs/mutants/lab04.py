"""Typical wrong answers in lab04 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("a ring closed one GPU early: the first GPU stored twice, one GPU missing",
           "    if (depth == G) {\n",
           "    if (depth == G - 1) {\n        s->cur[c][depth] = s->cur[c][0];\n",
           ["sim.rings"]),
    Mutant("rings in index order, ignoring NVLink (slow on a DGX-1 hybrid mesh)",
           "    if (G < 2)\n        return CL_OK;\n    /* Candidate",
           "    if (G >= 1)\n        return CL_OK;\n    /* Candidate", ["sim.perf"]),
    Mutant("a tree with a missing child",
           "t[k]->down[g][1] = d1 < 0 ? -1 : order[d1];", "t[k]->down[g][1] = -1;",
           ["sim.trees"]),
    Mutant("second tree a copy of the first (not mirrored or shifted)",
           "                tree1(n, p, &u, &d0, &d1);", "                btree(n, p, &u, &d0, &d1);",
           ["sim.trees"]),
    Mutant("a link used several times by one ring counted once",
           "if (load[l] && load[l] / cl_sim_topo_link_gbps(net, l) > worst)\n"
           "            worst = load[l] / cl_sim_topo_link_gbps(net, l);",
           "if (load[l] && 1 / cl_sim_topo_link_gbps(net, l) > worst)\n"
           "            worst = 1 / cl_sim_topo_link_gbps(net, l);",
           ["sim.bottleneck"]),
    Mutant("graph file without the tree graph",
           "    write_graph(f, 1, 1, net, rings, nrings, speed, names[worst]);\n", "",
           ["sim.xml"]),
]
