/* sim_machine.c: assembles a cluster: node copies, fabric, distance tables and template routes. */
#include <stdlib.h>
#include <string.h>

#include "sim_machine.h"
#include "sim_node.h"

cl_result cl_sim_machine_build(const cl_sim_system *sys, const cl_sim_overrides *ov,
                               cl_sim_machine *m)
{
    memset(m, 0, sizeof *m);
    m->sys = *sys;
    m->nodes = sys->nodes;
    m->gpus = sys->gpus_per_node;
    m->nics = sys->nics_per_node;
    if (ov) {
        if (ov->nodes > 0)
            m->nodes = ov->nodes;
        if (ov->gpus_per_node > 0)
            m->gpus = ov->gpus_per_node;
        if (ov->nics_per_node > 0)
            m->nics = ov->nics_per_node;
        if (ov->nic_gbps != 0 && !(ov->nic_gbps > 0 && ov->nic_gbps < 1e6)) {
            cl_set_error("NIC speed must be a positive number of Gb/s, not %g", ov->nic_gbps);
            return CL_ERR_INVALID;
        }
        if (ov->nic_gbps > 0) {
            /* keep NCCL's effective-to-line ratio of the recorded NIC */
            if (sys->nic_gbps > 0)
                m->sys.nic_eff_gbps = sys->nic_eff_gbps * ov->nic_gbps / sys->nic_gbps;
            m->sys.nic_gbps = ov->nic_gbps;
        }
        if (ov->routing >= 0)
            m->sys.routing = (cl_sim_routing)ov->routing;
        if (ov->fabric > 0)
            m->sys.fabric = (cl_sim_fabric_kind)(ov->fabric - 1);
        if (ov->oversubscription != 0)
            m->sys.oversubscription = ov->oversubscription;
        if (ov->pxn > 0)
            m->sys.pxn = ov->pxn == 1;
        m->ring_order = ov->ring_order;
    }
    if (m->ring_order != CL_SIM_RING_NAIVE)
        m->ring_order = CL_SIM_RING_RAIL;
    if (m->nodes > 1 &&
        !(m->sys.nic_gbps > 0 && m->sys.nic_eff_gbps > 0 && m->sys.nic_gbps < 1e6)) {
        cl_set_error("NIC speed must be a positive number of Gb/s, not %g", m->sys.nic_gbps);
        return CL_ERR_INVALID;
    }
    if (!(m->sys.oversubscription >= 1 && m->sys.oversubscription <= 64)) {
        cl_set_error("oversubscription must be a down:up ratio from 1 to 64, not %g",
                     m->sys.oversubscription);
        return CL_ERR_INVALID;
    }
    if ((int)m->sys.fabric < 0 || m->sys.fabric > CL_SIM_FABRIC_FATTREE) {
        cl_set_error("unknown fabric %d", (int)m->sys.fabric);
        return CL_ERR_INVALID;
    }
    if (m->gpus < 1 || m->gpus > CL_SIM_MAX_LOCAL || m->nics > CL_SIM_MAX_LOCAL || m->nodes < 1 ||
        (long)m->nodes * m->gpus > CL_SIM_MAX_GPUS) {
        cl_set_error("machine size out of range: %d nodes x %d GPUs, %d NICs (at most %d GPUs "
                     "or NICs per node and %d GPUs in all)",
                     m->nodes, m->gpus, m->nics, CL_SIM_MAX_LOCAL, CL_SIM_MAX_GPUS);
        return CL_ERR_INVALID;
    }
    if (m->nodes > 1 && m->nics < 1) {
        cl_set_error("%d nodes need at least one NIC per node", m->nodes);
        return CL_ERR_INVALID;
    }
    m->nranks = m->nodes * m->gpus;

    cl_sim_graph t = {0};
    cl_result rc = cl_sim_node_build(&m->sys, m->gpus, m->nics, &t, m->gpu_v, m->nic_v);
    if (rc != CL_OK) {
        cl_sim_graph_free(&t);
        return rc;
    }
    m->tv = t.nv;
    m->tl = t.nl;
    for (int n = 0; n < m->nodes && rc == CL_OK; n++) {
        for (int v = 0; v < t.nv; v++)
            if (cl_sim_graph_add_vertex(&m->g, (cl_sim_vkind)t.vkind[v], 0) < 0)
                rc = CL_ERR_NOMEM;
        for (int l = 0; l < t.nl; l++) {
            const cl_sim_link *L = &t.l[l];
            if (cl_sim_graph_add_link(&m->g, L->src + n * m->tv, L->dst + n * m->tv, L->bw, L->lat,
                                      L->kind) < 0)
                rc = CL_ERR_NOMEM;
        }
    }
    cl_sim_graph_free(&t);
    if (rc != CL_OK)
        return rc;
    m->nhosts = m->nodes > 1 ? m->nodes * m->nics : 0;
    if ((rc = cl_sim_fabric_build(m)) != CL_OK)
        return rc;
    if ((rc = cl_sim_graph_finalize(&m->g)) != CL_OK)
        return rc;
    if ((rc = cl_sim_route_prepare(m)) != CL_OK)
        return rc;
    return cl_sim_route_template(m);
}

cl_result cl_sim_machine_load(const char *system, const cl_sim_overrides *ov, cl_sim_machine *m)
{
    cl_sim_system sys;
    memset(m, 0, sizeof *m);
    cl_result rc = cl_sim_system_load(system, &sys);
    if (rc != CL_OK)
        return rc;
    rc = cl_sim_machine_build(&sys, ov, m);
    if (rc != CL_OK)
        cl_sim_machine_free(m);
    return rc;
}

void cl_sim_machine_free(cl_sim_machine *m)
{
    cl_sim_graph_free(&m->g);
    free(m->troute_off);
    free(m->troute);
    free(m->tclass);
    free(m->nic_up);
    free(m->nic_down);
    free(m->host_leaf);
    free(m->host_index);
    free(m->leaf_v);
    free(m->leaf_of_v);
    free(m->dist);
    free(m->route_load);
    memset(m, 0, sizeof *m);
}
