"""Typical wrong answers in lab10 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("the whole machine's cpuset instead of the device's ancestor",
           "hwloc_bitmap_copy(out, anc->cpuset);",
           "hwloc_bitmap_copy(out, hwloc_get_root_obj(topo)->cpuset);",
           ["cpu.plan.aws-p4d.24xlarge", "cpu.plan.aws-p5en.48xlarge",
            "cpu.plan.ibm-power8-4gpu"]),
    Mutant("closest NIC without the tie-break on users (two GPUs share one NIC)",
           "(h == best_hops && users[n] < users[best])", "0", ["cpu.plan.aws-p5en.48xlarge"]),
    Mutant("Slurm map_cpu gives every rank of a set the same first CPU",
           "kth_cpu(sets[r], earlier)", "kth_cpu(sets[r], 0)", ["cpu.options"]),
    Mutant("numactl binds memory to NUMA node 0 whatever the CPUs",
           '"numactl --physcpubind=%s --membind=%s", list,\n                 nodelist);',
           '"numactl --physcpubind=%s --membind=%s", list,\n                 "0");',
           ["cpu.options", "cpu.h2d"]),
    Mutant("Open MPI's ppr counts every rank, not the ranks of one NUMA node",
           "per_node = k > per_node ? k : per_node;", "per_node = nranks;", ["cpu.options"]),
    Mutant("binding through a topology loaded from XML (a no-op)",
           "if (!use || hwloc_topology_load(here) != 0) {",
           "if (!use || hwloc_topology_set_xmlbuffer(here, \"<topology/>\", 12) != 0 ||\n"
           "        hwloc_topology_load(here) != 0) {", ["cpu.bind"]),
    Mutant("CPUs that do not exist here are not filtered out",
           "        if (hwloc_bitmap_iszero(use)) {", "        if (0) {", ["cpu.bind"]),
]
