"""Typical wrong answers in lab05 and the checks that must catch them."""

from tests.labs.mutants import Mutant

# The chunk decision: each wrong rule replaces the reference's model at the top of
# lab05_broadcast_chunk() (the rest becomes unreachable).
DECISION = "    /* The first chunk crosses every hop of the chain; each later one leaves the\n"


def decision(name, rule, caught_by=("sim.chunk",)):
    return Mutant(name, DECISION, f"    {rule}\n" + DECISION, list(caught_by))


MUTANTS = [
    # --- the collectives ------------------------------------------------------------------
    Mutant("off-by-one block length (extra element on block `extra` too)",
           "*len = base + (k < extra ? 1 : 0);", "*len = base + (k <= extra ? 1 : 0);",
           ["cpu.reducescatter", "cpu.allgather", "cpu.allreduce", "sim.correct"]),
    Mutant("ReduceScatter forwards without adding its own contribution",
           "        CL_CHECK(cl_reduce_local(comm, dst, send + roff * es, rlen, t, op));\n", "",
           ["cpu.reducescatter", "cpu.allreduce", "sim.correct"]),
    Mutant("AllGather receives from the right and sends to the left (wrong rank order)",
           "rlen * es, left));\n    }\n    return CL_OK;",
           "rlen * es, right));\n    }\n    return CL_OK;",
           ["cpu.allgather", "cpu.allreduce", "sim.correct"]),
    Mutant("Broadcast root never copies its own data into recvbuf",
           "        CL_CHECK(cl_copy_local(comm, out, in, count * es));\n", "        (void)in;\n",
           ["cpu.broadcast", "sim.correct"]),
    Mutant("Broadcast ignores chunk_bytes: the whole message in one piece",
           "size_t chunk = chunk_bytes / es ? chunk_bytes / es : 1;",
           "size_t chunk = count ? count : 1;", ["cpu.broadcast", "sim.correct", "sim.chunk"]),
    Mutant("Broadcast rounds a chunk shorter than an element down to zero elements",
           "size_t chunk = chunk_bytes / es ? chunk_bytes / es : 1;",
           "size_t chunk = chunk_bytes / es;", ["cpu.broadcast", "sim.correct"]),
    # --- the decision: the chunk size -----------------------------------------------------
    decision("a fixed chunk of 1 MiB whatever the size and chain",
             "return (size_t)1 << 20;"),
    decision("no pipelining: the whole message is one chunk",
             "return count * elem_bytes;"),
    decision("one element per chunk", "return elem_bytes;", ("cpu.chunk", "sim.chunk")),
    decision("the library's rule: a 32nd of the message, clamped to 64 KiB..4 MiB",
             "return count * elem_bytes / 32 < (64u << 10) ? (64u << 10) : "
             "count * elem_bytes / 32 > (4u << 20) ? (4u << 20) : count * elem_bytes / 32;"),
    decision("as many chunks as ranks",
             "return ((count + chain->p - 1) / chain->p ? (count + chain->p - 1) / chain->p "
             ": 1) * elem_bytes;"),
    Mutant("the uniform chain's model: every hop taken as slow as the slowest",
           "double fill = inv - 1 / chain->hop[b].bytes_per_s;",
           "double fill = (p - 2) / chain->hop[b].bytes_per_s;", ["sim.chunk"]),
]
