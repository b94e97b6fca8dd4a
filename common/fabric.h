/* fabric.h: a switched fabric (InfiniBand style): nodes, ports, cables and forwarding tables.
 *
 * Read from the topology file `ibnetdiscover` writes (infiniband-diags), or
 * built by a program. Hosts are channel-adapter ports: nodes 0..nhosts-1,
 * each with one port (port 0); switches follow, nhosts..nnodes-1. Ports are
 * numbered from 0 here (ibnetdiscover's port p is port p-1). A channel is one
 * direction of a cable, named by the node and port it leaves from:
 * CL_FABRIC_CHANNEL(node, port).
 *
 * Routes are linear forwarding tables, as an InfiniBand subnet manager
 * programs them: for every switch and every destination host, the port out
 * of which the switch forwards. A route is followed from the source host's
 * port to the destination; the channel dependency graph of the tables (a
 * dependency c1 -> c2 when some route uses c2 right after c1) is acyclic
 * exactly when the routes cannot deadlock (Dally and Seitz 1987).
 *
 * The harness's side: labs that give the student a fabric (lab14) read it
 * here, check the student's tables with it and time flows on it.
 */
#ifndef COMMLAB_FABRIC_H
#define COMMLAB_FABRIC_H

#include <stdint.h>

#include "result.h"
#include "sim/sim_graph.h"

#define CL_FABRIC_MAX_NODES           2048
#define CL_FABRIC_MAX_HOSTS           1536
#define CL_FABRIC_MAX_SWITCHES        512
#define CL_FABRIC_MAX_PORTS           64
#define CL_FABRIC_CHANNEL(node, port) ((node)*CL_FABRIC_MAX_PORTS + (port))
#define CL_FABRIC_CHANNELS            (CL_FABRIC_MAX_NODES * CL_FABRIC_MAX_PORTS)

typedef struct cl_fabric_end {
    int node, port; /* node -1: the port has no cable */
} cl_fabric_end;

/* Invariants (cl_fabric_finish): every cable is recorded from both ends
 * (link[a][p] = {b, q} and link[b][q] = {a, p}); a host has one port; level
 * is the number of hops to the nearest host (hosts 0, switches without a
 * path to a host -1). */
typedef struct cl_fabric {
    int nhosts, nnodes;
    int nports[CL_FABRIC_MAX_NODES];
    int level[CL_FABRIC_MAX_NODES];
    cl_fabric_end link[CL_FABRIC_MAX_NODES][CL_FABRIC_MAX_PORTS];
    double gbps[CL_FABRIC_MAX_NODES][CL_FABRIC_MAX_PORTS]; /* data rate of the cable, Gb/s */
    char id[CL_FABRIC_MAX_NODES][24];                      /* "S-0008f10500200b50", "H-...:1" */
    char desc[CL_FABRIC_MAX_NODES][48];                    /* the node description */
} cl_fabric;

/* Forwarding tables: out[(s - nhosts) * nhosts + d] is the port switch s
 * forwards packets for host d out of (-1: none). */
typedef struct cl_fabric_routes {
    int nhosts, nswitches;
    int16_t *out;
} cl_fabric_routes;

/* Read an ibnetdiscover topology file. Hosts are numbered in the order of
 * the file's Ca records (port by port), switches in the order of its Switch
 * records. Each cable's rate comes from its width and speed ("4xEDR": 100
 * Gb/s of data); default_gbps where the line has none. CL_ERR_PARSE with
 * "file:line: reason" for a malformed file, a cable its two ends disagree
 * on, or a fabric beyond the limits above; CL_ERR_IO when it cannot be read. */
cl_result cl_fabric_read(const char *path, double default_gbps, cl_fabric *f);

/* Check the invariants and compute levels (for a fabric filled by a
 * program). CL_ERR_INVALID with a reason for a one-sided cable, a port out
 * of range or a host with more than one port. */
cl_result cl_fabric_finish(cl_fabric *f);

/* Tables for f, every entry -1. CL_ERR_NOMEM. */
cl_result cl_fabric_routes_init(const cl_fabric *f, cl_fabric_routes *r);
void cl_fabric_routes_free(cl_fabric_routes *r);

/* Read tables from a text file: "lft SWITCHES HOSTS", then a line of HOSTS ports
 * (-1: none) for every switch, in node order. CL_ERR_PARSE with a reason when
 * the counts differ from f's or an entry is not a port; CL_ERR_IO. */
cl_result cl_fabric_read_routes(const char *path, const cl_fabric *f, cl_fabric_routes *r);

/* Follow the route from host src to host dst. path (room for max channels)
 * gets the channels in order, *n their number. CL_ERR_INVALID with a reason
 * when the route reaches a port without a cable or out of range, another
 * host, or loops (more hops than nodes). */
cl_result cl_fabric_walk(const cl_fabric *f, const cl_fabric_routes *r, int src, int dst, int *path,
                         int max, int *n);

/* What the tables do for every ordered pair of hosts. */
typedef struct cl_fabric_check {
    long pairs, delivered;    /* pairs routed, and routed to their destination */
    int bad_src, bad_dst;     /* the first pair that failed (-1 none) */
    char why[160];            /* and why */
    int max_hops;             /* switches crossed on the longest route */
    long dependencies;        /* distinct channel dependencies */
    int acyclic;              /* 1 when the channel dependency graph has no cycle */
    int cycle[64], cycle_len; /* one cycle (channels), when there is one */
} cl_fabric_check;

/* Route every ordered pair of distinct hosts and build the channel
 * dependency graph. CL_ERR_NOMEM; anything the routes do wrong is in *out. */
cl_result cl_fabric_check_routes(const cl_fabric *f, const cl_fabric_routes *r,
                                 cl_fabric_check *out);

/* Whether channel a -> channel b is a dependency of the tables (some route
 * uses b right after a). Valid after cl_fabric_check_routes on the same
 * fabric and tables, until the next call. */
int cl_fabric_depends(int a, int b);

/* Add bytes[i] to every channel on the route of flow src[i] -> dst[i]
 * (load[CL_FABRIC_CHANNELS], not cleared). CL_ERR_INVALID with a reason for
 * a broken route or a host out of range. */
cl_result cl_fabric_loads(const cl_fabric *f, const cl_fabric_routes *r, const int *src,
                          const int *dst, const double *bytes, int n, double *load);

/* The fabric as the simulator's graph (sim/sim_graph.h): a vertex per node, a
 * link per channel at its cable's rate (bytes/s), no latency; link_of
 * [CL_FABRIC_CHANNELS] gets every channel's link id (-1: no cable). The graph
 * is finalized; free it with cl_sim_graph_free. CL_ERR_NOMEM. */
cl_result cl_fabric_sim_graph(const cl_fabric *f, cl_sim_graph *g, int *link_of);

#endif /* COMMLAB_FABRIC_H */
