"""Typical wrong answers in lab23 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("dropout mask from the rank's own row numbers, not the batch's",
           "lab23_dropout_add(o_mine, x, y, mine, h, first, d->dropout, d->seed);",
           "lab23_dropout_add(o_mine, x, y, mine, h, 0, d->dropout, d->seed);",
           ["cpu.forward"]),
    Mutant("an AllReduce and a slice where the ReduceScatter goes",
           "    CL_TRY(lab23_reduce_scatter(c, o, o_mine, nx)); /* g-bar: ReduceScatter out of it */\n",
           "    CL_TRY(lab23_allreduce(c, o, nfull));\n"
           "    memcpy(o_mine, o + (size_t)first * h, nx * sizeof(float));\n",
           ["cpu.comm"]),
    Mutant("LayerNorm's gradients left as this rank's partial sums",
           "    CL_TRY(lab23_allreduce(c, g->gamma, (size_t)h));\n"
           "    CL_TRY(lab23_allreduce(c, g->beta, (size_t)h));\n", "",
           ["cpu.backward"]),
    Mutant("dZ of every row cut to this rank's rows without the ReduceScatter",
           "    CL_TRY(lab23_reduce_scatter(c, dw, dz, nx)); /* g's backward: ReduceScatter */\n",
           "    memcpy(dz, dw + (size_t)first * h, nx * sizeof(float));\n",
           ["cpu.backward"]),
    Mutant("the gathered Z of every row kept for backward, as tensor parallelism keeps it",
           "    cl_mem_free(c, zg); /* backward gathers Z again rather than keep every row */\n"
           "    zg = NULL;\n",
           "    saved->buf[saved->n] = zg;\n"
           "    saved->count[saved->n++] = nfull;\n"
           "    zg = NULL;\n",
           ["cpu.memory"]),
    Mutant("U computed again in backward (time spent where memory was not short)",
           "    lab23_gelu_backward(u, du, du, nu);\n"
           "    CL_TRY(alloc(c, nfull, &zg));\n"
           "    CL_TRY(lab23_allgather(c, z, zg, nx)); /* Z of every row again, for dA */\n",
           "    CL_TRY(alloc(c, nfull, &zg));\n"
           "    CL_TRY(lab23_allgather(c, z, zg, nx)); /* Z of every row again, for dA */\n"
           "    lab23_matmul(rows, fl, h, zg, 0, w->a, 0, u, 0);\n"
           "    lab23_gelu(u, v, nu);\n"
           "    lab23_gelu_backward(u, du, du, nu);\n",
           ["cpu.perf"]),
    Mutant("Table 2 with sequence parallelism that shards nothing more",
           "double rest = sp ? 34 / t : 10 + 24 / t;", "double rest = 10 + 24 / t;",
           ["cpu.model"]),
    Mutant("every layer recomputed in full, fits or not",
           "for (int n = 0; n <= layers; n++) {", "for (int n = layers; n <= layers; n++) {",
           ["cpu.plan"]),
]
