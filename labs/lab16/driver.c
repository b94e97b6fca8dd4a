/* driver.c: lab 16's plug-in: the DCQCN reaction point against the harness's switch port.
 *
 *   lab16 rp     seed=N steps=N flows=N line=GBPS kmin=.. (every lab16_params field)
 *   lab16 incast flows=N line=GBPS rtt=US xoff=KB xon=KB qbound=KB ms=MS stagger=US seed=N
 *                [settings=yours|paper|given kmin=KB kmax=KB pmax=P g=.. alpha_us=.. ...]
 *   lab16 net    [--line 0.2 --rtt 200 --qbound 100 --seconds 2 --rounds 3]
 *                (ranks: node 0 receives, the others send; see net.c)
 *
 * rp feeds fresh random events (CNP arrivals, bytes sent) to the student's
 * reaction point, step by step, and reports every state it returns: the
 * grader replays them against the paper's rules. incast is the closed loop:
 * N senders (the student's reaction points, one call per 1 us step for all of
 * them) into one switch egress port, modelled here, in the harness: the
 * egress queue, RED-like ECN marking with the student's Kmin/Kmax/Pmax, the
 * notification point (one CNP per flow per cnp_us, back after a round trip),
 * and PFC per ingress port (XOFF/XON, pause frames a half round trip late).
 * The student's settings come from their lab16_tune() for the port; the
 * paper's settings run the same loop for comparison.
 *
 * This file holds the student's entries and the lab's table; the modes are in
 * harness_rp.c, harness_incast.c, harness_settings.c (tune) and harness_net.c
 * (lab16_harness.h).
 */
#include "lab16_harness.h"

#ifdef CL_STUDENT_SIDE

static cl_result rp(cl_comm *c, void *args)
{
    (void)c;
    rp_args *a = args;
    for (int i = 0; i < a->n && i < LAB16_MAX_FLOWS; i++)
        lab16_rp_step(&a->p, a->line_gbps, &a->rp[i], &a->ev[i], a->dt_us);
    return CL_OK;
}

static cl_result tune(cl_comm *c, void *args)
{
    (void)c;
    tune_args *a = args;
    return lab16_tune(&a->port, &a->p);
}

CL_STUDENT_ENTRIES({"rp", rp}, {"tune", tune}, {"send", lab16_net_sender});

#else

const cl_lab cl_lab_def = {
    .name = "lab16",
    .title = "拥塞控制: DCQCN against a modelled switch port, and on real ECN marks",
    .permits = CL_PERMIT_NET,
    .modes =
        (const cl_mode[]){{.name = "rp",
                           .help = "your reaction point on random CNPs and byte counts",
                           .cases = rp_case},
                          {.name = "incast",
                           .help = "N of your senders into one switch port, your settings",
                           .cases = incast_case},
                          {.name = "tune",
                           .help = "your settings for a port (line= rtt= xoff= xon= qbound=)",
                           .cases = tune_case},
                          {.name = "net",
                           .help = "UDP senders pacing by your reaction point on real ECN marks",
                           .ranks = net_mode,
                           .min_ranks = 2,
                           .backends = "cpu"},
                          {0}},
    .options =
        (const cl_option[]){
            {"line", "GBPS  net: every link's rate, the bottleneck's too", "0.2"},
            {"rtt", "US  net: the round trip your settings assume", "200"},
            {"qbound", "KB  net: the queue your settings aim under", "100"},
            {"seconds", "S  net: each run's length", "2"},
            {"rounds", "N  net: fixed-rate and your senders, N times each, interleaved", "3"},
            {"udp-port", "P  net: the receiver's UDP port", "47916"},
            {"receiver", "IP  net: the receiver's address (node 0)", "10.77.0.1"},
            {0}},
};

#endif
