"""Typical wrong answers in lab06 and the checks that must catch them."""

from tests.labs.mutants import Mutant

RD_START = ("    int p = cl_comm_size(comm), p2 = pow2_below(p), rem = p - p2, nr;\n"
            "    size_t es = cl_dtype_size(t), bytes = count * es;\n")
RAB_START = ("    int p = cl_comm_size(comm), p2 = pow2_below(p), rem = p - p2, nr;\n"
             "    size_t es = cl_dtype_size(t);\n    char *buf = recvbuf;\n")
BCAST = ("    int mask = 1;\n    while (mask < p) {\n        if (vr & mask) {\n"
         "            CL_CHECK(cl_recv(comm, buf, bytes, (vr - mask + root) % p));\n")
SELECT = "    lab06_algo best = LAB06_RING;\n    for (int a = 1;"

MUTANTS = [
    # Correct AllReduces of the wrong kind: only the message patterns tell them apart.
    Mutant("recursive doubling that is the given ring (a correct AllReduce of another kind)",
           RD_START,
           "    return lab06_ring_allreduce(comm, sendbuf, recvbuf, count, t, op, scratch);\n"
           + RD_START,
           ["cpu.recursive_doubling", "sim.correct"]),
    Mutant("Rabenseifner that is recursive doubling (whole vectors, no halving)",
           RAB_START,
           "    return lab06_recursive_doubling(comm, sendbuf, recvbuf, count, t, op, scratch);\n"
           + RAB_START,
           ["cpu.rabenseifner", "sim.correct"]),
    Mutant("tree AllReduce that is the ring",
           "    CL_CHECK(lab06_binomial_reduce(comm, sendbuf, recvbuf, count, t, op, 0, scratch));",
           "    return lab06_ring_allreduce(comm, sendbuf, recvbuf, count, t, op, scratch);\n"
           "    CL_CHECK(lab06_binomial_reduce(comm, sendbuf, recvbuf, count, t, op, 0, scratch));",
           ["cpu.binomial", "sim.correct"]),
    Mutant("Broadcast as a flat tree: the root sends to every rank itself",
           BCAST,
           "    if (vr == 0) {\n        for (int i = 1; i < p; i++)\n"
           "            CL_CHECK(cl_send(comm, buf, bytes, (i + root) % p));\n"
           "        return CL_OK;\n    }\n"
           "    return cl_recv(comm, buf, bytes, root);\n" + BCAST,
           ["cpu.binomial", "sim.correct"]),
    # Wrong data.
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
    # The cost model.
    Mutant("ring cost without the (p-1)/p factor",
           "2.0 * (p - 1) / p * nb", "2.0 * nb", ["cpu.model"]),
    Mutant("no fold term for Rabenseifner on ranks that are not a power of two",
           "(double)(p2 - 1) / p2 * ng + fold;", "(double)(p2 - 1) / p2 * ng;", ["cpu.model"]),
    # The decision, scored by its consequence.
    Mutant("selector always picks the ring (误区一: bandwidth is all that matters)",
           SELECT, "    lab06_algo best = LAB06_RING;\n    return best;\n    for (int a = 1;",
           ["cpu.model", "cpu.select_perf", "sim.select"]),
    Mutant("selector always picks recursive doubling (latency is all that matters)",
           SELECT,
           "    lab06_algo best = LAB06_RECURSIVE_DOUBLING;\n    return best;\n    for (int a = 1;",
           ["cpu.model", "cpu.select_perf", "sim.select"]),
    Mutant("the selected AllReduce ignores the selector and runs the ring",
           "    switch (lab06_select(cl_comm_size(comm), bytes, m)) {",
           "    switch (LAB06_RING + 0 * lab06_select(cl_comm_size(comm), bytes, m)) {",
           ["cpu.select_perf", "sim.select"]),
]
