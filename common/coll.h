/* coll.h: the one vocabulary of collectives: kinds, algorithms, protocols, sizes, blocks.
 *
 * Every part of CommLab that names a collective uses these definitions: the
 * lab harness, the simulator, the command line and every lab. Names are
 * spelled as nccl-tests and NCCL spell them.
 *
 * Sizes follow nccl-tests' "size" column (src/common.cu, the *_perf.cu files):
 *   ALLREDUCE, BROADCAST, REDUCE   the buffer of one rank
 *   ALLGATHER, REDUCESCATTER       the whole gathered or scattered array
 *   ALLTOALL, ALLTOALLV            the send buffer of one rank (all its blocks)
 * and bus bandwidth = algbw x cl_coll_busbw_factor(): the factor that makes a
 * bus-bandwidth-optimal algorithm read the same for every rank count.
 *
 * Blocks: count elements over p ranks are split as MPI and nccl-tests split
 * uneven counts: block i has count/p elements, one more when i < count % p,
 * and the blocks lie in rank order (cl_coll_block()).
 */
#ifndef COMMLAB_COLL_H
#define COMMLAB_COLL_H

#include <stddef.h>

#include "dtype.h"
#include "result.h"

typedef enum cl_coll_kind {
    CL_COLL_ALLREDUCE,
    CL_COLL_REDUCESCATTER,
    CL_COLL_ALLGATHER,
    CL_COLL_BROADCAST,
    CL_COLL_REDUCE,
    CL_COLL_ALLTOALL,
    CL_COLL_ALLTOALLV,
    CL_COLL_KIND_COUNT
} cl_coll_kind;

/* NCCL's algorithms (NCCL_ALGO), plus the simulator's two-level scheme. */
typedef enum cl_algo {
    CL_ALGO_AUTO,      /* let the tuning model choose */
    CL_ALGO_RING,      /* "Ring" */
    CL_ALGO_TREE,      /* "Tree": double binary tree */
    CL_ALGO_NVLS,      /* "NVLS": NVLink SHARP, reduction in the NVSwitch */
    CL_ALGO_NVLS_TREE, /* "NVLSTree": NVLS inside nodes, trees between them */
    CL_ALGO_HIER,      /* "Hier": intra-node reduce-scatter, inter-node rings, all-gather */
    CL_ALGO_COUNT
} cl_algo;

/* NCCL's protocols (NCCL_PROTO). */
typedef enum cl_proto { CL_PROTO_LL, CL_PROTO_LL128, CL_PROTO_SIMPLE, CL_PROTO_COUNT } cl_proto;

/* The arguments of one collective call, the same for the harness, the
 * library baselines and the student's implementation. count is the total
 * number of elements (nccl-tests' count for the size convention above):
 *   ALLREDUCE      sendbuf, recvbuf: count elements on every rank
 *   REDUCESCATTER  sendbuf: count; recvbuf: this rank's block
 *   ALLGATHER      sendbuf: this rank's block; recvbuf: count
 *   BROADCAST      sendbuf: count, read on the root only; recvbuf: count on every rank
 *   REDUCE         sendbuf: count; recvbuf: count, written on the root only
 *   ALLTOALL       sendbuf, recvbuf: count elements, p blocks of count / p (count is a
 *                  multiple of p): block j of sendbuf goes to rank j, block j of recvbuf
 *                  comes from rank j
 *   ALLTOALLV      sendbuf: block j is sendcounts[j] elements at sdispls[j], for rank j;
 *                  recvbuf: recvcounts[j] elements at rdispls[j], from rank j (as
 *                  MPI_Alltoallv; count is unused)
 * sendbuf and recvbuf never overlap, and sendbuf must not be modified. scratch
 * (scratch_bytes, at least 4 KiB) is the implementation's own work space. */
typedef struct cl_coll_args {
    const void *sendbuf;
    void *recvbuf;
    size_t count;
    cl_dtype dtype;
    cl_op op;                                                  /* reducing kinds only */
    int root;                                                  /* BROADCAST and REDUCE */
    const size_t *sendcounts, *sdispls, *recvcounts, *rdispls; /* ALLTOALLV: p each */
    void *scratch;
    size_t scratch_bytes;
} cl_coll_args;

/* "allreduce", "reducescatter", "allgather", "broadcast", "reduce", "alltoall",
 * "alltoallv"; "?" for a value out of range. This function can't fail. */
const char *cl_coll_name(cl_coll_kind kind);

/* NCCL_ALGO and NCCL_PROTO spellings: "Ring", "Tree", "NVLS", "NVLSTree", "Hier"
 * ("auto" for CL_ALGO_AUTO); "LL", "LL128", "Simple". "?" when out of range. */
const char *cl_algo_name(cl_algo algo);
const char *cl_proto_name(cl_proto proto);

/* Parse the names above, case-insensitively. CL_ERR_INVALID (with the list of
 * valid names in cl_last_error()) for anything else. */
cl_result cl_coll_parse(const char *name, cl_coll_kind *out);
cl_result cl_algo_parse(const char *name, cl_algo *out);
cl_result cl_proto_parse(const char *name, cl_proto *out);

/* nccl-tests' bus bandwidth factor for kind on p ranks: 2(p-1)/p for ALLREDUCE;
 * (p-1)/p for REDUCESCATTER, ALLGATHER, ALLTOALL and ALLTOALLV; 1 for BROADCAST
 * and REDUCE. For p == 1 every factor is that formula's value (0 or 1), as in
 * nccl-tests. This function can't fail. */
double cl_coll_busbw_factor(cl_coll_kind kind, int p);

/* Block i of count elements over p ranks: first element *off, *len elements.
 * This function can't fail (p >= 1, 0 <= i < p). */
void cl_coll_block(size_t count, int p, int i, size_t *off, size_t *len);

/* Whether kind combines values with a reduction operator (ALLREDUCE,
 * REDUCESCATTER, REDUCE), and whether it has a root (BROADCAST, REDUCE). */
int cl_coll_reduces(cl_coll_kind kind);
int cl_coll_rooted(cl_coll_kind kind);

#endif /* COMMLAB_COLL_H */
