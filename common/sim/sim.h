/* sim.h: the simulator's entry points for the CLI and the labs: predict a whole collective.
 *
 * Timing only: a collective is compiled into phases of point-to-point flows
 * (the schedule NCCL's algorithm would issue), each phase is run through the
 * flow engine on the routed machine, and latency is charged per hop and per
 * protocol with the constants of the system file. See docs/model.md.
 */
#ifndef COMMLAB_SIM_H
#define COMMLAB_SIM_H

#include "coll.h"
#include "result.h"
#include "sim_machine.h"

typedef struct cl_sim_result {
    double time_us; /* predicted completion time of one call */
    double algbw;   /* GB/s, bytes / time as nccl-tests defines it */
    double busbw;   /* GB/s, algbw x the nccl-tests bus factor */
    double lat_us;  /* the latency part of time_us (launch + base + hops) */
    cl_algo algo;   /* the algorithm used (auto resolved) */
    int proto;      /* CL_PROTO_LL, CL_PROTO_LL128 or CL_PROTO_SIMPLE */
    int nchannels;
    long nflows; /* flows simulated */
} cl_sim_result;

/* Predict one collective of `bytes` (nccl-tests' size column: the buffer per
 * rank for allreduce and broadcast, the total gathered or scattered array for
 * allgather and reducescatter, the per-rank send total for alltoall) on m.
 * algo: CL_ALGO_AUTO (the fastest NCCL would pick: ring, tree, NVLS on one
 * node, NVLS-Tree across nodes, NVLS across nodes only with sys.net_sharp),
 * RING, TREE, NVLS, NVLS_TREE (two nodes or more) or HIER.
 * Returns CL_OK, CL_ERR_UNSUPPORTED when algo does not apply (tree for
 * allgather, nvls without NVLS hardware), CL_ERR_INVALID for bad or
 * non-finite sizes. */
cl_result cl_sim_predict_machine(cl_sim_machine *m, cl_coll_kind coll, cl_algo algo, double bytes,
                                 cl_sim_result *out);

/* Load system (name or path), apply ov (may be NULL), build and predict. */
cl_result cl_sim_predict(const char *system, const cl_sim_overrides *ov, cl_coll_kind coll,
                         cl_algo algo, double bytes, cl_sim_result *out);

/* Like cl_sim_predict_machine for one algorithm (not auto) and one protocol
 * (CL_PROTO_*): the time NCCL would see with NCCL_ALGO and NCCL_PROTO forced.
 * Returns CL_OK, CL_ERR_UNSUPPORTED when the algorithm does not apply or the
 * protocol is not available for it on m (NVLS runs Simple only), CL_ERR_INVALID. */
cl_result cl_sim_predict_algo_proto(cl_sim_machine *m, cl_coll_kind coll, cl_algo algo,
                                    cl_proto proto, double bytes, cl_sim_result *out);

/* The ring order of channel c over all ranks (ranks[m->nranks]) and the
 * number of channels the ring algorithm uses on m. */
int cl_sim_ring_channels(const cl_sim_machine *m);
void cl_sim_ring_order(const cl_sim_machine *m, int c, int *ranks);

#endif /* COMMLAB_SIM_H */
