/* buffers.h: the harness's record of every buffer from cl_mem_alloc: where, how big, whose.
 *
 * Each backend registers the buffers it hands out. The address a rank program
 * sees is the key: a host pointer on "cpu" (memory the student's process can
 * also map, boundary/arena.h), an opaque handle on "gpu" and "sim" (see
 * CL_HANDLE_BASE). impl is the backend's own view (a device pointer, the
 * simulator's content). Before the harness performs an operation for the
 * student, it looks every buffer argument up here: a range that is not inside
 * one buffer, or a buffer of another rank, is refused with a reason.
 *
 * One table per process; not thread safe (ranks of one process run one at a
 * time).
 */
#ifndef COMMLAB_BUFFERS_H
#define COMMLAB_BUFFERS_H

#include <stddef.h>
#include <stdint.h>

#include "result.h"

/* Handles of device-like buffers ("gpu", "sim") lie in this range, which no
 * process maps: host code that dereferences one faults at once. */
#define CL_HANDLE_BASE ((uintptr_t)0x300000000000ULL)
#define CL_HANDLE_SPAN ((uintptr_t)1 << 44)

typedef struct cl_buffer {
    uintptr_t base; /* the address rank programs use */
    size_t bytes;
    int owner;  /* world rank that allocated it */
    void *impl; /* the backend's view */
} cl_buffer;

/* Record a buffer. CL_ERR_NOMEM, or CL_ERR_INVALID if it overlaps one. */
cl_result cl_buffers_add(uintptr_t base, size_t bytes, int owner, void *impl);

/* Forget the buffer that starts at base; *out (may be NULL) receives it.
 * CL_ERR_INVALID with a reason when no buffer starts there. */
cl_result cl_buffers_remove(uintptr_t base, cl_buffer *out);

/* The buffer that holds all of [p, p + bytes) (bytes may be 0: p inside or
 * at the end), owned by `owner` (-1: anyone). NULL, with a reason naming `what`
 * and the rank in cl_last_error(), when there is none. */
const cl_buffer *cl_buffers_find(const void *p, size_t bytes, int owner, const char *what);

/* A fresh handle range of `bytes` in [CL_HANDLE_BASE, +CL_HANDLE_SPAN), 4 KiB
 * aligned, never one in use. Returns 0 when the span is exhausted. */
uintptr_t cl_handles_take(size_t bytes);

/* Every buffer of owner, in address order, for a backend tearing a rank
 * down: calls fn on each (the table may not change meanwhile). */
void cl_buffers_each(int owner, void (*fn)(const cl_buffer *b, void *arg), void *arg);

/* Forget every buffer of owner (-1: every buffer), calling release on each
 * first: a backend's end of a launch. This function can't fail. */
void cl_buffers_release_all(int owner, void (*release)(const cl_buffer *b));

/* Number of buffers recorded (tests). This function can't fail. */
size_t cl_buffers_count(void);

#endif /* COMMLAB_BUFFERS_H */
