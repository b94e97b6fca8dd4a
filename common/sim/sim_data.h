/* sim_data.h: what a simulated GPU buffer holds, described instead of stored.
 *
 * The simulator moves data the way it moves time: without touching bytes. A
 * buffer is a list of segments, each a byte range with a description of its
 * contents:
 *   UNSET  never written, or poisoned by the harness;
 *   INPUT  the harness's generated inputs (data.h) of one fill (its seed),
 *          reduced over a set of ranks: element k of the segment is op over
 *          every rank r of the set of input(seed, r, first + k);
 *   BYTES  bytes uploaded from host memory, kept as they are;
 *   MIXED  anything else: what reducing the wrong blocks, mixing fills or
 *          copying half an element gives. It never equals an expected value.
 * Sends, copies and reductions combine descriptions, so a ring AllReduce of
 * 1 GiB on 1,024 ranks costs a few segments per block, and the result is
 * still checked element for element: a segment that is INPUT of the right
 * fill, over every rank, at the right index, is right; anything else is
 * counted wrong. A download computes the bytes the description stands for,
 * so host code sees real values.
 *
 * Raw bytes (lab01's ping-pong payload) are INPUT with element size 1 and
 * dtype -1; they are never reduced.
 */
#ifndef COMMLAB_SIM_DATA_H
#define COMMLAB_SIM_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "result.h"

enum { CL_SIM_UNSET, CL_SIM_INPUT, CL_SIM_BYTES, CL_SIM_MIXED };

typedef struct cl_sim_ranks cl_sim_ranks; /* an immutable, shared set of ranks */
typedef struct cl_sim_blob cl_sim_blob;   /* shared bytes of uploads */

typedef struct cl_sim_seg {
    size_t off, len;     /* the byte range in the buffer */
    int kind;            /* CL_SIM_* */
    int es;              /* INPUT: element size; 1 for raw bytes */
    int dtype, op;       /* INPUT: the fill's cl_dtype and cl_op; -1 for raw bytes */
    uint64_t seed;       /* INPUT: the fill */
    int64_t first;       /* INPUT: global index of the segment's first element */
    cl_sim_ranks *ranks; /* INPUT */
    cl_sim_blob *blob;   /* BYTES: the bytes, from boff */
    size_t boff;
} cl_sim_seg;

/* One buffer's contents: segments sorted by offset, covering [0, bytes). */
typedef struct cl_sim_data {
    cl_sim_seg *s;
    int n, cap;
    size_t bytes;
} cl_sim_data;

/* A buffer of `bytes`, all UNSET. CL_ERR_NOMEM. */
cl_result cl_sim_data_init(cl_sim_data *d, size_t bytes);
void cl_sim_data_free(cl_sim_data *d);

/* The harness's inputs: count elements of rank's input for (seed, t, op), the
 * first with global index first, at byte offset off. */
cl_result cl_sim_data_fill(cl_sim_data *d, size_t off, size_t count, cl_dtype t, cl_op op,
                           uint64_t seed, int rank, int64_t first);

/* Raw bytes of rank for seed (byte k: cl_data_raw_byte(seed, rank, first + k)). */
cl_result cl_sim_data_fill_raw(cl_sim_data *d, size_t off, size_t bytes, uint64_t seed, int rank,
                               int64_t first);

/* Poison [off, off + bytes) (UNSET). */
cl_result cl_sim_data_unset(cl_sim_data *d, size_t off, size_t bytes);

/* Upload (BYTES) and download (the bytes the contents stand for: UNSET reads
 * as 0xAB bytes, MIXED as 0xCD). */
cl_result cl_sim_data_write(cl_sim_data *d, size_t off, const void *src, size_t bytes);
cl_result cl_sim_data_read(const cl_sim_data *d, size_t off, void *dst, size_t bytes);

/* dst[doff..] = src[soff..] for bytes (memmove semantics; dst may be src). */
cl_result cl_sim_data_copy(cl_sim_data *dst, size_t doff, const cl_sim_data *src, size_t soff,
                           size_t bytes);

/* inout[k] = inout[k] op in[k] for count elements of type t. */
cl_result cl_sim_data_reduce(cl_sim_data *inout, size_t ioff, const cl_sim_data *in, size_t inoff,
                             size_t count, cl_dtype t, cl_op op);

/* Elements of [off, off + count elements) that differ from the reduction over
 * ranks lo..hi-1 of the inputs of (seed, t, op) from global index first (t ==
 * -1: raw bytes of rank lo). Writes the count to *wrong. */
cl_result cl_sim_data_wrong(const cl_sim_data *d, size_t off, size_t count, int t, cl_op op,
                            uint64_t seed, int lo, int hi, int64_t first, size_t *wrong);

/* *n = bytes of [off, off + bytes) that are no longer UNSET (written since
 * the harness poisoned them). */
cl_result cl_sim_data_touched(const cl_sim_data *d, size_t off, size_t bytes, size_t *n);

/* Bytes of uploads the simulator keeps, all buffers together (a limit applies). */
size_t cl_sim_data_kept(void);

#endif /* COMMLAB_SIM_DATA_H */
