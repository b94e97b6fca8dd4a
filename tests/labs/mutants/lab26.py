"""Typical wrong answers in lab26 and the checks that must catch them."""

from tests.labs.mutants import Mutant

STEADY = """        CL_CHECK(send_forward_recv_backward(comm, a, jf, jb));
        CL_CHECK(lab26_backward(comm, jb));
        if (i == steady - 1)
            CL_CHECK(send_backward(comm, a, jb));
        else
            CL_CHECK(send_backward_recv_forward(comm, a, jb, jf + 1));
"""

MUTANTS = [
    Mutant("GPipe: every forward first, then every backward (m activations alive)",
           "int warmup = p - s - 1 < m ? p - s - 1 : m,", "int warmup = m,",
           ["cpu.memory", "sim.correct"]),
    Mutant("one warm-up forward too many",
           "int warmup = p - s - 1 < m ? p - s - 1 : m,", "int warmup = p - s < m ? p - s : m,",
           ["cpu.memory", "sim.correct"]),
    Mutant("no warm-up: each micro-batch goes all the way back before the next starts",
           "int warmup = p - s - 1 < m ? p - s - 1 : m,", "int warmup = 0,", ["sim.bubble"]),
    # Both neighbours send first and receive after: with no eager delivery, each send waits
    # for a receive the other side only posts after its own send. The simulator names the
    # deadlock; on cpu the harness's deadline ends it.
    Mutant("a deadlocking schedule: blocking sends before the paired receives",
           STEADY,
           """        CL_CHECK(send_forward(comm, a, jf));
        CL_CHECK(recv_backward(comm, a, jb));
        CL_CHECK(lab26_backward(comm, jb));
        CL_CHECK(send_backward(comm, a, jb));
        if (i < steady - 1)
            CL_CHECK(recv_forward(comm, a, jf + 1));
""", ["cpu.correct", "cpu.memory", "sim.correct", "sim.bubble"]),
    Mutant("cool-down runs the backward before its gradient has arrived",
           "        CL_CHECK(recv_backward(comm, a, j));\n        CL_CHECK(lab26_backward(comm, j));",
           "        CL_CHECK(lab26_backward(comm, j));\n        CL_CHECK(recv_backward(comm, a, j));",
           ["cpu.correct", "sim.correct", "sim.bubble"]),
]
MUTANTS += [
    Mutant("interleaved with plain 1F1B's warm-up (too few forwards before the first backward)",
           "int warmup = 2 * (p - s - 1) + (v - 1) * p;", "int warmup = p - s - 1;",
           ["sim.interleaved"]),
    Mutant("interleaved: backwards in the forwards' chunk order (chunk 0 first)",
           "*k = backward ? v - 1 - in_group / p : in_group / p;", "*k = in_group / p;",
           ["sim.interleaved"]),
]
