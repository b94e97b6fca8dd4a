/* lab17_harness.h: the parts of lab 17's plug-in that run in the harness only. */
#ifndef COMMLAB_LAB17_HARNESS_H
#define COMMLAB_LAB17_HARNESS_H

#include "harness/harness.h"
#include "lab17_args.h"
#include "rail_op.h"

/* --- servers (harness_servers.c) -----------------------------------------------------------
 * A recorded topology (nvidia-smi topo -m or NCCL XML, datasets/topologies) as NCCL sees
 * it: path types (NODE is PHB: NCCL has no NODE), NCCL's bandwidths (PCIe of the GPU's
 * generation, the CPUs' inter-socket figure on SYS paths) and GDR at NCCL's default level
 * (PXB). */
cl_result server_load(const char *file, lab17_server *s);

/* The node of a simulated system (datasets/systems), laid out as the simulator lays it. */
cl_result server_of_system(const char *system, lab17_server *s);

/* The NCCL environment of a case (keys pxn_disable, pxn_level, cross_nic, pxn_c2c, policy,
 * net, nvl, pci, buff; absent or "-": unset). */
cl_result env_of_case(cl_case *c, lab17_env *e);

/* The cases modes. */
cl_result server_case(cl_case *c);
cl_result route_case(cl_case *c);
cl_result chunk_case(cl_case *c);
cl_result fabric_case(cl_case *c);

/* --- rails (harness_rails.c) -------------------------------------------------------------
 * Rank 0 sends, rank 1 receives. Each rail is a TCP connection: between the namespace
 * nodes' addresses 10.77.<rail>.<node+1> (--link net: tbf shapes them), or over the
 * loopback, paced by the sender to the rail's rate (--link emu). */
cl_result rails_open(cl_run *run, cl_comm *comm, lab17_rails *r);
void rails_close(void);

/* One transfer of `bytes` from rank 0 to rank 1: the student's (entry "stripe"), or the
 * harness's own over the rails in `only` (a bit mask) in proportion to their rates. Fills
 * the message with fresh data, checks every byte. *seconds: the slower rank's time. */
typedef struct outcome {
    cl_result status;
    char error[400];
    double seconds;
    size_t wrong, posted, ops;
} outcome;
cl_result rails_student(cl_run *run, cl_comm *comm, const lab17_rails *r, size_t bytes, outcome *o);
cl_result rails_harness(cl_run *run, cl_comm *comm, const lab17_rails *r, size_t bytes,
                        unsigned only, outcome *o);

/* The lab's operations (rail.c's calls). */
cl_result rails_op(cl_comm *comm, int code, lab17_op *op);

cl_result stripe_mode(cl_run *run, cl_comm *comm);
cl_result stripeperf_mode(cl_run *run, cl_comm *comm);

#endif /* COMMLAB_LAB17_HARNESS_H */
