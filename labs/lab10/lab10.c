/* lab10.c: lab 10, binding each rank to the CPUs next to its GPU and NIC.
 *
 * You find, in recorded hwloc topologies of real GPU servers, the cpuset
 * closest to each GPU and NIC, turn it into the options of numactl, taskset,
 * Open MPI and Slurm, and bind a thread for real on this machine. Read
 * labs/lab10/README.md first; the TODOs below are in the order of its
 * sections. Build with `make lab10`, grade with `./grade lab10`.
 */
#include <stdio.h>
#include <string.h>

#include "lab10.h"

cl_result lab10_device_cpuset(hwloc_topology_t topo, hwloc_obj_t dev, hwloc_bitmap_t out)
{
    // TODO(lab10) 1: the CPUs close to an I/O device.
    //   A PCI device hangs below bridges (I/O objects, which have no cpuset);
    //   the first ancestor that is not an I/O object (a Package, a Group, the
    //   Machine) carries the cpuset. hwloc_get_non_io_ancestor_obj() finds it;
    //   copy its ->cpuset into out with hwloc_bitmap_copy().
    //   NULL dev or no ancestor: cl_set_error(...) and return CL_ERR_INVALID.
    (void)topo, (void)dev, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}


int lab10_pick_nic(hwloc_topology_t topo, const lab10_devices *devs, int gpu, const int *users)
{
    // TODO(lab10) 2: the closest NIC.
    //   For each NIC n, count the parent steps (obj->parent) from the GPU up to
    //   the first object that is also an ancestor of (or is) the NIC, plus the
    //   steps from the NIC up to it. Keep the NIC with the fewest steps; on a
    //   tie the one with fewer users[n]; then the lower index. -1 without NICs.
    (void)topo, (void)devs, (void)gpu, (void)users;
    return -1;
}

cl_result lab10_rank_cpuset(hwloc_topology_t topo, const lab10_devices *devs, int gpu, int nic,
                            hwloc_bitmap_t out)
{
    // TODO(lab10) 3: one rank's cpuset.
    //   The GPU's cpuset (TODO 1); when nic >= 0 and the NIC's cpuset
    //   intersects it (hwloc_bitmap_intersects), keep only the common CPUs
    //   (hwloc_bitmap_and). Free every bitmap you allocate.
    (void)topo, (void)devs, (void)gpu, (void)nic, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}


cl_result lab10_format_options(hwloc_topology_t topo, hwloc_bitmap_t const *sets, int nranks,
                               const char *host, lab10_options *out)
{
    // TODO(lab10) 4: the options of numactl, taskset, Open MPI and Slurm.
    //   Per rank r (see lab10.h and the handout's table for the exact text):
    //     cpulist  hwloc_bitmap_list_snprintf()          "0-23,48-71"
    //     taskset  "taskset -c <cpulist>"
    //     numactl  "numactl --physcpubind=<cpulist> --membind=<nodes>", nodes from
    //              hwloc_cpuset_to_nodeset() printed as a list
    //   Job-wide: slurm_mask "--cpu-bind=mask_cpu:<m0>,<m1>,..." (hwloc_bitmap_taskset_snprintf),
    //   slurm_map "--cpu-bind=map_cpu:<c0>,<c1>,..." (ranks with equal sets take the
    //   set's CPUs in turn), ompi_cpuset "--cpu-set <union>", rankfile lines
    //   "rank <r>=<host> slot=<cpulist>\n".
    (void)topo, (void)sets, (void)nranks, (void)host, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab10_bind_here(hwloc_const_bitmap_t set)
{
    // TODO(lab10) 5: bind for real.
    //   Load the topology of THIS machine (hwloc_topology_init + _load, no XML):
    //   binding through a topology loaded from XML returns 0 and does nothing
    //   (check hwloc_topology_is_thissystem()). Keep only the CPUs of set that
    //   exist here (hwloc_topology_get_allowed_cpuset); none: CL_ERR_INVALID.
    //   Then hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_THREAD); failure:
    //   CL_ERR_BACKEND. Destroy the topology and free what you allocate.
    (void)set;
    return CL_ERR_NOT_IMPLEMENTED;
}
