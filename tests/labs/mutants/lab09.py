"""Typical wrong answers in lab09 and the checks that must catch them."""

from tests.labs.mutants import Mutant

PUSH = "int lab09_try_push(lab09_ring *r, const void *src, size_t bytes)\n"
ALLREDUCE_BODY = ("    int p = c->size, r = c->rank;\n"
                  "    size_t es = cl_dtype_size(t), so, sl, ro, rl;\n")
PUSH_BODY = ("{\n    /* BEGIN SOLUTION */\n"
             "    uint64_t head = atomic_load_explicit(&r->ctrl->head, memory_order_relaxed); "
             "/* ours */\n"
             "    uint64_t tail = atomic_load_explicit(&r->ctrl->tail, memory_order_acquire);\n"
             "    if (head - tail >= r->nslots)\n"
             "        return 0; /* full: the consumer has not freed the oldest slot yet */\n"
             "    lab09_slot *slot = lab09_slot_of(r, head);\n"
             "    memcpy(slot->data, src, bytes);\n    slot->bytes = bytes;\n"
             "    /* Release: the payload and its size become visible before the new head. */\n"
             "    atomic_store_explicit(&r->ctrl->head, head + 1, memory_order_release);\n")
SENDRECV_BODY = "    const unsigned char *s = sbuf;\n    unsigned char *d = rbuf;\n"

MUTANTS = [
    # Memory order: right on x86 most of the time, caught by ThreadSanitizer.
    Mutant("payload published with a relaxed store (no release)",
           "atomic_store_explicit(&r->ctrl->head, head + 1, memory_order_release);",
           "atomic_store_explicit(&r->ctrl->head, head + 1, memory_order_relaxed);",
           ["cpu.race"]),
    Mutant("consumer reads head without acquire",
           "uint64_t head = atomic_load_explicit(&r->ctrl->head, memory_order_acquire);",
           "uint64_t head = atomic_load_explicit(&r->ctrl->head, memory_order_relaxed);",
           ["cpu.race"]),
    Mutant("slot freed before it is read (reading a slot the producer may reuse)",
           "    memcpy(dst, slot->data, n);\n    *bytes = n;\n"
           "    /* Release: our reads of the slot happen before the producer may reuse it. */\n"
           "    atomic_store_explicit(&r->ctrl->tail, tail + 1, memory_order_release);\n",
           "    atomic_store_explicit(&r->ctrl->tail, tail + 1, memory_order_release);\n"
           "    memcpy(dst, slot->data, n);\n    *bytes = n;\n",
           ["cpu.race"]),
    Mutant("a relaxed publish hidden from ThreadSanitizer by an attribute",
           PUSH + PUSH_BODY,
           "__attribute__((no_sanitize_thread)) " + PUSH +
           PUSH_BODY.replace("memory_order_release", "memory_order_relaxed"),
           ["cpu.race"]),
    # Counters and slots.
    Mutant("off-by-one full test: nslots + 1 chunks in flight overwrite the oldest",
           "if (head - tail >= r->nslots)", "if (head - tail > r->nslots)",
           ["cpu.stress", "cpu.race"]),
    Mutant("ring full test that overflows at the 2^64 wrap",
           "if (head - tail >= r->nslots)", "if (head >= tail + r->nslots)",
           ["cpu.stress", "cpu.race"]),
    Mutant("the receiver copies 8 bytes past the end of each chunk",
           "    memcpy(dst, slot->data, n);\n", "    memcpy(dst, slot->data, n + 8);\n",
           ["cpu.stress", "cpu.race"]),
    # Progress.
    Mutant("send waits for a free slot instead of receiving meanwhile (deadlock)",
           "            if (!lab09_try_push(tx, s + sent, n))\n                break;",
           "            if (!lab09_try_push(tx, s + sent, n)) {\n"
           "                lab09_backoff(&idle);\n                continue;\n            }",
           ["cpu.stress", "cpu.allreduce"]),
    # Integrity: the old holes, closed by construction.
    Mutant("the receiver writes the old benchmark's public payload itself, nothing is sent",
           SENDRECV_BODY,
           "    if (!tx || !rx) {\n"
           "        for (size_t i = 0; rx && i < rbytes; i++)\n"
           "            ((unsigned char *)rbuf)[i] = (unsigned char)(i * 131 + 7);\n"
           "        return CL_OK;\n    }\n" + SENDRECV_BODY,
           ["cpu.perf_memcpy", "cpu.perf_mpi"]),
    Mutant("AllReduce through MPI instead of the rings (no MPI exists for the student)",
           ALLREDUCE_BODY,
           "    return MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, MPI_FLOAT, MPI_SUM,\n"
           "                         MPI_COMM_WORLD);\n" + ALLREDUCE_BODY,
           ["cpu.allreduce"]),
    Mutant("AllReduce without the reduction",
           "        CL_CHECK(cl_reduce_host(b + ro * es, c->scratch, rl, t, op));\n", "",
           ["cpu.allreduce"]),
    # The geometry, scored by its consequence.
    Mutant("a ring of 64-byte chunks: every chunk costs a hand-over",
           "    *chunk = (size_t)128 << 10;\n", "    *chunk = 64;\n",
           ["cpu.perf_memcpy", "cpu.perf_mpi"]),
]
