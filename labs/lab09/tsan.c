/* tsan.c: what lab 09's ThreadSanitizer build (lab09-student-tsan, lab.mk) needs to run under
 * the harness. Empty in every other build.
 *
 * ThreadSanitizer keeps the addresses between its shadow and its metadata
 * reserved and refuses mappings there; the harness maps its arena and region
 * there (boundary/wire.h). This file releases that span before the runtime
 * maps the arena and maps those two directly; every other mapping goes
 * through ThreadSanitizer as usual. Its shadow of these addresses is ordinary
 * shadow memory, so accesses to them are checked like any other.
 */
#if defined(__SANITIZE_THREAD__)
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "boundary/wire.h"

#define HARNESS_SPAN ((size_t)1 << 44) /* the arena and the region, from CL_ARENA_BASE */

/* Stop at the first report with status 66; leave the core-dump limit alone
 * (the system-call filter would refuse the change). */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
    return "halt_on_error=1:exitcode=66:disable_coredump=0";
}

/* No suppressions: defined here, so that no other file can. */
const char *__tsan_default_suppressions(void);
const char *__tsan_default_suppressions(void) { return ""; }

__attribute__((constructor, no_sanitize_thread)) static void release_harness_span(void)
{
    syscall(SYS_munmap, (void *)CL_ARENA_BASE, HARNESS_SPAN);
}

void *__interceptor_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);

__attribute__((no_sanitize_thread)) void *mmap(void *addr, size_t len, int prot, int flags, int fd,
                                               off_t off)
{
    uintptr_t a = (uintptr_t)addr;
    if (a >= CL_ARENA_BASE && a - CL_ARENA_BASE < HARNESS_SPAN)
        return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
    return __interceptor_mmap(addr, len, prot, flags, fd, off);
}
#endif
