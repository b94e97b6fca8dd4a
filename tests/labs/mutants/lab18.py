"""Typical wrong answers in lab18 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("rails taken from the world rank (wrong when ranks of a node are not consecutive)",
           "return cl_comm_split(world, cl_comm_rank(*node_comm), node, rail_comm);",
           "return cl_comm_split(world, cl_comm_rank(world) % cl_comm_size(*node_comm), node, "
           "rail_comm);",
           ["cpu.hier"]),
    Mutant("the whole vector reduced on the rail (AllReduce in the node, then across nodes)",
           "    CL_CHECK(lab18_ring_reduce_scatter(node_comm, sendbuf, mine, count, t, op, scratch));\n"
           "    /* 2. Across nodes, on this rank's rail: the block, reduced over the job. */\n"
           "    CL_CHECK(lab18_ring_allreduce(rail_comm, mine, mine, len, t, op, scratch));\n"
           "    /* 3. Inside the node: every rank gets every block. */\n"
           "    return lab18_ring_allgather(node_comm, mine, recvbuf, count, t);",
           "    (void)mine, (void)len;\n"
           "    CL_CHECK(lab18_ring_allreduce(node_comm, sendbuf, recvbuf, count, t, op, scratch));\n"
           "    return lab18_ring_allreduce(rail_comm, recvbuf, recvbuf, count, t, op, scratch);",
           ["cpu.hier", "sim.hier", "sim.perf"]),
    Mutant("no AllGather: each rank keeps only its own block",
           "    return lab18_ring_allgather(node_comm, mine, recvbuf, count, t);",
           "    return CL_OK;", ["cpu.hier", "sim.hier"]),
    Mutant("the flat ring modelled on one NIC (NCCL's rings use every NIC)",
           "double bw = n > 1 ? fmin(m->bw_intra, m->nics_per_node * m->bw_nic) : m->bw_intra;",
           "double bw = n > 1 ? fmin(m->bw_intra, m->bw_nic) : m->bw_intra;", ["sim.choice"]),
    Mutant("latency only: the model ignores the bytes",
           "        return t + 2.0 * (p - 1) / p * bytes / bw;",
           "        return t + 0 * bw;", ["sim.choice"]),
    Mutant("the hierarchy always",
           "    return lab18_predict(m, LAB18_HIER, bytes) < lab18_predict(m, LAB18_FLAT, bytes) ? "
           "LAB18_HIER\n"
           "                                                                                     : "
           "LAB18_FLAT;",
           "    (void)m, (void)bytes;\n    return LAB18_HIER;", ["sim.choice"]),
]
