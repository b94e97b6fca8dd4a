/* lab10.c: lab 10, binding each rank to the CPUs next to its GPU and NIC.
 *
 * You find, in recorded hwloc topologies of real GPU servers, the cpuset
 * closest to each GPU and NIC, turn it into the options of numactl, taskset,
 * Open MPI and Slurm, and bind for real on this machine. Read
 * labs/lab10/README.md first; the TODOs below are in the order of its
 * sections, and labs/lab10/answers.txt holds the answers of its last one.
 * Build with `make lab10`, grade with `./grade lab10`.
 */
#include <stdio.h>
#include <string.h>

#include "lab10.h"

cl_result lab10_device_cpuset(hwloc_topology_t topo, hwloc_obj_t dev, hwloc_bitmap_t out)
{
    // TODO(lab10) 1: the CPUs close to an I/O device (handout section 1).
    //   An I/O object carries no cpuset; the one that counts is that of its
    //   nearest ancestor that is not an I/O object. Copy it into out.
    //   No device or no such ancestor: cl_set_error() and CL_ERR_INVALID.
    (void)topo, (void)dev, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}

int lab10_pick_nic(hwloc_topology_t topo, const lab10_devices *devs, int gpu, const int *users)
{
    // TODO(lab10) 2: the NIC closest to the GPU (section 1): the fewest parent
    //   steps from both up to their closest common ancestor; ties as lab10.h
    //   says. I/O objects have no depth hwloc's ancestor helpers can use.
    //   -1 when the server has no NIC.
    (void)topo, (void)devs, (void)gpu, (void)users;
    return -1;
}

cl_result lab10_rank_cpuset(hwloc_topology_t topo, const lab10_devices *devs, int gpu, int nic,
                            hwloc_bitmap_t out)
{
    // TODO(lab10) 3: one rank's cpuset (section 1): the GPU's CPUs, narrowed to
    //   those it shares with its NIC when there is a NIC and they share any.
    //   Free every bitmap you allocate.
    (void)topo, (void)devs, (void)gpu, (void)nic, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab10_format_options(hwloc_topology_t topo, hwloc_bitmap_t const *sets, int nranks,
                               const char *host, lab10_options *out)
{
    // TODO(lab10) 4: the binding options of numactl, taskset, Open MPI and Slurm
    //   (section 2 gives every format, character for character; lab10.h gives the
    //   fields). Too long for a field: cl_set_error() and CL_ERR_INVALID.
    (void)topo, (void)sets, (void)nranks, (void)host, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab10_bind_here(hwloc_const_bitmap_t set)
{
    // TODO(lab10) 5: bind the calling thread, for real (section 3), to the CPUs
    //   of set that exist on this machine. Beware of a topology that is not this
    //   machine's: binding through it succeeds and does nothing. None of the
    //   CPUs here: CL_ERR_INVALID; hwloc refuses: CL_ERR_BACKEND. Release what
    //   you load or allocate.
    (void)set;
    return CL_ERR_NOT_IMPLEMENTED;
}
