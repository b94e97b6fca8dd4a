/* arena.h: the memory the harness shares with the student's program.
 *
 * One memfd, mapped at CL_ARENA_BASE (boundary/wire.h) in both processes:
 * first a header page, then one slot per local rank, then a heap. The heap
 * holds the buffers of the "cpu" backend (so that the student's program can
 * read and write them where the harness's MPI reads and writes them) and the
 * argument data of calls (a topology, an array of counts). Its bookkeeping is
 * in the harness's own memory: the student's program can scribble over the
 * heap's contents, never over its free list.
 */
#ifndef COMMLAB_ARENA_H
#define COMMLAB_ARENA_H

#include <stddef.h>

#include "result.h"

/* Create and map an arena of `bytes` (rounded up to pages) for `nlocal` local
 * ranks. *fd receives its memfd (for the student's program). CL_ERR_IO with
 * the reason when the memory cannot be created or mapped at CL_ARENA_BASE. */
cl_result cl_arena_open(size_t bytes, int nlocal, int *fd);

/* Unmap the arena (every pointer into it dies). Safe without an arena. */
void cl_arena_close(void);

/* Whether an arena is mapped, and its size. These can't fail. */
int cl_arena_active(void);
size_t cl_arena_bytes(void);

/* Host memory: from the arena's heap when an arena is mapped (4 KiB aligned,
 * pre-touched), ordinary aligned memory otherwise. CL_ERR_NOMEM with a reason
 * when full. cl_host_free(NULL) does nothing. */
cl_result cl_host_alloc(size_t bytes, void **out);
void cl_host_free(void *p);

/* Copy n bytes into a fresh piece of the heap and return its address (for
 * argument data the student's program reads), or NULL when full. */
void *cl_arena_copy(const void *data, size_t n);

#endif /* COMMLAB_ARENA_H */
