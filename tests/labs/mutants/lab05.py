"""Typical wrong answers in lab05 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
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
    Mutant("Broadcast without pipelining (one chunk: the whole message)",
           "size_t chunk = chunk_bytes / es ? chunk_bytes / es : 1;",
           "size_t chunk = count ? count : 1;", ["sim.perf"]),
    Mutant("AllReduce calls the library's collective",
           "    CL_CHECK(lab05_ring_reduce_scatter(comm, sendbuf, mine, count, t, op, scratch));\n"
           "    return lab05_ring_allgather(comm, mine, recvbuf, count, t);",
           "    (void)mine, (void)scratch;\n"
           "    return cl_baseline_allreduce(comm, sendbuf, recvbuf, count, t, op);",
           ["cpu.allreduce", "sim.correct"]),
]
