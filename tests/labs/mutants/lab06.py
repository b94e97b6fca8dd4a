"""Typical wrong answers in lab06 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("non-power-of-two ranks: the folded-out ranks never get the result back",
           "        return r % 2 ? cl_send(c, buf, bytes, r - 1) "
           ": cl_recv(c, buf, bytes, r + 1);\n",
           "        return CL_OK;\n",
           ["cpu.recursive_doubling", "cpu.rabenseifner", "sim.correct"]),
    Mutant("recursive doubling without the reduction (exchange only)",
           "partner, scratch, bytes, partner));\n"
           "        CL_CHECK(cl_reduce_local(comm, recvbuf, scratch, count, t, op));\n",
           "partner, scratch, bytes, partner));\n",
           ["cpu.recursive_doubling", "sim.correct"]),
    Mutant("Rabenseifner keeps the wrong half (bit test inverted)",
           "int keep_lo = nr & mask ? mid : lo, keep_hi = nr & mask ? hi : mid;",
           "int keep_lo = nr & mask ? lo : mid, keep_hi = nr & mask ? mid : hi;",
           ["cpu.rabenseifner", "sim.correct"]),
    Mutant("binomial broadcast ignores the root (tree always rooted at rank 0)",
           "int p = cl_comm_size(comm), r = cl_comm_rank(comm), vr = (r - root + p) % p;\n"
           "    size_t bytes = count * cl_dtype_size(t);\n    int mask = 1;",
           "int p = cl_comm_size(comm), r = cl_comm_rank(comm), vr = r;\n"
           "    size_t bytes = count * cl_dtype_size(t);\n    int mask = 1;\n    root = 0;",
           ["cpu.binomial", "sim.correct"]),
    Mutant("ring cost without the (p-1)/p factor",
           "2.0 * (p - 1) / p * nb", "2.0 * nb", ["cpu.model"]),
    Mutant("selector always picks recursive doubling (latency is all that matters)",
           "    lab06_algo best = LAB06_RING;\n    for (int a = 1;",
           "    lab06_algo best = LAB06_RECURSIVE_DOUBLING;\n    return best;\n    for (int a = 1;",
           ["cpu.model", "sim.select"]),
]
