/* driver.c: lab 17's plug-in: NCCL's rails on recorded servers, PXN, and one transfer
 * striped over several rails.
 *
 *   lab17 server file=datasets/topologies/hgx-h200.topo.txt [policy=auto|all|max:N]
 *                                       your local NICs, the NIC of every GPU per channel
 *   lab17 route  file=F|system=S [pxn_disable= pxn_level= cross_nic= pxn_c2c= channel=]
 *                                       your point-to-point NIC and relay GPU, every pair
 *   lab17 chunk  nnodes=2 all_nvlink=1 [net= nvl= pci= buff=]
 *   lab17 fabric system=dgx-h100 nodes=32 fabric=rail|leafspine bytes=B ref=.. recv=..
 *                                       an AlltoAll on your routes vs the reference's, simulated
 *   lab17 stripe     [--link emu|net] [--rates 40,20,10]      (mpirun -np 2) awkward sizes
 *   lab17 stripeperf [--link emu|net] [--rates ..] --bytes 8M [--rounds 5] [--baseline one|each]
 *                                       yours vs the rails' own rates, paired rounds
 *
 * The rails (--rates in MB/s): --link emu paces loopback connections in the harness;
 * --link net uses the namespace nodes' links (scripts/netns/netns.sh --rails K), which tbf
 * shapes. Data never passes through the student's program.
 */
#include <stdlib.h>
#include <string.h>

#include "harness/harness.h"
#include "lab17_args.h"

#ifdef CL_STUDENT_SIDE

static cl_result local(cl_comm *c, void *args)
{
    (void)c;
    local_args *a = args;
    for (int g = 0; g < a->s.ngpus; g++) {
        a->nlocal[g] = lab17_local_nics(&a->s, g, a->local[g]);
        for (int ch = 0; ch < LAB17_CHANNELS; ch++)
            a->nic[g][ch] = lab17_gpu_nic(&a->s, &a->e, g, ch);
    }
    for (int n = 0; n < a->s.nnics; n++) {
        a->ngpus_of[n] = lab17_local_gpus(&a->s, n, a->gpus_of[n]);
        a->gpu_of[n] = lab17_nic_gpu(&a->s, &a->e, n);
    }
    return CL_OK;
}

static cl_result route(cl_comm *c, void *args)
{
    (void)c;
    route_args *a = args;
    for (int g = 0; g < a->s.ngpus; g++)
        for (int d = 0; d < a->s.ngpus; d++) {
            int nic = -1, proxy = -1;
            lab17_p2p_route(&a->s, &a->e, g, a->s.dev[d], a->channel, &nic, &proxy);
            a->nic[g][d] = nic, a->proxy[g][d] = proxy;
        }
    return CL_OK;
}

static cl_result chunk(cl_comm *c, void *args)
{
    (void)c;
    chunk_args *a = args;
    a->chunk = lab17_p2p_chunk(&a->e, a->nnodes, a->all_nvlink);
    return CL_OK;
}

static cl_result stripe(cl_comm *c, void *args)
{
    const stripe_args *a = args;
    return lab17_stripe(c, &a->r, a->bytes, a->sender);
}

CL_STUDENT_ENTRIES({"local", local}, {"route", route}, {"chunk", chunk}, {"stripe", stripe});

#else

#include "lab17_harness.h"

static cl_result lab_op(cl_run *run, cl_comm *comm, int code, void *args, size_t bytes)
{
    (void)run;
    if (bytes != sizeof(lab17_op)) {
        cl_set_error("lab17: a rail operation of %zu bytes", bytes);
        return CL_ERR_INVALID;
    }
    return rails_op(comm, code, args);
}

const cl_lab cl_lab_def = {
    .name = "lab17",
    .title = "多轨网络设计: NCCL's rails, PXN, and one transfer striped over several rails",
    .modes =
        (const cl_mode[]){
            {.name = "server",
             .help = "your local NICs and NIC of every GPU (file=X or system=S, policy=)",
             .cases = server_case},
            {.name = "route",
             .help = "your p2p NIC and relay GPU for every pair (file=X or system=S, env keys)",
             .cases = route_case},
            {.name = "chunk",
             .help = "your p2p chunk size (nnodes= all_nvlink= net= nvl= pci= buff=)",
             .cases = chunk_case},
            {.name = "fabric",
             .help = "an AlltoAll on your routes and on ref=, simulated (system= nodes= fabric=)",
             .cases = fabric_case},
            {.name = "stripe",
             .help = "your striped transfer at awkward sizes, every byte checked (2 ranks)",
             .ranks = stripe_mode,
             .min_ranks = 2,
             .backends = "cpu"},
            {.name = "stripeperf",
             .help = "your striped transfer vs the rails' measured rates, paired rounds",
             .ranks = stripeperf_mode,
             .min_ranks = 2,
             .backends = "cpu"},
            {0}},
    .options =
        (const cl_option[]){
            {.name = "link",
             .help = "emu (loopback, paced) or net (namespace rails)",
             .fallback = "emu"},
            {.name = "rates",
             .help = "the rails' rates, MB/s, comma-separated",
             .fallback = "40,40"},
            {.name = "rounds", .help = "stripeperf: paired rounds", .fallback = "5"},
            {.name = "baseline",
             .help = "stripeperf: one (rail 0 alone) or each (every rail "
                     "alone)",
             .fallback = "one"},
            {0}},
    .lab_op = lab_op,
};

#endif
