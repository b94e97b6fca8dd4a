/* sandbox.c: another user and an allow list of system calls for the student's program (libseccomp).
 *
 * The filter is loaded before exec, so it covers everything the program runs:
 * startup code, constructors, IFUNC resolvers, exit handlers. What the
 * student's program may do by default is what computing and talking to the
 * harness need: read and write its open descriptors (the socket, stdout,
 * stderr), manage its memory, signals, clocks, sleeping and yielding. It may
 * not open files, create processes or threads, trace or signal other
 * processes, use the network or change its limits. A lab adds classes of
 * calls with CL_PERMIT_* (boundary.h).
 */
#define _GNU_SOURCE
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "boundary.h"

#define NOBODY 65534

static const char *const basic[] = {
    "read",
    "write",
    "readv",
    "writev",
    "close",
    "lseek",
    "fstat",
    "mmap",
    "munmap",
    "mremap",
    "mprotect",
    "madvise",
    "brk",
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "sigaltstack",
    "restart_syscall",
    "futex",
    "clock_gettime",
    "clock_getres",
    "gettimeofday",
    "time",
    "clock_nanosleep",
    "nanosleep",
    "sched_yield",
    "getpid",
    "getppid",
    "gettid",
    "exit",
    "exit_group",
    "arch_prctl",
    "set_tid_address",
    "set_robust_list",
    "rseq",
    "getrandom",
    "recvmsg",
    "sysinfo", /* glibc's qsort() sizes its merge buffer by the machine's memory */
    NULL};
static const char *const threads[] = {"membarrier", "sched_getaffinity", NULL};
static const char *const affinity[] = {"sched_setaffinity", "sched_getaffinity", "getcpu", NULL};
static const char *const mlock[] = {"mlock", "mlock2", "munlock", "mlockall", "munlockall", NULL};
static const char *const net[] = {
    "socket",     "bind",        "listen",      "accept", "accept4",  "connect",       "setsockopt",
    "getsockopt", "getsockname", "getpeername", "sendto", "recvfrom", "sendmsg",       "recvmsg",
    "shutdown",   "poll",        "ppoll",       "select", "pselect6", "epoll_create1", "epoll_ctl",
    "epoll_wait", "epoll_pwait", "fcntl",       NULL};
static const char *const files[] = {
    "newfstatat", "statx",      "access", "faccessat", "faccessat2", "pread64", "getdents64",
    "readlink",   "readlinkat", "fcntl",  "uname",     "getcwd",     NULL};

static int allow_list(scmp_filter_ctx f, const char *const *names)
{
    for (; *names; names++) {
        int nr = seccomp_syscall_resolve_name(*names);
        if (nr == __NR_SCMP_ERROR)
            continue; /* not a call on this architecture */
        if (seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 0) != 0)
            return -1;
    }
    return 0;
}

