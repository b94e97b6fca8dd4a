"""Typical wrong answers in lab09 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("payload published with a relaxed store (no release fence)",
           "atomic_store_explicit(&r->ctrl->head, head + 1, memory_order_release);",
           "atomic_store_explicit(&r->ctrl->head, head + 1, memory_order_relaxed);",
           ["cpu.race"]),
    Mutant("consumer reads head without acquire",
           "uint64_t head = atomic_load_explicit(&r->ctrl->head, memory_order_acquire);",
           "uint64_t head = atomic_load_explicit(&r->ctrl->head, memory_order_relaxed);",
           ["cpu.race"]),
    Mutant("off-by-one full test: nslots + 1 chunks in flight overwrite the oldest",
           "if (head - tail >= r->nslots)", "if (head - tail > r->nslots)",
           ["cpu.stress", "cpu.race"]),
    Mutant("slot freed before it is read (reading a slot the producer may reuse)",
           "    memcpy(dst, slot->data, n);\n    *bytes = n;\n"
           "    /* Release: our reads of the slot happen before the producer may reuse it. */\n"
           "    atomic_store_explicit(&r->ctrl->tail, tail + 1, memory_order_release);\n",
           "    atomic_store_explicit(&r->ctrl->tail, tail + 1, memory_order_release);\n"
           "    memcpy(dst, slot->data, n);\n    *bytes = n;\n",
           ["cpu.race"]),
    Mutant("ring full test that overflows at the 2^64 wrap",
           "if (head - tail >= r->nslots)", "if (head >= tail + r->nslots)",
           ["cpu.stress", "cpu.race"]),
    Mutant("send waits for a free slot instead of receiving meanwhile (deadlock)",
           "            if (!lab09_try_push(tx, s + sent, n))\n                break;",
           "            if (!lab09_try_push(tx, s + sent, n)) {\n"
           "                lab09_backoff(&idle);\n                continue;\n            }",
           ["cpu.stress", "cpu.allreduce"]),
    Mutant("AllReduce without the reduction",
           "        CL_CHECK(cl_reduce_host(b + SEG_FIRST(recv) * es, c->scratch, SEG_COUNT(recv), "
           "t, op));\n",
           "", ["cpu.allreduce"]),
]
