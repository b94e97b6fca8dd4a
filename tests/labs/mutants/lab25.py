"""Typical wrong answers in lab25 and the checks that must catch them."""

from tests.labs.mutants import Mutant

EF = ("    for (size_t i = 0; i < n; i++)\n        a->residual[i] += a->grad[i];\n"
      "    lab25_encode(m, a->residual, n, a->k, a->msg);\n"
      "    lab25_decode_add(m, a->msg, n, a->k, -1.0f, a->residual);\n")

MUTANTS = [
    Mutant("error feedback dropped: the gradient is compressed alone, the residual never kept",
           EF, "    lab25_encode(m, a->grad, n, a->k, a->msg);\n",
           ["cpu.fp16", "cpu.bf16", "cpu.topk", "cpu.sign"]),
    Mutant("BF16 by truncation (no rounding)",
           "    u += 0x7fffu + ((u >> 16) & 1u);\n    return (uint16_t)(u >> 16);",
           "    return (uint16_t)(u >> 16);", ["cpu.bf16"]),
    Mutant("FP16 rounds ties away from zero",
           "a += 0xfffu + ((a >> 13) & 1u);", "a += 0x1000u;", ["cpu.fp16"]),
    Mutant("top-k by signed value, not magnitude",
           "float a = fabsf(x[i]);", "float a = x[i];", ["cpu.topk"], count=2),
    Mutant("plain signSGD: no scale (every value decodes to +-1)",
           "float scale = (float)(sum / (double)n);", "float scale = 1.0f;",
           ["cpu.sign", "cpu.converge"]),
    Mutant("the sum of the messages, not their mean",
           "a->k, 1.0f / (float)p, a->out);", "a->k, 1.0f, a->out);",
           ["cpu.exchange", "cpu.fp16", "cpu.topk", "cpu.sign"]),
    Mutant("compressed, but sent padded to the uncompressed size",
           "size_t n = a->n, bytes = lab25_message_bytes(m, n, a->k);",
           "size_t n = a->n, bytes = 4 * n;", ["cpu.fp16", "cpu.bf16", "cpu.topk", "cpu.sign"]),
]
