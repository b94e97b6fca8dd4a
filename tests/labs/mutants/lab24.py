"""Typical wrong answers in lab24 and the checks that must catch them.

A bucket sent before its gradients exist is caught on sim, where the data is symbolic and a
send reads it when posted; on cpu, MPI may read a large send's buffer only when the
receiver matches it, after the gradient has landed, so cpu.correct is not asked to.
"""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("a bucket closes only once it is over the cap, not at it",
           "if (size >= limits[limit]) {", "if (size > limits[limit]) {", ["cpu.assign"]),
    Mutant("the first bucket's cap for every bucket",
           "            limit = 1;\n", "            limit = 0;\n", ["cpu.assign"]),
    Mutant("DDP_SET_LAST_BUCKET_CAP's reversal of the order left out",
           "list[i] = m->order[caps->last_small ? n - 1 - i : i];", "list[i] = m->order[i];",
           ["cpu.assign"]),
    Mutant("ReduceScatter steps that forget to add what came in",
           "        if (rlen)\n            CL_CHECK(\n                cl_reduce_local(ar->comm, "
           "ar->buf + roff, ar->scratch, rlen, CL_FLOAT32, CL_SUM));\n",
           "        (void)rlen;\n",
           ["sim.correct", "cpu.correct"]),
    Mutant("a bucket started while its last kernel's gradients are still missing",
           "ar.done && next < b->n && pending[next] == 0)",
           "ar.done && next < b->n && pending[next] <= 2)", ["sim.correct"]),
    Mutant("no progress while the backward pass runs",
           "        if (!ar.done)\n            CL_CHECK(lab24_ar_progress(&ar, &done));\n", "",
           ["sim.perf", "sim.perf16"]),
    Mutant("each bucket's AllReduce waited for as soon as it starts",
           "off[next + 1] - off[next], scratch));\n            next++;\n        }\n    }\n",
           "off[next + 1] - off[next], scratch));\n            CL_CHECK(lab24_ar_finish(&ar));\n"
           "            next++;\n        }\n    }\n", ["sim.perf", "sim.perf16"]),
    Mutant("one bucket for every gradient: nothing to overlap",
           "                    *out = c;\n",
           "                    *out = (lab24_caps){.first_cap = 2 * total, .cap = 2 * total};\n",
           ["sim.perf", "sim.perf16"]),
    Mutant("DDP's defaults whatever the machine",
           "                    *out = c;\n",
           "                    *out = (lab24_caps){.first_cap = 1 << 20, .cap = 25 << 20};\n",
           ["sim.perf", "sim.caps"]),
    Mutant("one cap tuned by hand on one machine, used on every machine",
           "                    *out = c;\n",
           "                    *out = (lab24_caps){.first_cap = 8 << 20, .cap = 8 << 20};\n",
           ["sim.caps"]),
]
