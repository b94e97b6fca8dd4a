/* lab14.h: types and functions of lab 14 (InfiniBand routing and fat trees).
 * The driver (driver.c) calls the functions you write in lab14.c. */
#ifndef COMMLAB_LAB14_H
#define COMMLAB_LAB14_H

#include "commlab.h"

#define LAB14_MAX_NODES    2048 /* hosts + switches */
#define LAB14_MAX_HOSTS    1536 /* hosts (HCA ports) */
#define LAB14_MAX_SWITCHES 512
#define LAB14_MAX_PORTS    64 /* ports of a switch (NVIDIA Quantum-2 QM9700: 64) */
#define LAB14_MAX_FLOWS    65536
#define LAB14_MAX_CYCLE    64

/* A channel: one direction of a cable, named by the node and port it leaves. */
#define LAB14_CHANNEL(node, port) ((node)*LAB14_MAX_PORTS + (port))
#define LAB14_CHANNELS            (LAB14_MAX_NODES * LAB14_MAX_PORTS)

/* The far end of a port; node -1 when the port has no cable. */
typedef struct lab14_end {
    int node, port;
} lab14_end;

/* A fabric. Hosts (HCA ports, one InfiniBand LID each) are nodes 0..nhosts-1
 * with one port, port 0; switches are nodes nhosts..nnodes-1. Every cable is
 * recorded at both ends: link[a][p] = {b, q} and link[b][q] = {a, p}.
 * level[a] is the number of hops from node a to the nearest host: 0 for
 * hosts, 1 for the switches hosts are cabled to (leaf, edge), 2 above them
 * (spine, aggregation), 3 (core). Every cable has the same rate, gbps. */
typedef struct lab14_fabric {
    int nhosts, nnodes;
    int nports[LAB14_MAX_NODES];
    int level[LAB14_MAX_NODES];
    lab14_end link[LAB14_MAX_NODES][LAB14_MAX_PORTS];
    double gbps;
} lab14_fabric;

/* Linear forwarding tables: out[s - nhosts][d] is the port switch s forwards
 * packets for host d out of. An InfiniBand subnet manager computes them and
 * programs every switch with its row. */
typedef struct lab14_routes {
    short out[LAB14_MAX_SWITCHES][LAB14_MAX_HOSTS];
} lab14_routes;

typedef struct lab14_flow {
    int src, dst; /* hosts */
    double bytes;
} lab14_flow;

enum lab14_pattern {
    LAB14_RING = 0,     /* hosts[i] -> hosts[(i + 1) % n] */
    LAB14_SHIFT = 1,    /* hosts[i] -> hosts[(i + shift) % n] */
    LAB14_ALLTOALL = 2, /* every hosts[i] -> hosts[j], i != j, i outer, j inner */
};

/* A job to place: `servers` servers of the fabric's nservers, each with
 * `rails` HCAs: HCA r of server s is host hca[s * rails + r]. Servers with
 * busy[s] != 0 run other jobs, whose traffic bg[0..nbg) (routed by your
 * tables too) goes on while the job runs. */
typedef struct lab14_job {
    int servers, rails, nservers;
    int hca[LAB14_MAX_HOSTS];
    unsigned char busy[LAB14_MAX_HOSTS];
    int nbg;
    lab14_flow bg[4096];
    double bytes; /* the job's AllReduce, per GPU */
} lab14_job;

/* --- written by the student in lab14.c, in the order of the handout --- */

/* 1. Fabrics. The three-level k-ary fat tree of Al-Fares et al. (k even,
 * 2 <= k <= 16), and the two-level leaf-spine: `leaves` leaves with
 * hosts_per_leaf hosts and `uplinks` uplinks each, spread over `spines`
 * spines (uplinks a multiple of spines). Numbering and cabling as the handout
 * states. CL_ERR_INVALID for parameters outside those rules or the limits. */
cl_result lab14_build_fat_tree(int k, lab14_fabric *f);
cl_result lab14_build_leaf_spine(int leaves, int hosts_per_leaf, int spines, int uplinks,
                                 lab14_fabric *f);

/* A rail-optimised fabric (DGX SuperPOD): `sus` scalable units of
 * nodes_per_su servers with `rails` HCAs each; HCA r of every server of a
 * unit goes to that unit's leaf for rail r; every leaf has nodes_per_su
 * uplinks spread over `spines` spines. hca[s * rails + r] gets the host of
 * HCA r of server s. */
cl_result lab14_build_rail(int sus, int nodes_per_su, int rails, int spines, lab14_fabric *f,
                           int *hca);

/* 2. Routes. D-mod-K on a fabric built by the functions above (levels
 * 0..3, uniform uplink counts per level); up*-down* from switch `root` on
 * any fabric. Fill out[][] for every switch and every host. */
cl_result lab14_route_dmodk(const lab14_fabric *f, lab14_routes *r);
cl_result lab14_route_updown(const lab14_fabric *f, int root, lab14_routes *r);

/* 3. Deadlock freedom: *acyclic = 1 when the channel dependency graph of r
 * on f has no cycle; else 0, and cycle[0..*len) one of its cycles
 * (LAB14_CHANNEL ids, each depending on the next, the last on the first).
 * CL_ERR_INVALID when a route does not reach its destination. */
cl_result lab14_deadlock_free(const lab14_fabric *f, const lab14_routes *r, int *acyclic,
                              int *cycle, int *len);

/* 4. Link loads. lab14_pattern_flows writes the flows of a pattern over
 * hosts[0..n), `bytes` each, into out and returns how many (at most max).
 * lab14_link_loads adds every flow's bytes to each channel on its route
 * (load[LAB14_CHANNELS], cleared first). CL_ERR_INVALID for a broken route. */
int lab14_pattern_flows(int pattern, int shift, const int *hosts, int n, double bytes,
                        lab14_flow *out, int max);
cl_result lab14_link_loads(const lab14_fabric *f, const lab14_routes *r, const lab14_flow *fl,
                           int n, double *load);

/* 5. The decision: choose the job's servers and their ring order
 * (order[0..job->servers)) and the tables r, so that its AllReduce
 * finishes soonest next to the other jobs' traffic. */
cl_result lab14_plan(const lab14_fabric *f, const lab14_job *job, int *order, lab14_routes *r);

#endif /* COMMLAB_LAB14_H */
