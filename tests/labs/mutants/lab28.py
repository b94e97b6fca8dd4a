"""Typical wrong answers in lab28 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("a link only counts as bad when it is down (a degraded rate goes unseen)",
           "if (!v->port_up[p] || v->port_rate[p] < best)",
           "if (!v->port_up[p])",
           ["cpu.recall"]),
    Mutant("any SYS step in a ring is a fault (a two-socket ring must cross twice)",
           "if (sys[i] > 2) /* a ring leaves and re-enters a socket once at best */",
           "if (sys[i] > 0)",
           ["cpu.precision"]),
    Mutant("every SHM connection read as P2P disabled (NCCL uses SHM across sockets)",
           "            if (ga >= 0 && ga < MAX_GPUS && gb >= 0 && gb < MAX_GPUS &&\n"
           "                p2p_capable(v->link[ga][gb]))",
           "            if (ga >= 0 && ga < MAX_GPUS && gb >= 0 && gb < MAX_GPUS)",
           ["cpu.precision"]),
    Mutant("CPU affinity never compared with the topology",
           "                if (outside && any)",
           "                if (outside && any && 0)",
           ["cpu.recall", "cpu.examples"]),
    Mutant("the fix for a socket fallback does not say what to change",
           "\"unset NCCL_IB_DISABLE (InfiniBand ports are active); check NCCL_NET and the \"\n"
           "                \"IB plugin\"",
           "\"use InfiniBand\"",
           ["cpu.fixes"]),
]
