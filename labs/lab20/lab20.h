/* lab20.h: types and functions of lab 20 (AlltoAll for MoE expert parallelism).
 * The driver (driver.c) calls the functions you write in lab20.c. */
#ifndef COMMLAB_LAB20_H
#define COMMLAB_LAB20_H

#include <stdint.h>

#include "commlab.h"

/* Conventions shared by the collectives below (the harness checks them):
 * - AlltoAll: count is the number of elements of sendbuf (and of recvbuf) on
 *   every rank, a multiple of p; block j of sendbuf (count / p elements at
 *   j * count / p) goes to rank j, block i of recvbuf comes from rank i.
 *   count / p may be 0.
 * - AlltoAllv (MPI_Alltoallv's arguments, in elements): rank j gets
 *   sendcounts[j] elements at sdispls[j]; recvcounts[i] elements from rank i
 *   land at rdispls[i]. Counts may be 0 and differ from pair to pair.
 * - Buffers come from cl_mem_alloc(); sendbuf and recvbuf do not overlap and
 *   sendbuf must not be modified; nothing past the end of recvbuf is written.
 * - Use only transfers (cl_send, cl_recv, cl_sendrecv, cl_isend, cl_irecv,
 *   cl_wait*, groups), cl_copy_local and buffers of your own. */

/* --- 1. pairwise exchange ------------------------------------------------------------- */

/* AlltoAll by pairwise exchange: p - 1 steps, one partner to send to and one
 * to receive from in each step, each step finished before the next. */
cl_result lab20_pairwise_alltoall(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                                  cl_dtype t);

/* --- 2. AlltoAllv ------------------------------------------------------------------------ */

/* The same schedule with a count per pair (empty and uneven blocks). */
cl_result lab20_pairwise_alltoallv(cl_comm *comm, const void *sendbuf, const size_t *sendcounts,
                                   const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                                   const size_t *rdispls, cl_dtype t);

/* --- 3. hierarchical (2-D) AlltoAll ------------------------------------------------------- */

/* Ranks r and r' share a node when r / local == r' / local (p is a multiple
 * of local). Aggregate inside the node first, so that each rank sends one
 * message to each other node, to the rank with its own local index there.
 * scratch holds scratch_bytes (at least 2 * count elements), yours. */
cl_result lab20_hier_alltoall(cl_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                              cl_dtype t, int local, void *scratch, size_t scratch_bytes);

/* --- 4. the MoE dispatch: capacity factor and algorithm ---------------------------------- */

#define LAB20_MAX_COUNTS 12288 /* p * experts */

/* The token routing of one MoE layer on p ranks of expert parallelism. Rank j
 * hosts experts j * experts / p .. (j + 1) * experts / p - 1. Every rank has
 * `tokens` tokens, and the router sends each to `topk` distinct experts:
 * counts[s * experts + e] tokens of rank s go to expert e (each row sums to
 * tokens * topk). A token is token_bytes of hidden state (float32 elements).
 *
 * The machine is described by how long your own collectives took on it: the
 * harness timed your pairwise and your hierarchical AlltoAll with uniform
 * blocks, calib_bytes[i] bytes per rank in all (its send buffer), on every
 * rank at once, before this layer was drawn. */
typedef struct lab20_moe {
    int p, local, nodes; /* ranks, ranks per node, nodes */
    int experts, topk;
    long tokens;
    size_t token_bytes;
    double drop_budget; /* at most this fraction of the p * tokens * topk may be dropped */
    size_t calib_bytes[2];
    double pairwise_s[2], hier_s[2];
    const int32_t *counts; /* p * experts */
} lab20_moe;

/* How the tokens travel:
 *   PADDED  every rank sends every expert exactly `capacity` token slots (the
 *           dropped tokens are gone, empty slots are padding): a plain AlltoAll
 *           of experts / p * capacity tokens per pair, by PAIRWISE or HIER.
 *   EXACT   only the tokens kept: first an AlltoAll of the counts (p integers,
 *           by pairwise exchange), then an AlltoAllv of the tokens. */
typedef enum lab20_layout { LAB20_PADDED, LAB20_EXACT } lab20_layout;
typedef enum lab20_algo { LAB20_PAIRWISE, LAB20_HIER } lab20_algo;

typedef struct lab20_plan {
    double capacity_factor; /* C > 0: expert e keeps at most capacity = ceil(C * tokens * topk /
                               experts) of the tokens of each rank */
    lab20_layout layout;
    lab20_algo algo; /* EXACT: PAIRWISE only */
} lab20_plan;

/* Choose the plan for one layer's routing: the drops must stay within the
 * budget, and the dispatch should be as fast as it can be. */
cl_result lab20_moe_plan(const lab20_moe *m, lab20_plan *plan);

#endif /* COMMLAB_LAB20_H */
