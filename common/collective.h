/* collective.h: the shared test harness of the collective labs (as nccl-tests' common.cu).
 *
 * A collective lab's driver is a table of entries and one call:
 *
 *   static const cl_coll_entry entries[] = {
 *       {.name = "allreduce", .kind = CL_COLL_ALLREDUCE, .fn = my_allreduce,
 *        .baseline = cl_coll_baseline_allreduce},
 *   };
 *   int main(int argc, char **argv)
 *   {
 *       cl_coll_suite s = {.lab = "lab05", .entries = entries, .nentries = 1};
 *       return cl_coll_main(&s, argc, argv);
 *   }
 *
 * The harness owns the rest: options, buffers from cl_mem_alloc(), fresh
 * randomised inputs for every sample (common/data.h: exact expected values
 * for every data type and reduction), verification of every rank's output
 * counting wrong elements (plus writes past the end of the output and changes
 * to the input), interleaved timing against the entry's baseline, bus
 * bandwidth with nccl-tests' factors, and the JSON the grader reads.
 *
 * Buffer conventions (count is always the total number of elements, and the
 * blocks of a count over p ranks are those of cl_coll_block(): block i has
 * count/p elements, one more for i < count % p, in rank order):
 *   ALLREDUCE       sendbuf, recvbuf: count elements on every rank
 *   REDUCE_SCATTER  sendbuf: count elements; recvbuf: this rank's block
 *   ALLGATHER       sendbuf: this rank's block; recvbuf: count elements
 *   BROADCAST       sendbuf: count elements, read on the root only; recvbuf: count
 *                   elements on every rank (the root's too)
 *   REDUCE          sendbuf: count; recvbuf: count, written on the root only
 * sendbuf and recvbuf never overlap and sendbuf must not be modified. scratch
 * holds max(count, 2 * (count / p + 1)) elements (at least 4 KiB) of device-capable memory
 * whose content is undefined on entry.
 *
 * Forbidden calls. While an entry's fn runs (and only then), calls to MPI's
 * and NCCL's collectives (MPI_Allreduce, MPI_Bcast, ..., ncclAllReduce, ...)
 * are recorded: this file defines those symbols, so that the program's
 * calls reach it first (Open MPI's MPI_ and NCCL's nccl names are weak
 * aliases of PMPI_ and pnccl), notes the call when a guarded window is open,
 * and forwards to the PMPI_/pnccl function. Calls straight to PMPI_/pnccl,
 * through dlsym, or to the simulator's baseline are not seen here: graders
 * look for those in the student's object file (nm -u).
 */
#ifndef COMMLAB_COLLECTIVE_H
#define COMMLAB_COLLECTIVE_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "json.h"
#include "p2p.h"
#include "result.h"

typedef enum cl_coll_kind {
    CL_COLL_ALLREDUCE,
    CL_COLL_REDUCE_SCATTER,
    CL_COLL_ALLGATHER,
    CL_COLL_BROADCAST,
    CL_COLL_REDUCE,
    CL_COLL_KIND_COUNT
} cl_coll_kind;

/* The arguments of one call; see the buffer conventions above. */
typedef struct cl_coll_args {
    const void *sendbuf;
    void *recvbuf;
    size_t count; /* total elements */
    cl_dtype dtype;
    cl_op op;     /* reducing collectives only */
    int root;     /* BROADCAST and REDUCE only */
    void *scratch;
    size_t scratch_bytes;
} cl_coll_args;

typedef cl_result (*cl_coll_fn)(cl_comm *comm, const cl_coll_args *a);

/* One collective implementation the harness can verify and time. */
typedef struct cl_coll_entry {
    const char *name;    /* as selected by --coll and written to the JSON */
    cl_coll_kind kind;
    cl_coll_fn fn;       /* the code under test, run inside the forbidden-call guard */
    cl_coll_fn baseline; /* timed interleaved with fn, unguarded; NULL: none */
} cl_coll_entry;

/* A lab's harness: its entries and an optional per-run setup (run once on
 * every rank after launch, before any test; e.g. calibrating a model). */
typedef struct cl_coll_suite {
    const char *lab;
    const cl_coll_entry *entries;
    int nentries;
    cl_result (*setup)(cl_comm *comm);
    void (*describe)(cl_json *j); /* optional: extra fields for rank 0's JSON header */
} cl_coll_suite;

/* The harness's main(): parses the options, launches the ranks and runs the
 * mode; returns an exit status (0 ok, 1 failure, 2 usage). Modes:
 *   verify [--coll A,B] --json F   correctness matrix: counts not divisible
 *         by the ranks (and smaller than them), int32/int64/float/double,
 *         sum/prod/max/min, several roots; fresh data for every sample
 *   bench  --coll A --bytes N [--repeats R] --json F   one size, fn and baseline interleaved
 *   sweep  [--coll A,B] [--min-bytes N] [--max-bytes N] [--factor K] [--repeats R] --json F
 *         every selected entry (and its baseline) at each size, interleaved
 * Common options: --backend cpu|gpu|sim, --nranks N and --system S (sim),
 * --dtype T, --op O, --timing-only (sim: no data moved, nothing verified). */
