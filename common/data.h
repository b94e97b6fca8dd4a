/* data.h: deterministic test data with exactly predictable reductions.
 *
 * Element i of rank r for (seed, op) is a small integer chosen so that any
 * reduction order over up to CL_DATA_MAX_RANKS ranks is exact in every type:
 *   sum       integers in [-16, 16]; |total| <= 16 * 1024 < 2^24 (exact in float)
 *   prod      +1 or -1, and 2 on one rank of 32 per element: totals are +-1, +-2
 *   max, min  integers in [-2^20, 2^20]
 * The expected value is computed from the same generator, so verification
 * compares bits, as nccl-tests does, and counts wrong elements instead of
 * stopping at the first.
 */
#ifndef COMMLAB_DATA_H
#define COMMLAB_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "result.h"

#define CL_DATA_MAX_RANKS 1024

/* Fill buf[0..count) with rank's input for (seed, op). first is the global
 * index of buf[0], so a rank's slice of a larger vector can be generated. */
cl_result cl_data_fill(void *buf, size_t first, size_t count, cl_dtype t, cl_op op, int rank,
                       uint64_t seed);

/* Fill buf with the reduction over ranks 0..nranks-1 of their inputs. */
cl_result cl_data_expected(void *buf, size_t first, size_t count, cl_dtype t, cl_op op, int nranks,
                           uint64_t seed);

/* Compare buf with the expected reduction; *nwrong = number of elements
 * that differ bit-for-bit. Returns CL_OK (even if *nwrong > 0) or
 * CL_ERR_NOMEM / CL_ERR_INVALID. */
cl_result cl_data_check(const void *buf, size_t first, size_t count, cl_dtype t, cl_op op,
                        int nranks, uint64_t seed, size_t *nwrong);

/* A value that no reduction of cl_data_fill inputs produces, used to fill
 * output buffers before a collective so that unwritten elements are caught. */
cl_result cl_data_poison(void *buf, size_t count, cl_dtype t);

/* The input of `rank` for global element `i` of (seed, op), as an exact small
 * integer; combined with cl_data_combine() in any order it gives the exact
 * expected value. These functions can't fail. */
double cl_data_value(uint64_t seed, cl_op op, int rank, size_t i);
double cl_data_combine(double a, double b, cl_op op);

/* Byte i of `rank`'s raw payload for seed (data that is moved, never reduced).
 * This function can't fail. */
unsigned char cl_data_raw_byte(uint64_t seed, int rank, size_t i);

/* Store v as element k of buf in type t. This function can't fail. */
void cl_data_store(void *buf, size_t k, cl_dtype t, double v);

/* 64-bit mix (splitmix64) used for all generated data. This function can't fail. */
uint64_t cl_data_hash(uint64_t x);

/* 64-bit FNV-1a of n bytes: to tell whether two ranks hold the same bytes (a host
 * name, a plan). This function can't fail. */
uint64_t cl_data_hash_bytes(const void *p, size_t n);

#endif /* COMMLAB_DATA_H */
