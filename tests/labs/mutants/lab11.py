"""Typical wrong answers in lab11 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("AllReduce model with one pass over the ring instead of two",
           "return 2.0 * (p - 1) * (rounds", "return (p - 1) * (rounds", ["cpu.model"]),
    Mutant("step model where communication takes no SMs",
           "double rate = (double)(m->sms - p->channels) / m->sms;", "double rate = 1.0;",
           ["cpu.model"]),
    Mutant("every channel there is: the AllReduce hogs the SMs",
           "for (int c = 1; c <= m->max_channels; c++) {",
           "for (int c = m->max_channels; c <= m->max_channels; c++) {",
           ["cpu.plan", "sim.perf"]),
    Mutant("one bucket for all the gradients: nothing to overlap",
           "lab11_plan p = {.channels = c, .bucket_bytes = acc, .parts = 1};",
           "lab11_plan p = {.channels = c, .bucket_bytes = 1e18, .parts = 1};",
           ["cpu.plan", "sim.perf"]),
    Mutant("no progress between kernel parts: the AllReduce stalls until the end",
           "CL_CHECK(lab11_ar_progress(&ar, &done));\n                active = !done;",
           "done = 0;", ["sim.perf"]),
    Mutant("waiting for each AllReduce as soon as it starts (no overlap)",
           "active = !ar.done, next++;",
           "CL_CHECK(lab11_ar_finish(&ar));\n            active = 0, next++;",
           ["sim.perf"], count=3),
    # A bucket closed before its last layer ran: its AllReduce sends what is not there yet.
    Mutant("a bucket started before its last layer's kernel",
           "        for (int part = 0; part < p->parts; part++) {\n"
           "            CL_CHECK(lab11_compute(c, l, part, p->parts));\n"
           "            if (active) { /* keep the AllReduce moving between parts */\n"
           "                CL_CHECK(lab11_ar_progress(&ar, &done));\n"
           "                active = !done;\n"
           "            }\n"
           "            if (!active && next < nb) {\n"
           "                CL_CHECK(lab11_ar_start(&ar, c, m, grads + off[next], scratch, len[next],\n"
           "                                        p->channels, slot));\n"
           "                active = !ar.done, next++;\n"
           "            }\n"
           "        }\n"
           "        acc += m->layer_bytes[l];\n"
           "        if (acc >= p->bucket_bytes || l == 0) { /* this bucket's gradients all exist now */\n"
           "            off[nb] = start, len[nb] = (size_t)(acc / sizeof(float));\n"
           "            start += len[nb++];\n"
           "            acc = 0;\n"
           "        }\n",
           "        acc += m->layer_bytes[l];\n"
           "        if (acc >= p->bucket_bytes || l == 0) { /* this bucket's gradients all exist now */\n"
           "            off[nb] = start, len[nb] = (size_t)(acc / sizeof(float));\n"
           "            start += len[nb++];\n"
           "            acc = 0;\n"
           "        }\n"
           "        for (int part = 0; part < p->parts; part++) {\n"
           "            CL_CHECK(lab11_compute(c, l, part, p->parts));\n"
           "            if (active) { /* keep the AllReduce moving between parts */\n"
           "                CL_CHECK(lab11_ar_progress(&ar, &done));\n"
           "                active = !done;\n"
           "            }\n"
           "            if (!active && next < nb) {\n"
           "                CL_CHECK(lab11_ar_start(&ar, c, m, grads + off[next], scratch, len[next],\n"
           "                                        p->channels, slot));\n"
           "                active = !ar.done, next++;\n"
           "            }\n"
           "        }\n",
           ["sim.correct"]),
    Mutant("the last layer's kernel never runs",
           "            CL_CHECK(lab11_compute(c, l, part, p->parts));",
           "            if (l > 0)\n                CL_CHECK(lab11_compute(c, l, part, p->parts));",
           ["sim.correct", "cpu.correct"]),
]
