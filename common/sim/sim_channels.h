/* sim_channels.h: NCCL's ring channels on a simulated server: the search NCCL makes, what they
 * move.
 *
 * The one bandwidth model of lab04 (ring search) and lab07 (mapping a
 * training job), written after NVIDIA/nccl v2.21.5 src/graph/search.cc:
 *
 *   A channel is one ring over the GPUs of a communicator, driven by one SM;
 *   the data is split evenly over the channels, which all run at once. The
 *   search gives every channel a speed from a fixed table (speedArrayIntra,
 *   or speedArrayInter when the ring leaves the node; sm90SpeedArray* from
 *   Hopper on) and reserves it on every link the channel's routes cross
 *   (followPath); it finds as many channels as fit at each speed and keeps
 *   the set with the most nChannels x speed. The table's first entry is the
 *   most one channel ever gets: 40 GB/s before Hopper, 60 from Hopper on
 *   (48 for either across nodes), so one ring cannot fill an NVSwitch port
 *   of 240 or 370 GB/s: NCCL needs many channels there.
 *
 * The simulation runs every channel of every set given at once: a channel is
 * a pipeline, so each of its hops carries the same rate; channels share links
 * max-min fairly (sim_maxmin.h), none faster than its cap; each channel moves
 * the same amount, and a set's bus bandwidth is channels x amount / the time
 * its last channel ends (the large-message limit: latency is left out).
 */
#ifndef COMMLAB_SIM_CHANNELS_H
#define COMMLAB_SIM_CHANNELS_H

#include "result.h"
#include "sim_topo.h"

#define CL_SIM_CHANNELS_MAX 16 /* NCCL's ring graph: MAXCHANNELS / 2 (init.cc) */

/* NCCL's per-channel speeds in GB/s, highest first, for GPUs of compute
 * capability sm (70, 80, 90, ...) and a ring inside one node (inter 0) or
 * across nodes (1). *out points to a static table; returns its length.
 * This function can't fail. */
int cl_sim_channel_speeds(int sm, int inter, const double **out);

/* The table's first entry: the most one channel moves. Can't fail. */
double cl_sim_channel_cap(int sm, int inter);

/* Invariants: 0 <= n <= CL_SIM_CHANNELS_MAX; ring[c][0..k) are GPU indices of
 * the net, every ring the same k GPUs in some order; n == 0 when k < 2. */
typedef struct cl_sim_channels {
    int k;        /* GPUs in every ring */
    int n;        /* channels */
    double speed; /* GB/s each channel reserved on its links (the search's) */
    double cap;   /* GB/s one channel moves at most; 0: no limit */
    int ring[CL_SIM_CHANNELS_MAX][CL_SIM_TOPO_MAX_GPUS];
} cl_sim_channels;

/* NCCL's search over the k GPUs members[0..k) of net for GPUs of compute
 * capability sm: at most max_channels (<= CL_SIM_CHANNELS_MAX) rings, the set
 * with the most n x speed at one speed of the table (the rings in members'
 * order when that is better). Deterministic. Returns CL_OK, CL_ERR_INVALID
 * (a member out of range or twice, k out of range). */
cl_result cl_sim_channels_search(const cl_sim_topo_net *net, const int *members, int k, int sm,
                                 int max_channels, cl_sim_channels *out);

/* The speed n rings get when they share the links evenly: the smallest
 * bw(l) / uses(l) over the links they cross, and at most c->cap. 0 for n == 0.
 * This function can't fail. */
double cl_sim_channels_speed(const cl_sim_topo_net *net, const cl_sim_channels *c);

/* The slowest path type (cl_sim_path) any hop of any channel takes. Can't fail. */
int cl_sim_channels_worst_path(const cl_sim_topo_net *net, const cl_sim_channels *c);

/* NCCL's ncclTopoDupChannels: when speed >= 25 GB/s (and, from Hopper on,
 * not when speed < 50 with more than 4 channels) the channels are doubled,
 * up to CL_SIM_CHANNELS_MAX, each at the speed divided accordingly.
 * Updates *n and *speed. This function can't fail. */
void cl_sim_channels_dup(int sm, int *n, double *speed);

/* The bus bandwidth (GB/s) of every set when all sets run at once:
 * busbw[i] for sets[i] (0 for a set without channels). Returns CL_OK,
 * CL_ERR_INVALID (a channel that can never finish: a link without
 * bandwidth), CL_ERR_NOMEM. */
cl_result cl_sim_channels_busbw(const cl_sim_topo_net *net, const cl_sim_channels *const *sets,
                                int nsets, double *busbw);

#endif /* COMMLAB_SIM_CHANNELS_H */
