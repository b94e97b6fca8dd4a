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
    /* BEGIN SOLUTION */
    int n = p->ngpus;
    if (l->tp < 1 || l->pp < 1 || l->dp < 1 || l->tp * l->pp * l->dp != n) {
        cl_set_error("tp*pp*dp = %d*%d*%d does not equal %d GPUs", l->tp, l->pp, l->dp, n);
        return CL_ERR_INVALID;
    }
    for (int r = 0; r < n; r++) {
        int t = r % l->tp, d = (r / l->tp) % l->dp, s = r / (l->tp * l->dp);
        p->tp_color[r] = d + l->dp * s; /* one TP group per (d, s) */
        p->tp_key[r] = t;
        p->dp_color[r] = t + l->tp * s; /* one DP group per (t, s) */
        p->dp_key[r] = d;
        p->pp_color[r] = t + l->tp * d; /* one pipeline per (t, d) */
        p->pp_key[r] = s;
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab07) 1: the colours and keys for ncclCommSplit.
    //   Rank r has t = r % tp, d = (r / tp) % dp, stage s = r / (tp * dp).
    //   Ranks of one TP group share (d, s); of one DP group (t, s); of one
    //   pipeline (t, d). Give each group its own colour (any int >= 0), and
    //   order ranks inside a group by key: t in TP, d in DP, s in PP.
    //   Return CL_ERR_INVALID (after cl_set_error) if tp*pp*dp != p->ngpus.
    (void)l, (void)p;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

double lab07_pair_gbps(const cl_topo *t, int a, int b, const lab07_node *node)
{
    /* BEGIN SOLUTION */
    const cl_link *link = &t->link[a][b];
    switch (link->kind) {
    case CL_LINK_NVLINK:
        return link->nvlinks * node->nvlink_gbps;
    case CL_LINK_PIX:
    case CL_LINK_PXB:
    case CL_LINK_PHB:
    case CL_LINK_NODE:
        return node->pcie_gbps;
    case CL_LINK_SYS:
        return node->sys_gbps < node->pcie_gbps ? node->sys_gbps : node->pcie_gbps;
    default:
        return 0;
    }
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab07) 2: the bandwidth of the path between GPU a and GPU b.
    //   Look at t->link[a][b] (common/topo.h): NV# is # bonded NVLinks of
    //   node->nvlink_gbps each; PIX, PXB, PHB and NODE cross PCIe only
    //   (node->pcie_gbps); SYS also crosses the SMP interconnect, so the slower
    //   of node->pcie_gbps and node->sys_gbps. X and unknown codes: 0.
    (void)t, (void)a, (void)b, (void)node;
    return -1;
    END SKELETON */
}

/* BEGIN SOLUTION */
typedef struct search {
    double bw[LAB07_MAX_GPUS][LAB07_MAX_GPUS];
    const lab07_layout *l;
    const lab07_workload *w;
    lab07_plan cur, best;
    double best_s;
    int used;  /* bit i: GPU i already given to a rank */
} search;

/* Give rank r each free GPU in turn; evaluate every complete mapping. */
static cl_result place(search *s, int r)
{
    int n = s->cur.ngpus;
    if (r == n) {
        lab07_cost c;
        CL_CHECK(lab07_step_time((const double(*)[LAB07_MAX_GPUS])s->bw, s->l, s->w, &s->cur, &c));
        if (c.total_s < s->best_s) {
            s->best_s = c.total_s;
            memcpy(s->best.gpu_of_rank, s->cur.gpu_of_rank, sizeof s->best.gpu_of_rank);
        }
        return CL_OK;
    }
    for (int g = 0; g < n; g++) {
        if (s->used & (1 << g))
            continue;
        s->used |= 1 << g;
        s->cur.gpu_of_rank[r] = g;
        CL_CHECK(place(s, r + 1));
        s->used &= ~(1 << g);
    }
    return CL_OK;
}
/* END SOLUTION */

cl_result lab07_choose_plan(const cl_topo *t, int ngpus, const lab07_node *node,
                            const lab07_layout *l, const lab07_workload *w, lab07_plan *out)
{
    /* BEGIN SOLUTION */
    if (ngpus < 1 || ngpus > LAB07_MAX_GPUS) {
        cl_set_error("%d GPUs: this lab plans 1..%d", ngpus, LAB07_MAX_GPUS);
        return CL_ERR_INVALID;
    }
    static search s; /* about 1 KiB; static keeps the recursion's stack small */
    memset(&s, 0, sizeof s);
    s.l = l;
    s.w = w;
    s.best_s = 1e300;
    s.cur.ngpus = ngpus;
    for (int a = 0; a < ngpus; a++)
        for (int b = 0; b < ngpus; b++)
            s.bw[a][b] = a == b ? 0 : lab07_pair_gbps(t, a, b, node);
    memset(out, 0, sizeof *out);
    out->ngpus = ngpus;
    CL_CHECK(lab07_split_colors(l, out));
    /* 8! = 40320 mappings: few enough to try them all. */
    CL_CHECK(place(&s, 0));
    memcpy(out->gpu_of_rank, s.best.gpu_of_rank, sizeof out->gpu_of_rank);
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab07) 3: the plan with the smallest step communication time.
    //   a) CL_ERR_INVALID unless 1 <= ngpus <= LAB07_MAX_GPUS; set out->ngpus and
    //      call lab07_split_colors() (TODO 1).
    //   b) build the matrix bw[a][b] = lab07_pair_gbps() (TODO 2) over the GPUs.
    //   c) search the mappings out->gpu_of_rank (every GPU exactly once) for the
    //      one with the smallest lab07_step_time(bw, l, w, plan, &cost).total_s.
    //      8! = 40320 mappings are few enough to try them all.
    (void)t, (void)ngpus, (void)node, (void)l, (void)w, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
