/* shm.h: POSIX shared-memory segments between the processes of one run.
 *
 * A segment's name is unique per user and per run:
 *
 *     /commlab-u<uid>-<run>-<what>-<pid>-<random>
 *
 * where <run> is $COMMLAB_SHM_TAG (letters, digits, '_' and '.'; "run" when
 * unset; a grader sets it to find leftovers of one check), <what> names the
 * user ("lab09"), <pid> is the creating process and <random> 64 random bits.
 *
 * Nothing may be left in /dev/shm, pass or fail. The name exists only between
 * cl_shm_create() and cl_shm_unlink(): cl_shm_open_comm() removes it as soon
 * as every rank has attached, before any other code runs on the segment.
 * While a name exists, the creator unlinks it at exit() and on the fatal
 * signals (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL), then lets the signal take its usual course. Only SIGKILL
 * inside that short window can leave a name behind.
 *
 * Mappings are pre-faulted (MAP_POPULATE) and the creator zeroes the
 * segment, so no first-touch page fault is charged to a timed loop.
 */
#ifndef COMMLAB_SHM_H
#define COMMLAB_SHM_H

#include <stdbool.h>
#include <stddef.h>

#include "p2p.h"
#include "result.h"

#define CL_SHM_NAME_MAX 128

typedef struct cl_shm {
    char name[CL_SHM_NAME_MAX]; /* "/commlab-..." as given to shm_open */
    void *base;                 /* the mapping, NULL when detached */
    size_t bytes;               /* mapped length */
    bool owner;                 /* this process created the name */
    bool linked;                /* the name still exists (owner only) */
    int fd;                     /* the open segment (to map it elsewhere), -1 when none */
} cl_shm;

/* Create a new zeroed segment of `bytes` under a fresh unique name and map it.
 * `what` is a short label (letters, digits, '_'). Returns CL_ERR_INVALID for
 * bytes == 0 or a bad label, CL_ERR_IO when the segment cannot be created or
 * mapped (nothing is left behind then). */
cl_result cl_shm_create(cl_shm *s, const char *what, size_t bytes);

/* Map the existing segment `name` of `bytes` (from another process's
 * cl_shm_create). CL_ERR_IO when it does not exist or is smaller. */
cl_result cl_shm_attach(cl_shm *s, const char *name, size_t bytes);

/* Remove the name (the owner only; a no-op for others or when already
 * removed). Mappings stay valid until cl_shm_detach(). CL_ERR_IO when
 * shm_unlink fails for another reason than the name being gone. */
cl_result cl_shm_unlink(cl_shm *s);

/* Unmap the segment, after removing the name if this process still owns it.
 * Safe to call twice and on a zeroed cl_shm. CL_ERR_IO when munmap fails. */
cl_result cl_shm_detach(cl_shm *s);

/* Collective over a "cpu" communicator: rank 0 creates a segment of `bytes`,
 * sends its name to every rank, all ranks attach, and after a barrier rank 0
 * removes the name. Every rank ends with the same segment mapped and nothing
 * in /dev/shm. CL_ERR_UNSUPPORTED on other backends; any failure on rank 0
 * removes the name before returning. */
cl_result cl_shm_open_comm(cl_shm *s, cl_comm *comm, const char *what, size_t bytes);

/* The prefix every name of this user and run starts with, without the
 * leading '/': "commlab-u<uid>-<run>-". This function can't fail. */
const char *cl_shm_prefix(void);

#endif /* COMMLAB_SHM_H */
