"""Typical wrong answers in lab07 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("no mapping search: rank r on GPU r, only the layout chosen",
           "    CL_CHECK(lab07_visible_devices(t->gpu, pl->nodes, pl->G, &t->plan));",
           "    for (int r = 0; r < pl->N; r++)\n        t->gpu[r] = r;\n"
           "    CL_CHECK(lab07_visible_devices(t->gpu, pl->nodes, pl->G, &t->plan));",
           ["sim.chapter1", "sim.optimum"]),
    Mutant("model states not split over the pipeline stages (layouts with PP thrown away)",
           "    return 16.0 * m->params / ((double)tp * pp) +",
           "    return 16.0 * m->params / ((double)tp) +", ["sim.optimum"]),
    Mutant("NCCL_P2P_LEVEL=NVL: pairs on one PCIe switch, or through a third GPU's NVLinks, "
           "go through host memory",
           "    out->p2p_level[0] = '\\0';",
           "    snprintf(out->p2p_level, sizeof out->p2p_level, \"NVL\");", ["sim.optimum"]),
    Mutant("only Megatron's default rank order tried (--use-tp-pp-dp-mapping never)",
           "            for (int order = 0; order < 2 - (pp == 1 || dp == 1); order++) {",
           "            for (int order = 0; order < 1; order++) {", ["sim.optimum"]),
    Mutant("TP and DP colours swapped",
           "    out->tp_color = d + dp * s;", "    out->tp_color = t + tp * s;", ["sim.split"]),
    Mutant("the rank order ignored: coordinates always of tp-dp-pp",
           "    if (tp_pp_dp) {", "    if (0) {", ["sim.split"]),
    Mutant("CUDA_VISIBLE_DEVICES of node 1 with the GPUs' global numbers",
           "gpu_of_rank[n * G + i] % G);", "gpu_of_rank[n * G + i]);", ["sim.visible"]),
]
