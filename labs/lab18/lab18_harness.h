/* lab18_harness.h: the parts of lab 18's plug-in that run in the harness only.
 *
 * driver.c          the student's entries (both sides compile it) and the lab's table
 * harness_nodes.c   which node every rank is on, the student's split, the two-level pattern
 * harness_suite.c   verify, bench and sweep: the collective suite's, on the split
 * harness_model.c   the cost model's machines, the simulator's times, compare and choose
 * harness_tables.c  the lab's modes, options and collective
 * kept_comms.c      (the student's program) each rank's communicators, kept between calls
 */
#ifndef COMMLAB_LAB18_HARNESS_H
#define COMMLAB_LAB18_HARNESS_H

#include "harness/coll_suite.h"
#include "lab18_args.h"

/* --- nodes (harness_nodes.c) ---------------------------------------------------------------
 * Which node every world rank is on: --ranks-per-node L with --placement block (ranks
 * 0..L-1 on node 0) or cyclic (rank r on node r % nodes); without it, "sim" puts the
 * system's GPUs per node together and "cpu"/"gpu" group the ranks by host name (net:
 * every namespace node is a host). Every node must hold the same number of ranks. */
cl_result nodes_setup(cl_run *run, cl_comm *comm);
int nodes_count(void);
int nodes_size(void); /* ranks per node */
int node_of(int world_rank);
int local_of(int world_rank); /* its position in its node, in world rank order */

/* Call the student's lab18_split on every rank (after nodes_setup). */
cl_result nodes_split(cl_comm *comm);

/* The pattern of a hierarchical AllReduce (coll_suite.h): every transfer stays in the node
 * or goes to the rank of another node at the same position (its rail), and the bytes a
 * rank sends across nodes are those of an AllReduce of its block over the rail. */
int hier_pattern(const cl_comm *comm, const cl_coll_args *a, const cl_trace_event *ev, int n,
                 char *why, size_t why_len);

/* --- the suite's modes (harness_suite.c) -------------------------------------------------- */

/* The suite's verify, bench and sweep, once the nodes are known and split. */
cl_result verify_mode(cl_run *run, cl_comm *comm);
cl_result bench_mode(cl_run *run, cl_comm *comm);
cl_result sweep_mode(cl_run *run, cl_comm *comm);

/* --- the cost model's machine (harness_model.c) ----------------------------------------- */

/* m for `nodes` nodes of a recorded system (name or file). */
cl_result machine_of_system(const char *system, int nodes, lab18_machine *m);

/* m from the options --intra, --inter, --nics, --launch and the node table. */
cl_result machine_of_options(cl_run *run, lab18_machine *m);

/* The simulator's prediction (seconds) of the flat ring (NCCL's rings, every NIC a
 * channel) and of the two-level AllReduce, for `nodes` nodes of system. */
cl_result simulated_times(const char *system, int nodes, double bytes, double *flat, double *hier);

/* The modes choose (cases) and compare (ranks). */
cl_result choose_case(cl_case *c);
cl_result compare_mode(cl_run *run, cl_comm *comm);

/* --- the tables (harness_tables.c) ------------------------------------------------------- */

extern const cl_mode lab18_modes[];
extern const cl_option lab18_options[];
extern const cl_coll_entry lab18_collectives[];

#endif /* COMMLAB_LAB18_HARNESS_H */
