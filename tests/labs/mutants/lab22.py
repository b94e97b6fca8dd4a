"""Typical wrong answers in lab22 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("the ring ReduceScatter adds this rank's part to the chunk it sends",
           "shard[i] = tmp[i] + buf[in * k + i];", "shard[i] = tmp[i] + buf[out * k + i];",
           ["cpu.collectives", "cpu.dp"]),
    Mutant("a missing reduce-scatter: ZeRO-2/3 keep the rank's own gradient shard",
           "                CL_TRY(lab22_reduce_scatter(c, grad, n, s.gs + (size_t)l * k));",
           "                memcpy(s.gs + (size_t)l * k, grad + (size_t)r * k, k * sizeof(float));",
           ["cpu.zero2", "cpu.zero3"]),
    Mutant("the sum of the ranks' gradients used, not their mean",
           "lab22_scale(gs, k, 1.0f / (float)N);", "lab22_scale(gs, k, 1.0f);",
           ["cpu.zero1", "cpu.zero2", "cpu.zero3"]),
    Mutant("ZeRO-1 all-reduces the gradients, then keeps its shard: 3Ψ sent",
           "                CL_TRY(lab22_reduce_scatter(c, s.g + off, n, gs));",
           "                CL_TRY(lab22_reduce_scatter(c, s.g + off, n, gs));\n"
           "            if (st == 1)\n"
           "                CL_TRY(lab22_all_gather(c, gs, n, s.g + off));",
           ["cpu.zero1"]),
    Mutant("ZeRO-3 keeps the last layer gathered from the forward pass: not 3Ψ",
           "            CL_TRY(params_of(c, j, &s, l, &p));\n"
           "            const float *x = l == 0 ? j->x : s.acts + (size_t)(l - 1) * bx;\n"
           "            lab22_backward",
           "            if (st < 3 || l < L - 1)\n"
           "                CL_TRY(params_of(c, j, &s, l, &p));\n"
           "            else\n"
           "                p = s.layer;\n"
           "            const float *x = l == 0 ? j->x : s.acts + (size_t)(l - 1) * bx;\n"
           "            lab22_backward",
           ["cpu.zero3"]),
    Mutant("ZeRO-3 with room for the whole model gathered: no 1/N shrink",
           "CL_TRY(alloc(c, st == 3, n, &s.layer));", "CL_TRY(alloc(c, st == 3, psi, &s.layer));",
           ["cpu.memory"]),
    Mutant("ZeRO-2 keeps a full gradient buffer of the model",
           "CL_TRY(alloc(c, st < 2, psi, &s.g));", "CL_TRY(alloc(c, st < 3, psi, &s.g));",
           ["cpu.memory"]),
    Mutant("ZeRO-3 keeps the whole model and frees the harness's input to hide it",
           "CL_TRY(alloc(c, st == 3, n, &s.layer));",
           "CL_TRY(alloc(c, st == 3, psi, &s.layer));\n"
           "    if (st == 3)\n"
           "        cl_mem_free(c, (void *)(uintptr_t)j->params);",
           ["cpu.memory"]),
    Mutant("the largest bucket that fits, whatever the cluster",
           "    return best_s;\n", "    (void)best_s;\n    return smax;\n", ["cpu.bucket"]),
    Mutant("DeepSpeed's default reduce_bucket_size (5e8 elements) wherever it fits",
           "    return best_s;\n", "    (void)best_s;\n    return fmin(5e8, smax);\n",
           ["cpu.bucket"]),
]
