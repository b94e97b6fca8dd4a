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
    // TODO(lab08) 1: NCCL's tuning model for one NVSwitch node of G = s->gpus_per_node GPUs.
    //   Unsupported (cl_set_error + CL_ERR_UNSUPPORTED): a protocol with
    //   s->proto_enabled[proto] == 0; NVLS when s->nvls == 0 or proto != CL_PROTO_SIMPLE.
    //   B = s->nvlinks_per_gpu * s->nvlink_gbps (GB/s, the GPU's NVSwitch port), hop =
    //   s->nvswitch_hop_us. The latency and the bytes term of each algorithm, and the
    //   protocol factors, are in the handout's table (section 1).
    //   *us = s->launch_us + latency + bytes term.
    (void)s, (void)algo, (void)proto, (void)bytes, (void)us;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab08_choose(const cl_sim_system *s, double bytes, int *algo, int *proto)
{
    // TODO(lab08) 2: the tuner: the (algorithm, protocol) with the lowest lab08_predict_us()
    //   for this size, skipping the pairs that return CL_ERR_UNSUPPORTED.
    (void)s, (void)bytes, (void)algo, (void)proto;
    return CL_ERR_NOT_IMPLEMENTED;
}