int cl_coll_main(const cl_coll_suite *suite, int argc, char **argv);

/* Block i of count elements over p ranks: *off and *len in elements. This
 * function can't fail (p >= 1, 0 <= i < p). */
void cl_coll_block(size_t count, int p, int i, size_t *off, size_t *len);

/* nccl-tests' bus bandwidth factor for kind on p ranks: 2(p-1)/p for
 * ALLREDUCE, (p-1)/p for REDUCE_SCATTER and ALLGATHER, 1 for BROADCAST and
 * REDUCE. This function can't fail. */
double cl_coll_busbw_factor(cl_coll_kind kind, int p);

/* "allreduce", "reducescatter", ... This function can't fail. */
const char *cl_coll_kind_name(cl_coll_kind kind);

/* The backend's own AllReduce (MPI_Allreduce, ncclAllReduce, the
 * simulator's ring) as a cl_coll_fn, for entries' baselines. */
cl_result cl_coll_baseline_allreduce(cl_comm *comm, const cl_coll_args *a);

/* The backend's own Broadcast as a cl_coll_fn: MPI_Bcast on cpu (called as
 * PMPI_Bcast), a pipelined chain in chunks of cl_coll_pipeline_chunk() on sim;
 * CL_ERR_UNSUPPORTED on gpu. */
cl_result cl_coll_baseline_broadcast(cl_comm *comm, const cl_coll_args *a);

/* Chunk size for pipelining a message of `bytes`: bytes/32, clamped to
 * 64 KiB .. 4 MiB. This function can't fail. */
size_t cl_coll_pipeline_chunk(size_t bytes);

/* Replace v[0..n) on every rank by the element-wise maximum over all ranks
 * (through rank 0; on sim through shared memory, so it also works when
 * simulated messages carry no data). Fails only as cl_send/cl_recv do. */
cl_result cl_coll_agree_max(cl_comm *comm, double *v, int n);

/* Open and close a guarded window (they nest, and count per process); a
 * forbidden collective called inside one is recorded. These can't fail. */
void cl_coll_guard_enter(void);
void cl_coll_guard_leave(void);

/* Record a call of the forbidden function `name` if a guarded window is open
 * (the interposed MPI and NCCL collectives call this). This can't fail. */
void cl_coll_guard_note(const char *name);

/* The name of the first forbidden collective recorded since the last
 * cl_coll_guard_reset(), or NULL. */
const char *cl_coll_guard_hit(void);
void cl_coll_guard_reset(void);

/* One test: an entry at one count, data type, reduction and root. */
typedef struct cl_coll_test {
    const cl_coll_entry *entry;
    size_t count;
    cl_dtype dtype;
    cl_op op;
    int root;
    int repeats;     /* samples, each with fresh inputs (1..CL_COLL_MAX_SAMPLES) */
    int iters;       /* calls per sample; 0: chosen so a sample lasts about 20 ms */
    int verify;      /* check the output of every sample */
    int with_baseline; /* time entry->baseline too, interleaved (baseline first) */
    uint64_t seed;
} cl_coll_test;

#define CL_COLL_MAX_SAMPLES 64

/* What a test found, identical on every rank (agreed through rank 0). */
typedef struct cl_coll_result {
    cl_result status;       /* the first failure of the entry on any rank, CL_OK if none */
    char error[160];        /* its reason (rank 0's view) */
    size_t wrong;           /* wrong output elements, summed over ranks and samples */
    size_t overrun;         /* elements written past the end of an output */
    size_t input_changed;   /* elements of sendbuf the call modified */
    char forbidden[48];     /* first forbidden collective called, "" if none */
    int samples;
    int iters;
    double time_s[CL_COLL_MAX_SAMPLES];      /* per call, max over ranks */
    double base_time_s[CL_COLL_MAX_SAMPLES]; /* 0 when there is no baseline */
} cl_coll_result;

/* Run test t on every rank of comm (all ranks call it with the same t).
 * Returns CL_OK when the harness worked, whatever the entry did (its
 * failures are in out->status); other codes for the harness's own failures. */
cl_result cl_coll_run(cl_comm *comm, const cl_coll_test *t, cl_coll_result *out);

/* Bytes a test of count elements of t moves by nccl-tests' convention (the
 * total: count * size). This function can't fail. */
size_t cl_coll_bytes(size_t count, cl_dtype t);

#endif /* COMMLAB_COLLECTIVE_H */
