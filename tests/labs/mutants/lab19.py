"""Typical wrong answers in lab19 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("hostlist drops the zero padding (dgx[1-16] for dgx001..dgx016)",
           "    snprintf(buf, n, \"%0*ld\", padded ? width : 1, v);",
           "    (void)width, (void)padded;\n    snprintf(buf, n, \"%ld\", v);",
           ["cpu.hostlist", "cpu.topology"]),
    Mutant("hostlist compresses the names in the order given, unsorted",
           "    qsort(h, (size_t)n, sizeof *h, by_name);\n", "    (void)by_name;\n",
           ["cpu.hostlist"]),
    Mutant("topology.conf lists the nodes below every switch, also above the leaves",
           "        if (f->sw[s].level == 1) {\n"
           "            for (int i = 0; i < f->nnodes; i++)\n"
           "                if (f->leaf[i] == s)\n"
           "                    kids[n++] = f->node[i];",
           "        if (f->sw[s].level >= 1) {\n"
           "            for (int i = 0; i < f->nnodes; i++)\n"
           "                for (int t = f->leaf[i]; t >= 0; t = f->sw[t].parent)\n"
           "                    if (t == s)\n"
           "                        kids[n++] = f->node[i];",
           ["cpu.topology"]),
    Mutant("topology-blind placement: the lowest-numbered nodes that fit (first fit)",
           "    int w[LAB19_MAX_SWITCHES];\n    whole_below(f, s, w);\n    if (job->nodes == 1) {",
           "    int w[LAB19_MAX_SWITCHES];\n    whole_below(f, s, w);\n"
           "    for (int i = 0, k = 0; i < f->nnodes && k < job->nodes; i++)\n"
           "        if (job->nodes == 1 ? s->free_gpus[i] >= job->gpus\n"
           "                            : s->free_gpus[i] == f->gpus_per_node)\n"
           "            nodes[k++] = i;\n"
           "    return CL_OK;\n"
           "    if (job->nodes == 1) {",
           ["sim.spans", "sim.comm"]),
    Mutant("small jobs spread over the emptiest nodes (worst fit)",
           "        long key = (long)(g - j->gpus) * 100000 + (long)w[f->leaf[i]] * 512 + i;",
           "        long key = (long)(f->gpus_per_node - g) * 100000 + i;",
           ["sim.frag"]),
    Mutant("a job that must span leaves takes them in switch order, not the fullest first",
           "                (!fit_l && !fit_p && w[l] > w[pick]))",
           "                (!fit_l && !fit_p && 0))", ["sim.spans"]),
]
