/* lab29.c: chapter 1's 256-server case: the step of a plan, and the plan.
 *
 * You write two functions, in the order of the handout:
 *   1. lab29_predict()  the whole job's step from the simulator's probe of a plan
 *   2. lab29_choose()   the layout, the mapping and NCCL_P2P_LEVEL with the shortest step
 * lab29_probe_plan() (lab29.h) asks the simulator about one plan; each call counts.
 */
#include <stdio.h>
#include <string.h>

#include "lab29.h"

/* BEGIN SOLUTION */
/* The time of a ring AllReduce of `bytes` over k GPUs: 2(k-1) steps of latency alpha, and
 * 2(k-1)/k of the bytes at the group's bus bandwidth. */
static double ring_time(long k, double bytes, double alpha, double busbw_gbps)
{
    return k < 2 ? 0 : 2.0 * (k - 1) * alpha + 2.0 * (k - 1) / k * bytes / (busbw_gbps * 1e9);
}

/* Model states (mixed-precision Adam, 16 bytes a parameter) and activations (sequence
 * parallelism with selective recomputation, 34 s b h bytes a layer) of one GPU. */
static double memory_of(const lab29_job *j, int tp)
{
    return 16.0 * j->params / tp +
           34.0 * j->seq_len * j->micro_batch * (double)j->hidden * j->layers / tp;
}
/* END SOLUTION */

cl_result lab29_predict(const lab29_case *k, const lab29_plan *p, const lab29_probe *pr,
                        lab29_step *out)
{
    /* BEGIN SOLUTION */
    const lab29_job *j = &k->job;
    int G = k->node.ngpus;
    if (p->tp < 1 || p->tp > G || G % p->tp)
        return CL_ERR_INVALID;
    long dp = (long)j->nodes * G / p->tp;
    if (j->micro_batch < 1 || j->global_batch % (dp * j->micro_batch))
        return CL_ERR_INVALID;
    int mb = (int)(j->global_batch / (dp * j->micro_batch));
    double act = (double)j->seq_len * j->micro_batch * j->hidden * j->bytes;
    memset(out, 0, sizeof *out);
    out->micro_batches = mb;
    out->compute_s = j->compute_s;
    /* sequence parallelism: 2 AllGathers and 2 ReduceScatters a layer forward, as many
     * backward, for every micro-batch: 4 AllReduces' worth of ring traffic */
    out->tp_s = 4.0 * j->layers * mb * ring_time(p->tp, act, pr->tp_alpha_s, pr->tp_busbw);
    /* the gradients, once a step, over all dp replicas of the whole job */
    out->dp_s = ring_time(dp, j->params * j->bytes / p->tp, pr->dp_alpha_s, pr->dp_busbw);
    out->step_s = out->compute_s + out->tp_s + out->dp_s;
    out->mem_bytes = memory_of(j, p->tp);
    out->fits = out->mem_bytes <= k->node.gpu_mem_bytes;
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab29) 1: the step of the whole job (handout, "模型"): micro-batches, the TP and
    // DP ring times from the probe, memory; CL_ERR_INVALID for a tp or a batch that does not
    // divide.
    (void)k, (void)p, (void)pr, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* BEGIN SOLUTION */
typedef struct search {
    cl_comm *comm;
    const lab29_case *k;
    int budget;
} search;

static void write_plan(lab29_plan *p, int tp, const int *gpu)
{
    memset(p, 0, sizeof *p);
    p->tp = tp;
    size_t len = 0;
    for (int i = 0; i < LAB29_GPUS; i++)
        len += (size_t)snprintf(p->visible + len, sizeof p->visible - len, "%s%d", i ? "," : "",
                                gpu[i]);
}

/* The predicted step of tp with local rank i on GPU gpu[i]; 0 when out of budget or
 * not launchable. */
static double step_of(search *s, int tp, const int *gpu)
{
    lab29_plan p;
    lab29_probe pr;
    lab29_step st;
    if (s->budget <= 0)
        return 0;
    write_plan(&p, tp, gpu);
    s->budget--;
    if (lab29_probe_plan(s->comm, &p, &pr) != CL_OK) {
        cl_clear_error();
        return 0;
    }
    if (lab29_predict(s->k, &p, &pr, &st) != CL_OK)
        return 0;
    return st.step_s;
}

/* NVLinks between GPUs a and b (0 when they are not NV#). */
static int nvlinks(const lab29_node *n, int a, int b)
{
    return n->gpu[a][b].kind == CL_LINK_NVLINK ? n->gpu[a][b].nvlinks : 0;
}

/* A first mapping: TP groups (consecutive runs of tp local ranks) grown greedily from the
 * lowest free GPU by the most NVLinks to the group so far, so that a group stays inside an
 * NVLink domain when one holds it. */
static void seed(const lab29_node *n, int tp, int *gpu)
{
    int used[LAB29_GPUS] = {0};
    for (int i = 0; i < LAB29_GPUS; i++) {
        int first = i % tp == 0, best = -1, best_links = -1;
        for (int g = 0; g < LAB29_GPUS; g++) {
            if (used[g])
                continue;
            int links = 0;
            for (int x = i - i % tp; x < i && !first; x++)
                links += nvlinks(n, gpu[x], g);
            if (first) {
                best = g;
                break;
            }
            if (links > best_links)
                best = g, best_links = links;
        }
        gpu[i] = best;
        used[best] = 1;
    }
}
/* END SOLUTION */

cl_result lab29_choose(cl_comm *comm, const lab29_case *k, lab29_plan *out)
{
    /* BEGIN SOLUTION */
    search s = {.comm = comm, .k = k, .budget = k->budget};
    int best_tp = 0, best_gpu[LAB29_GPUS];
    double best = 0;
    /* 1. every layout that fits, each from its seed mapping */
    for (int tp = 1; tp <= LAB29_GPUS; tp *= 2) {
        int gpu[LAB29_GPUS];
        if (memory_of(&k->job, tp) > k->node.gpu_mem_bytes)
            continue;
        seed(&k->node, tp, gpu);
        double t = step_of(&s, tp, gpu);
        if (t > 0 && (!best_tp || t < best)) {
            best = t, best_tp = tp;
            memcpy(best_gpu, gpu, sizeof gpu);
        }
    }
    if (!best_tp)
        return CL_ERR_INVALID;
    /* 2. swaps of two local ranks of the best layout while one helps */
    for (int improved = 1; improved && s.budget > 0;) {
        improved = 0;
        for (int a = 0; a < LAB29_GPUS; a++)
            for (int b = a + 1; b < LAB29_GPUS; b++) {
                int gpu[LAB29_GPUS];
                memcpy(gpu, best_gpu, sizeof gpu);
                gpu[a] = best_gpu[b], gpu[b] = best_gpu[a];
                double t = step_of(&s, best_tp, gpu);
                if (t > 0 && t < best * (1 - 1e-9)) {
                    best = t, improved = 1;
                    memcpy(best_gpu, gpu, sizeof gpu);
                }
            }
    }
    write_plan(out, best_tp, best_gpu);
    out->p2p_level[0] = '\0'; /* NCCL's default (PXB) keeps NVB and PIX pairs on P2P */
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab29) 2: choose tp, CUDA_VISIBLE_DEVICES and NCCL_P2P_LEVEL with the shortest
    // predicted step, probing at most k->budget plans.
    (void)comm, (void)k, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
