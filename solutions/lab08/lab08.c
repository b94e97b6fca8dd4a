/* lab08.c: lab 08, 16 GPUs and NVSwitch: ring, tree or NVLS, and which protocol, per size.
 *
 * You write NCCL's alpha-beta tuning model for one NVSwitch node (a latency per
 * algorithm and protocol plus bytes over a bandwidth) and the selector that
 * picks the fastest pair for every message size, which becomes the
 * NCCL_ALGO / NCCL_PROTO table. Read labs/lab08/README.md first; the TODOs below
 * are in the order of its sections. Build with `make lab08`, grade with
 * `./grade lab08`.
 */
#include <math.h>

#include "lab08.h"

cl_result lab08_predict_us(const cl_sim_system *s, int algo, int proto, double bytes,
                           double *us)
{
    /* BEGIN SOLUTION */
    int G = s->gpus_per_node;
    if (proto < 0 || proto >= CL_PROTO_COUNT || algo < 0 || algo >= LAB08_NALGOS || G < 2 ||
        bytes < 0) {
        cl_set_error("bad algorithm, protocol, size or GPU count");
        return CL_ERR_INVALID;
    }
    if (!s->proto_enabled[proto] || (algo == LAB08_NVLS && (!s->nvls || proto != CL_PROTO_SIMPLE))) {
        cl_set_error("%s/%s does not run on %s", lab08_algo_name(algo), lab08_proto_name(proto),
                     s->name);
        return CL_ERR_UNSUPPORTED;
    }
    double port = s->nvlinks_per_gpu * s->nvlink_gbps * 1e3; /* bytes per microsecond */
    double hop = s->nvswitch_hop_us;                          /* GPU -> switch -> GPU */
    double lat, bw_us;
    if (algo == LAB08_RING) {
        lat = s->lat_ring_base[proto] + 2.0 * (G - 1) * (s->lat_ring_nvl[proto] + hop);
        bw_us = 2.0 * (G - 1) / G * bytes / port;
    } else if (algo == LAB08_TREE) {
        /* one node: the tree is a chain; every inner GPU sends to both neighbours */
        lat = s->lat_tree_base[proto] + 2.0 * (G - 1) * (s->lat_tree_nvl[proto] + hop);
        bw_us = 2.0 * bytes / port;
    } else {
        /* NVLS: every GPU pushes its data up and pulls the result down through its port */
        lat = s->lat_nvls_us;
        bw_us = bytes * (G + 1) / G / port / s->nvls_eff;
    }
    bw_us /= s->proto_eff[proto];
    if (proto == CL_PROTO_LL && s->ll_max_gbps[0] > 0)
        bw_us = fmax(bw_us, 2.0 * (G - 1) / G * bytes / (s->ll_max_gbps[0] * 1e3));
    *us = s->launch_us + lat + bw_us;
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab08) 1: NCCL's tuning model for one NVSwitch node of G = s->gpus_per_node GPUs.
    //   Unsupported (cl_set_error + CL_ERR_UNSUPPORTED): a protocol with
    //   s->proto_enabled[proto] == 0; NVLS when s->nvls == 0 or proto != CL_PROTO_SIMPLE.
    //   B = s->nvlinks_per_gpu * s->nvlink_gbps (GB/s, the GPU's NVSwitch port), hop =
    //   s->nvswitch_hop_us. The latency and the bytes term of each algorithm, and the
    //   protocol factors, are in the handout's table (section 1).
    //   *us = s->launch_us + latency + bytes term.
    (void)s, (void)algo, (void)proto, (void)bytes, (void)us;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab08_choose(const cl_sim_system *s, double bytes, int *algo, int *proto)
{
    /* BEGIN SOLUTION */
    double best = INFINITY;
    for (int a = 0; a < LAB08_NALGOS; a++)
        for (int p = 0; p < CL_PROTO_COUNT; p++) {
            double t;
            cl_result rc = lab08_predict_us(s, a, p, bytes, &t);
            if (rc == CL_ERR_UNSUPPORTED)
                continue;
            if (rc != CL_OK)
                return rc;
            if (t < best) {
                best = t;
                *algo = a;
                *proto = p;
            }
        }
    if (isinf(best)) {
        cl_set_error("no algorithm runs on %s", s->name);
        return CL_ERR_UNSUPPORTED;
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab08) 2: the tuner: the (algorithm, protocol) with the lowest lab08_predict_us()
    //   for this size, skipping the pairs that return CL_ERR_UNSUPPORTED.
    (void)s, (void)bytes, (void)algo, (void)proto;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
