/* sim_node.h: the graph of one server (GPUs, NVLink or NVSwitch, PCIe switches, CPUs, NICs). */
#ifndef COMMLAB_SIM_NODE_H
#define COMMLAB_SIM_NODE_H

#include "result.h"
#include "sim_graph.h"
#include "sim_machine.h"
#include "sim_system.h"

/* Build one node of sys with gpus GPUs and nics NICs into the empty graph t.
 * gpu_v[i] and nic_v[i] receive the vertices of local GPU i and NIC i.
 * NVLink bandwidth is links x nvlink_gbps; PCIe and SMP links use pcie_gbps
 * and sys_gbps; NIC r hangs off the PCIe switch of GPU r*gpus/nics (or off
 * the first CPU when nics_per_pcie_switch is 0).
 * Returns CL_ERR_INVALID when the NVLink pairs name GPUs beyond gpus. */
cl_result cl_sim_node_build(const cl_sim_system *sys, int gpus, int nics, cl_sim_graph *t,
                            int *gpu_v, int *nic_v);

/* The same for a node described by a recorded topology (sys->node == CL_SIM_NODE_TOPO):
 * the graph of cl_sim_topo_net_build() with nvlink_gbps, pcie_gbps and sys_gbps, and the
 * nics NICs on the first CPU. CL_ERR_INVALID when gpus is not the file's GPU count, the
 * file's errors (CL_ERR_IO, CL_ERR_PARSE) otherwise (sim_node_topo.c). */
cl_result cl_sim_node_build_topo(const cl_sim_system *sys, int gpus, int nics, cl_sim_graph *t,
                                 int *gpu_v, int *nic_v);

#endif /* COMMLAB_SIM_NODE_H */
