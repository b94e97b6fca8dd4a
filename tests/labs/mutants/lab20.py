"""Typical wrong answers in lab20 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("pairwise AlltoAll posts every exchange at once (a flat grouped AlltoAll)",
           "    for (int s = 1; s < p; s++) {\n"
           "        int to = (r + s) % p, from = (r - s + p) % p;\n"
           "        CL_CHECK(cl_sendrecv(comm, in + (size_t)to * bytes, bytes, to, "
           "out + (size_t)from * bytes,\n"
           "                             bytes, from));\n"
           "    }\n"
           "    return CL_OK;",
           "    CL_CHECK(cl_group_start(comm));\n"
           "    for (int s = 1; s < p; s++) {\n"
           "        int to = (r + s) % p, from = (r - s + p) % p;\n"
           "        CL_CHECK(cl_send(comm, in + (size_t)to * bytes, bytes, to));\n"
           "        CL_CHECK(cl_recv(comm, out + (size_t)from * bytes, bytes, from));\n"
           "    }\n"
           "    return cl_group_end(comm);",
           ["cpu.pairwise", "sim.correct"]),
    Mutant("AlltoAllv places what it receives at the sender's displacement",
           "out + rdispls[from] * es", "out + sdispls[from] * es", ["cpu.alltoallv", "sim.correct"],
           count=2),
    Mutant("AlltoAllv forgets the rank's own block",
           "    if (sendcounts[r])\n"
           "        CL_CHECK(\n"
           "            cl_copy_local(comm, out + rdispls[r] * es, in + sdispls[r] * es, "
           "sendcounts[r] * es));\n", "",
           ["cpu.alltoallv", "sim.correct"]),
    Mutant("two-level AlltoAll crosses the fabric block by block (no aggregation)",
           "        CL_CHECK(cl_sendrecv(comm, S + (size_t)to * lb, lb, to * L + l, "
           "out + (size_t)from * lb, lb,\n"
           "                             from * L + l));",
           "        for (int k = 0; k < L; k++)\n"
           "            CL_CHECK(cl_sendrecv(comm, S + (size_t)to * lb + (size_t)k * b, b, "
           "to * L + l,\n"
           "                                 out + (size_t)from * lb + (size_t)k * b, b, "
           "from * L + l));",
           ["cpu.hier", "sim.correct"]),
    Mutant("two-level AlltoAll skips the regrouping by destination node",
           "R + ((size_t)lp * g + m) * b, b));", "R + ((size_t)m * L + lp) * b, b));",
           ["cpu.hier", "sim.correct"]),
    Mutant("MoE plan: the usual capacity factor 1.25, whatever the budget",
           "    plan->capacity_factor = ((double)cap - 0.5) / mean; /* ceil(C * mean) == cap */",
           "    plan->capacity_factor = 1.25;", ["sim.moe"]),
    Mutant("MoE plan: always the padded two-level dispatch",
           "    plan->layout = best == 2 ? LAB20_EXACT : LAB20_PADDED;\n"
           "    plan->algo = best == 1 ? LAB20_HIER : LAB20_PAIRWISE;",
           "    plan->layout = LAB20_PADDED;\n    plan->algo = two ? LAB20_HIER : LAB20_PAIRWISE;",
           ["sim.moe"]),
    Mutant("MoE plan: the exact layout's count exchange left out of its cost",
           "    return line(m, m->pairwise_s, 8.0 * m->p) + line(m, m->pairwise_s, per_rank);",
           "    return line(m, m->pairwise_s, per_rank);", ["sim.moe"]),
]
