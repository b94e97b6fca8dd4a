/* sim_node_topo.c: the node keys of a system taken from a recorded topology (topo -m or NCCL XML).
 *
 * For `commlab sim --topo FILE`, a recorded server replaces the structural keys
 * of a system (GPUs, NICs, NVLink pairs or NVSwitch ports, CPUs, PCIe switch
 * population), so that every fabric and algorithm of the system applies; a
 * system with `node = topo` instead builds the node's exact graph from the file
 * (sim_node_file.c). Bandwidth
 * and latency constants stay the system's, since a topology names link
 * classes, not speeds. The mapping:
 *   NV# on every GPU pair with more than CL_SIM_TOPO_MAX_NVLINKS links per GPU
 *       in all (NV12, NV18 everywhere)          -> node = nvswitch, # links a port
 *   NV# on some pairs                           -> node = nvlink, one pair per cell
 *   no NVLink                                   -> node = pcie
 *   CPUs: the groups of GPUs not SYS to each other; GPUs per PCIe switch: the
 *   largest group of GPUs PIX to each other (1 when none is); NICs on PCIe
 *   switches when some NIC is PIX or PXB to a GPU, else on the first CPU.
 */
#include <string.h>

#include "sim_system.h"
#include "sim_topo.h"

cl_result cl_sim_system_apply_topo(cl_sim_system *s, const cl_topo *t)
{
    int gpu[CL_TOPO_MAX_DEVICES], nic[CL_TOPO_MAX_DEVICES], G = 0, R = 0;
    for (int i = 0; i < t->ndevices; i++) {
        if (t->dev[i].kind == CL_DEV_GPU)
            gpu[G++] = i;
        else if (t->dev[i].kind == CL_DEV_NIC)
            nic[R++] = i;
    }
    if (G < 1 || G > CL_SIM_TOPO_MAX_GPUS) {
        cl_set_error("the topology has %d GPUs (1..%d can be simulated)", G, CL_SIM_TOPO_MAX_GPUS);
        return CL_ERR_INVALID;
    }
    int pairs = 0, maxsum = 0, minnv = 1 << 30, allnv = 1;
    for (int a = 0; a < G; a++) {
        int sum = 0;
        for (int b = 0; b < G; b++) {
            if (a == b)
                continue;
            const cl_link *l = &t->link[gpu[a]][gpu[b]];
            if (l->kind == CL_LINK_UNKNOWN) {
                cl_set_error("GPU%d-GPU%d: link class '%s' is not one this model knows", a, b,
                             l->code);
                return CL_ERR_INVALID;
            }
            if (l->kind == CL_LINK_NVLINK) {
                sum += l->nvlinks;
                minnv = l->nvlinks < minnv ? l->nvlinks : minnv;
                pairs += a < b;
            } else {
                allnv = 0;
            }
        }
        maxsum = sum > maxsum ? sum : maxsum;
    }
    s->gpus_per_node = G;
    if (R > 0)
        s->nics_per_node = R;
    s->nnvpairs = 0;
    if (pairs > 0 && allnv && G > 2 && maxsum > CL_SIM_TOPO_MAX_NVLINKS) {
        s->node = CL_SIM_NODE_NVSWITCH;
        s->nvlinks_per_gpu = minnv;
    } else if (pairs > 0) {
        if (pairs > CL_SIM_MAX_NVPAIRS) {
            cl_set_error("%d NVLink pairs (at most %d)", pairs, CL_SIM_MAX_NVPAIRS);
            return CL_ERR_INVALID;
        }
        s->node = CL_SIM_NODE_NVLINK;
        s->nvls = 0;
        for (int a = 0; a < G; a++)
            for (int b = a + 1; b < G; b++) {
                const cl_link *l = &t->link[gpu[a]][gpu[b]];
                if (l->kind == CL_LINK_NVLINK)
                    s->nvpairs[s->nnvpairs++] = (cl_sim_nvpair){a, b, l->nvlinks};
            }
    } else {
        s->node = CL_SIM_NODE_PCIE;
        s->nvls = 0;
    }
    /* CPUs: connected groups of the "not SYS" relation among GPUs. */
    int grp[CL_TOPO_MAX_DEVICES], ncpu = 0;
    for (int a = 0; a < G; a++)
        grp[a] = -1;
    for (int a = 0; a < G; a++) {
        if (grp[a] >= 0)
            continue;
        grp[a] = ncpu;
        for (int changed = 1; changed;) {
            changed = 0;
            for (int x = 0; x < G; x++)
                for (int y = 0; y < G; y++)
                    if (grp[x] == ncpu && grp[y] < 0 && x != y &&
                        t->link[gpu[x]][gpu[y]].kind != CL_LINK_SYS &&
                        t->link[gpu[x]][gpu[y]].kind != CL_LINK_NVLINK)
                        grp[y] = ncpu, changed = 1;
        }
        ncpu++;
    }
    /* Without PCIe classes between GPUs (all NVLink) the grouping says nothing:
     * take the NUMA column when present. */
    if (allnv) {
        int numa[CL_TOPO_MAX_DEVICES] = {0}, n = 0;
        for (int a = 0; a < G; a++) {
            int v = t->dev[gpu[a]].numa_node;
            int seen = 0;
            for (int k = 0; k < n; k++)
                seen |= numa[k] == v;
            if (!seen && n < CL_TOPO_MAX_DEVICES)
                numa[n++] = v;
        }
        ncpu = n > 0 ? n : 1;
    }
    s->cpus = ncpu > 16 ? 16 : ncpu;
    int per = 1;
    for (int a = 0; a < G; a++) {
        int k = 1;
        for (int b = 0; b < G; b++)
            k += b != a && t->link[gpu[a]][gpu[b]].kind == CL_LINK_PIX;
        per = k > per ? k : per;
    }
    s->gpus_per_pcie_switch = per;
    int near = 0;
    for (int r = 0; r < R; r++)
        for (int a = 0; a < G; a++) {
            cl_link_kind k = t->link[gpu[a]][nic[r]].kind;
            near |= k == CL_LINK_PIX || k == CL_LINK_PXB;
        }
    s->nics_per_pcie_switch = near ? 1 : 0;
    return CL_OK;
}
