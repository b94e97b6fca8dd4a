"""Typical wrong answers in lab15 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("NCCL_IB_TC compared with the DSCP itself (the ECN bits forgotten)",
           "tcv >> 2 != pol->roce_dscp", "tcv != pol->roce_dscp", ["cpu.env_faults"]),
    Mutant("one NCCL_IB_GID_INDEX kept although the NICs' RoCE v2 GIDs sit at different "
           "indices",
           "        if (!same)\n"
           "            CL_CHECK(add(o, \"nccl_gid_index\", host, \"-\", \"unset NCCL_IB_GID_INDEX\"));\n"
           "        else if",
           "        if", ["cpu.env_faults"]),
    Mutant("ECN judged from sysfs only: a driver without it hides disabled ECN",
           "        else if (r == 0)\n"
           "            off = rdma_counter(d, host, dev, \"np_ecn_marked_roce_packets\") > 0 &&",
           "        else if (r == 0)\n"
           "            off = 0 && rdma_counter(d, host, dev, \"np_ecn_marked_roce_packets\") > 0 &&",
           ["cpu.nic_faults"]),
    Mutant("the management port checked as if it carried RoCE",
           "if (nics[k].fabric)", "if (1)", ["cpu.nic_faults"]),
    Mutant("switch PFC: priority 3 enabled is enough (pause on lossy priorities missed)",
           "        only &= i == p || !w.pfc_prio[i];\n", "", ["cpu.switch_faults"]),
    Mutant("DSCP map: the CNP's DSCP not checked",
           "if (q.dscp2prio[pol->cnp_dscp] != pol->cnp_prio)", "if (0)", ["cpu.nic_faults"]),
    Mutant("ibv_devinfo: max_mtu read as the active MTU",
           "strcmp(key, \"active_mtu\")", "strcmp(key, \"max_mtu\")", ["cpu.devinfo"]),
    Mutant("MTU fixed to a jumbo size below the policy's",
           "\"ip link set dev %s mtu %d\", nd, pol->mtu", "\"ip link set dev %s mtu %d\", nd, 4200",
           ["cpu.fixes"]),
]
