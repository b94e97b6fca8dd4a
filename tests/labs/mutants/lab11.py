"""Typical wrong answers in lab11 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("no progress calls during the computation (overlap lost)",
           "if (!done && MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {",
           "if (0) {", ["cpu.perf"]),
    Mutant("waiting right after posting the AllReduce",
           "    size_t chunk = lab11_chunk_elems(t);\n    int done = 0;\n",
           "    size_t chunk = lab11_chunk_elems(t);\n    int done = 0;\n"
           "    if (MPI_Wait(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS)\n"
           "        return CL_ERR_BACKEND;\n    done = 1;\n", ["cpu.perf"]),
    Mutant("grad reused as scratch while the AllReduce is in flight (data race)",
           "        lab11_compute(t, next, begin, end);\n",
           "        lab11_compute(t, grad, begin, end);\n"
           "        __builtin_memcpy(next + begin, grad + begin, (end - begin) * sizeof *next);\n",
           ["cpu.correct"]),
    Mutant("progress interval inverted (segment_s * 4 / elem_s)",
           "t->segment_s / 4.0 / t->elem_s", "t->segment_s * 4.0 / t->elem_s", ["cpu.chunk"]),
]