static int build(scmp_filter_ctx f, unsigned permits, pid_t self)
{
    int rc = allow_list(f, basic);
    /* isatty() (stdio's buffering choice) asks TCGETS; nothing else of ioctl. */
    rc |= seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_EQ, TCGETS));
    /* Reading limits, never setting them; signals to itself only (raise, abort). */
    rc |= seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 1, SCMP_A2(SCMP_CMP_EQ, 0));
    rc |= seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
                           SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self));
    rc |= seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(kill), 1,
                           SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self));
    /* The filter is loaded before exec: the one exec it allows is of the program's own
     * descriptor (CL_SANDBOX_PROGRAM_FD, closed on exec), never of a path. */
    rc |= seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(execveat), 2,
                           SCMP_A0(SCMP_CMP_EQ, CL_SANDBOX_PROGRAM_FD),
                           SCMP_A4(SCMP_CMP_EQ, AT_EMPTY_PATH));
    /* fstatat on a descriptor (what fstat() is in glibc), not on a path. */
    rc |= seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(newfstatat), 1,
                           SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH));
    if (!(permits & CL_PERMIT_FILES)) /* static startup asks for its own path: say none */
        rc |= seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOENT), SCMP_SYS(readlink), 0);
    if (permits & CL_PERMIT_THREADS) {
        rc |= allow_list(f, threads);
        rc |= seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                               SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
        /* clone3 passes its flags in memory a filter cannot read: make glibc fall back. */
        rc |= seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    }
    if (permits & CL_PERMIT_AFFINITY)
        rc |= allow_list(f, affinity);
    if (permits & CL_PERMIT_MLOCK)
        rc |= allow_list(f, mlock);
    if (permits & CL_PERMIT_NET)
        rc |= allow_list(f, net);
    if (permits & CL_PERMIT_FILES) {
        rc |= allow_list(f, files);
        rc |=
            seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1,
                             SCMP_A2(SCMP_CMP_MASKED_EQ, O_ACCMODE | O_CREAT | O_TRUNC, O_RDONLY));
        rc |=
            seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(open), 1,
                             SCMP_A1(SCMP_CMP_MASKED_EQ, O_ACCMODE | O_CREAT | O_TRUNC, O_RDONLY));
        /* Opening to write or create fails with EACCES rather than killing the
         * program: runtimes probe (ThreadSanitizer tries a file in /tmp at start). */
        for (int i = 0; i < 2; i++) {
            int nr = i ? SCMP_SYS(openat) : SCMP_SYS(open);
            unsigned arg = i ? 2 : 1;
            rc |= seccomp_rule_add(f, SCMP_ACT_ERRNO(EACCES), nr, 1,
                                   SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, O_CREAT, O_CREAT));
            rc |= seccomp_rule_add(f, SCMP_ACT_ERRNO(EACCES), nr, 1,
                                   SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, O_ACCMODE, O_WRONLY));
            rc |= seccomp_rule_add(f, SCMP_ACT_ERRNO(EACCES), nr, 1,
                                   SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, O_ACCMODE, O_RDWR));
        }
    }
    if (permits & CL_PERMIT_DEVICES) {
        /* A user-space driver opens its device read-write and talks to it with ioctl
         * (libibverbs: /dev/infiniband/uverbsN and RDMA_VERBS_IOCTL). */
        rc |= allow_list(f, files);
        rc |= seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1,
                               SCMP_A2(SCMP_CMP_MASKED_EQ, O_CREAT | O_TRUNC, 0));
        rc |= seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(open), 1,
                               SCMP_A1(SCMP_CMP_MASKED_EQ, O_CREAT | O_TRUNC, 0));
        rc |= seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 0);
    }
    return rc ? -1 : 0;
}

int cl_sandbox_enter(unsigned permits, int unfiltered, char *buf, int bufsize)
{
    if (geteuid() == 0) {
        if (setgroups(0, NULL) != 0 || setresgid(NOBODY, NOBODY, NOBODY) != 0 ||
            setresuid(NOBODY, NOBODY, NOBODY) != 0) {
            snprintf(buf, (size_t)bufsize, "cannot become the user nobody: %s", strerror(errno));
            return -1;
        }
    }
    /* After the change of user: a change of credentials clears the death signal. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_DUMPABLE, 0) != 0) {
        snprintf(buf, (size_t)bufsize, "prctl: %s", strerror(errno));
        return -1;
    }
    if (unfiltered)
        return 0;
    scmp_filter_ctx f = seccomp_init(SCMP_ACT_TRAP);
    if (!f) {
        snprintf(buf, (size_t)bufsize, "seccomp_init failed");
        return -1;
    }
    int rc = build(f, permits, getpid());
    if (rc == 0)
        rc = seccomp_load(f);
    seccomp_release(f);
    if (rc != 0) {
        snprintf(buf, (size_t)bufsize, "cannot load the system-call filter (%d)", rc);
        return -1;
    }
    return 0;
}

const char *cl_sandbox_syscall_name(long nr)
{
    static char name[64];
    char *s = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, (int)nr);
    if (!s)
        return NULL;
    snprintf(name, sizeof name, "%s", s);
    free(s);
    return name;
}
