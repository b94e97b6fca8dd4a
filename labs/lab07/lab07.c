/* lab07.c: lab 07, topology optimisation inside an 8-GPU server.
 *
 * Chapter 1's case: a TP group of 8 spread over two NVLink domains is slow;
 * keeping each TP group inside one domain and running DP across is faster.
 * You write the communicator split of a TP x PP x DP layout, the bandwidth of
 * each GPU pair from `nvidia-smi topo -m`, and the search for the rank-to-GPU
 * mapping with the smallest step communication time. Read
 * labs/lab07/README.md first; the TODOs below follow its sections.
 * Build with `make lab07`, grade with `./grade lab07`.
 */
#include <string.h>

#include "lab07.h"

cl_result lab07_split_colors(const lab07_layout *l, lab07_plan *p)
{
    // TODO(lab07) 1: the colours and keys for ncclCommSplit.
    //   Rank r has t = r % tp, d = (r / tp) % dp, stage s = r / (tp * dp).
    //   Ranks of one TP group share (d, s); of one DP group (t, s); of one
    //   pipeline (t, d). Give each group its own colour (any int >= 0), and
    //   order ranks inside a group by key: t in TP, d in DP, s in PP.
    //   Return CL_ERR_INVALID (after cl_set_error) if tp*pp*dp != p->ngpus.
    (void)l, (void)p;
    return CL_ERR_NOT_IMPLEMENTED;
}

double lab07_pair_gbps(const cl_topo *t, int a, int b, const lab07_node *node)
{
    // TODO(lab07) 2: the bandwidth of the path between GPU a and GPU b.
    //   Look at t->link[a][b] (common/topo.h): NV# is # bonded NVLinks of
    //   node->nvlink_gbps each; PIX, PXB, PHB and NODE cross PCIe only
    //   (node->pcie_gbps); SYS also crosses the SMP interconnect, so the slower
    //   of node->pcie_gbps and node->sys_gbps. X and unknown codes: 0.
    (void)t, (void)a, (void)b, (void)node;
    return -1;
}


cl_result lab07_choose_plan(const cl_topo *t, int ngpus, const lab07_node *node,
                            const lab07_layout *l, const lab07_workload *w, lab07_plan *out)
{
    // TODO(lab07) 3: the plan with the smallest step communication time.
    //   a) CL_ERR_INVALID unless 1 <= ngpus <= LAB07_MAX_GPUS; set out->ngpus and
    //      call lab07_split_colors() (TODO 1).
    //   b) build the matrix bw[a][b] = lab07_pair_gbps() (TODO 2) over the GPUs.
    //   c) search the mappings out->gpu_of_rank (every GPU exactly once) for the
    //      one with the smallest lab07_step_time(bw, l, w, plan, &cost).total_s.
    //      8! = 40320 mappings are few enough to try them all.
    (void)t, (void)ngpus, (void)node, (void)l, (void)w, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}
