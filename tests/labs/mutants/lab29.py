"""Typical wrong answers in lab29 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("DP latency counted over the two probed servers, not over all dp replicas",
           "    out->dp_s = ring_time(dp, j->params * j->bytes / p->tp, pr->dp_alpha_s, "
           "pr->dp_busbw);",
           "    out->dp_s = ring_time(2, j->params * j->bytes / p->tp, pr->dp_alpha_s, "
           "pr->dp_busbw);",
           ["sim.predict"]),
    Mutant("TP communication counted once a step, not once per micro-batch",
           "    out->tp_s = 4.0 * j->layers * mb * ring_time(",
           "    out->tp_s = 4.0 * j->layers * ring_time(", ["sim.predict"]),
    Mutant("activations not split over the TP group",
           "           34.0 * j->seq_len * j->micro_batch * (double)j->hidden * j->layers / tp;",
           "           34.0 * j->seq_len * j->micro_batch * (double)j->hidden * j->layers;",
           ["sim.predict"]),
    Mutant("a batch that does not split over dp accepted",
           "    if (j->micro_batch < 1 || j->global_batch % (dp * j->micro_batch))\n"
           "        return CL_ERR_INVALID;",
           "    if (j->micro_batch < 1)\n        return CL_ERR_INVALID;", ["sim.predict"]),
    Mutant("the chapter's baseline kept: TP=8 in index order",
           "    write_plan(out, best_tp, best_gpu);",
           "    best_tp = 8;\n    for (int i = 0; i < LAB29_GPUS; i++)\n"
           "        best_gpu[i] = i;\n    write_plan(out, best_tp, best_gpu);",
           ["sim.chapter1", "sim.layout", "sim.answers"]),
    Mutant("TP=4 hard-coded with GPUs in index order (right only on the recorded numbering)",
           "    write_plan(out, best_tp, best_gpu);",
           "    best_tp = 4;\n    for (int i = 0; i < LAB29_GPUS; i++)\n"
           "        best_gpu[i] = i;\n    write_plan(out, best_tp, best_gpu);",
           ["sim.chapter1", "sim.layout"]),
    Mutant("no mapping search: the layout chosen, rank r on GPU r",
           "    write_plan(out, best_tp, best_gpu);",
           "    for (int i = 0; i < LAB29_GPUS; i++)\n        best_gpu[i] = i;\n"
           "    write_plan(out, best_tp, best_gpu);",
           ["sim.chapter1", "sim.layout"]),
    Mutant("memory ignored: the fastest layout even when it does not fit",
           "        if (memory_of(&k->job, tp) > k->node.gpu_mem_bytes)\n            continue;\n",
           "", ["sim.valid"]),
]
