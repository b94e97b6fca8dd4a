/* spawn.c: start and stop the student's program, and move packets to and from it. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arena.h"
#include "buffers.h"
#include "deadline.h"
#include "p2p_sim.h"
#include "sandbox.h"
#include "session.h"
#include "timing.h"

session cl_session = {.pid = 0, .sock = -1};
#define S cl_session

/* Whether the ELF file on fd asks for a dynamic loader (then it must open its
 * libraries, and gets CL_PERMIT_FILES). */
static int is_dynamic(int fd)
{
    Elf64_Ehdr eh;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG))
        return 0;
    for (int i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (size_t)i * eh.e_phentsize)) !=
            (ssize_t)sizeof ph)
            return 0;
        if (ph.p_type == PT_INTERP)
            return 1;
    }
    return 0;
}

/* The child: descriptors 0 to CL_SANDBOX_PROGRAM_FD, limits, the sandbox, exec. */
static void child(int sock, int arena, int prog, unsigned permits, pid_t parent,
                  const char *const *extra_env)
{
    char why[256];
    /* First out of the way of 0-5, so that no dup2 below overwrites another source. */
    sock = fcntl(sock, F_DUPFD, 10);
    arena = fcntl(arena, F_DUPFD, 10);
    prog = fcntl(prog, F_DUPFD, 10);
    int devnull = open("/dev/null", O_RDONLY);
    if (sock < 0 || arena < 0 || prog < 0 || devnull < 0 || dup2(devnull, 0) < 0 ||
        dup2(sock, CL_WIRE_FD) < 0 || dup2(arena, CL_WIRE_ARENA_FD) < 0 ||
        dup2(prog, CL_SANDBOX_PROGRAM_FD) < 0) {
        dprintf(2, "commlab: cannot set up the student program's descriptors\n");
        _exit(126);
    }
    fcntl(CL_SANDBOX_PROGRAM_FD, F_SETFD, FD_CLOEXEC);
    close_range(CL_SANDBOX_PROGRAM_FD + 1, ~0U, 0);
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    if (permits & CL_PERMIT_DEVICES) { /* a driver pins memory (ibv_reg_mr); best effort */
        struct rlimit all = {RLIM_INFINITY, RLIM_INFINITY};
        setrlimit(RLIMIT_MEMLOCK, &all);
    }
    const char *san = getenv("COMMLAB_SANITIZE");
    if (cl_sandbox_enter(permits, san && strcmp(san, "1") == 0, why, sizeof why) != 0) {
        dprintf(2, "commlab: cannot sandbox the student program: %s\n", why);
        _exit(126);
    }
    if (getppid() != parent)
        _exit(0); /* the harness died before the death signal was armed */
    char *argv[] = {"commlab-student", NULL};
    char *envp[12];
    int n = 0;
    static char keep[8][1100];
    const char *names[] = {"LANG", "LC_ALL", "ASAN_OPTIONS", "UBSAN_OPTIONS", "TZ", NULL};
    envp[n++] = "PATH=/usr/bin:/bin";
    for (int i = 0; i < 4 && extra_env[i]; i++) /* the lab's own settings */
        envp[n++] = (char *)extra_env[i];
    for (int i = 0; names[i] && n < 11; i++) {
        const char *v = getenv(names[i]);
        if (v && strlen(v) + strlen(names[i]) + 2 < 1024) {
            snprintf(keep[i], sizeof keep[i], "%.64s=%.1000s", names[i], v);
            envp[n] = keep[i];
            n++;
        }
    }
    envp[n] = NULL;
    execveat(CL_SANDBOX_PROGRAM_FD, "", argv, envp, AT_EMPTY_PATH);
    dprintf(2, "commlab: cannot run the student program: %s\n", strerror(errno));
    _exit(127);
}

cl_result cl_student_start(const cl_student_opts *o)
{
    if (S.pid) {
        cl_set_error("a student program is already running");
        return CL_ERR_INVALID;
    }
    int prog = open(o->program, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (prog < 0 || fstat(prog, &st) != 0 || !S_ISREG(st.st_mode) || !(st.st_mode & S_IXOTH)) {
        cl_set_error("cannot run the student program %s: %s", o->program,
                     prog < 0 ? strerror(errno) : "not an executable file for every user");
        if (prog >= 0)
            close(prog);
        return CL_ERR_IO;
    }
    unsigned permits = o->permits | (is_dynamic(prog) ? CL_PERMIT_FILES : 0);
    int sv[2], arena = -1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        cl_set_error("socketpair: %s", strerror(errno));
        close(prog);
        return CL_ERR_IO;
    }
    cl_result rc =
        cl_arena_open(o->arena_bytes ? o->arena_bytes : (size_t)64 << 20, o->nlocal, &arena);
    if (rc != CL_OK) {
        close(prog), close(sv[0]), close(sv[1]);
        return rc;
    }
    pid_t parent = getpid();
    fflush(NULL); /* no buffered output written twice */
    pid_t pid = fork();
    if (pid == 0)
        child(sv[1], arena, prog, permits, parent, o->env);
    close(sv[1]);
    close(arena);
    close(prog);
    if (pid < 0) {
        cl_set_error("fork: %s", strerror(errno));
        close(sv[0]);
        cl_arena_close();
        return CL_ERR_IO;
    }
    S = (session){.pid = pid, .sock = sv[0], .nlocal = o->nlocal};
    return CL_OK;
}

int cl_student_running(void) { return S.pid > 0 && !S.dead; }
int cl_student_host_buffers(void) { return (S.flags & CL_WIRE_HOST_BUFFERS) != 0; }

cl_result cl_session_die(cl_result code, const char *fmt, ...)
{
    if (!S.dead) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(S.why, sizeof S.why, fmt, ap);
        va_end(ap);
        S.dead = 1;
        S.death = code;
    }
    cl_set_error("%s", S.why);
    return S.death;
}

cl_result cl_session_queue(const cl_wire *w)
{
    if (S.nout == S.capout) {
        int cap = S.capout ? 2 * S.capout : 256;
        cl_wire *q = realloc(S.out, (size_t)cap * sizeof *q);
        if (!q)
            return CL_ERR_NOMEM;
        S.out = q;
        S.capout = cap;
    }
    S.out[S.nout++] = *w;
    return CL_OK;
}

static const char *ending(void);

cl_result cl_session_flush(void)
{
    static cl_wire_packet p;
    int sent = 0;
    do {
        int k = S.nout - sent < CL_WIRE_BATCH ? S.nout - sent : CL_WIRE_BATCH;
        p.n = (uint32_t)k;
        p.last = sent + k == S.nout;
        memcpy(p.rec, S.out + sent, (size_t)k * sizeof *p.rec);
        ssize_t want = (ssize_t)CL_WIRE_PACKET_BYTES(k);
        if (send(S.sock, &p, (size_t)want, MSG_NOSIGNAL) != want)
            return cl_session_die(CL_ERR_CRASHED, "the student program %s", ending());
        sent += k;
    } while (sent < S.nout);
    S.nout = 0;
    return CL_OK;
}

/* How the program ended, once it has: "exited with status 3", "killed by SIGSEGV". */
static const char *ending(void)
{
    static char text[200];
    if (S.pid <= 0)
        return text[0] ? text : "ended";
    int status = 0;
    pid_t got = 0;
    for (int i = 0; i < 100 && got == 0; i++) { /* a dying program takes a moment */
        got = waitpid(S.pid, &status, WNOHANG);
        if (got == 0)
            usleep(10000);
    }
    if (got != S.pid)
        return "stopped answering";
    S.pid = -S.pid;            /* reaped */
    const char *inside = NULL; /* the function it was running, if any */
    for (int r = 0; r < S.nlocal && S.ranks && !inside; r++)
        inside = S.ranks[r].entry;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
        snprintf(text, sizeof text,
                 "was stopped for a system call this lab does not allow%s "
                 "(see docs/integrity.md)",
                 S.ready ? ""
                         : ", before its main() ran (a "
                           "constructor?)");
    else if (WIFSIGNALED(status))
        snprintf(text, sizeof text, "was killed by %s", strsignal(WTERMSIG(status)));
    else if (inside)
        snprintf(text, sizeof text,
                 "exited (status %d) inside %s(): your functions must "
                 "return, never exit",
                 WEXITSTATUS(status), inside);
    else
        snprintf(text, sizeof text, "exited with status %d", WEXITSTATUS(status));
    return text;
}

static cl_result fault(const cl_wire *w)
{
    char where[64] = "";
    if (w->rank >= 0 && w->rank < S.nlocal && S.ranks && S.ranks[w->rank].entry)
        snprintf(where, sizeof where, " in rank %d (%s)", S.first + w->rank,
                 S.ranks[w->rank].entry);
    if (w->aux == SIGSYS) {
        const char *name = cl_sandbox_syscall_name((long)w->arg);
        return cl_session_die(CL_ERR_CRASHED,
                              "your code made a system call this lab does not allow%s: %s "
                              "(number %lld; see docs/integrity.md)",
                              where, name ? name : "?", (long long)w->arg);
    }
    uintptr_t a = (uintptr_t)w->addr;
    const char *hint = "";
    if (w->aux == SIGSEGV && a >= CL_HANDLE_BASE && a < CL_HANDLE_BASE + CL_HANDLE_SPAN)
        hint = ": that is a device buffer, which host code cannot read or write (use "
               "cl_mem_download, or better, the interface's operations)";
    else if (w->aux == SIGSEGV && a < 4096)
        hint = ": a NULL pointer";
    return cl_session_die(CL_ERR_CRASHED, "your code crashed%s: %s at address %#lx%s", where,
                          strsignal(w->aux), (unsigned long)a, hint);
}

static cl_result push(proxy_rank *p, const cl_wire *w)
{
    if (p->in_n == p->in_cap) {
        int cap = p->in_cap ? 2 * p->in_cap : 16;
        cl_wire *q = malloc((size_t)cap * sizeof *q);
        if (!q)
            return CL_ERR_NOMEM;
        for (int i = 0; i < p->in_n; i++)
            q[i] = p->in[(p->in_head + i) % p->in_cap];
        free(p->in);
        p->in = q;
        p->in_head = 0;
        p->in_cap = cap;
    }
    p->in[(p->in_head + p->in_n) % p->in_cap] = *w;
    p->in_n++;
    return CL_OK;
}

cl_result cl_session_receive(int *last)
{
    static cl_wire_packet p;
    if (S.dead)
        return cl_session_die(S.death, "%s", S.why);
    for (;;) {
        int ms = -1;
        if (cl_deadline_at() > 0) {
            double left = cl_deadline_left();
            if (left <= 0)
                return cl_session_die(CL_ERR_TIMEOUT, "your code did not answer before the "
                                                      "deadline (an endless loop, or a wait "
                                                      "for a message that never comes?)");
            ms = left > 1e6 ? 1000000000 : (int)(left * 1000) + 1;
        }
        struct pollfd pf = {.fd = S.sock, .events = POLLIN};
        int k = poll(&pf, 1, ms);
        if (k < 0 && errno == EINTR)
            continue;
        if (k == 0)
            continue; /* the deadline check above decides */
        break;
    }
    ssize_t got = recv(S.sock, &p, sizeof p, 0);
    if (got <= 0)
        return cl_session_die(CL_ERR_CRASHED, "the student program %s", ending());
    if (got < (ssize_t)CL_WIRE_PACKET_BYTES(0) || p.n > CL_WIRE_BATCH ||
        (size_t)got != CL_WIRE_PACKET_BYTES(p.n))
        return cl_session_die(CL_ERR_CRASHED, "the student program sent a malformed packet");
    for (uint32_t i = 0; i < p.n; i++) {
        const cl_wire *w = &p.rec[i];
        if (w->kind == CL_W_FAULT)
            return fault(w);
        if (w->kind == CL_W_READY)
            continue;
        if ((w->kind != CL_W_OP && w->kind != CL_W_RETURN) || w->rank < 0 || w->rank >= S.nlocal ||
            !S.ranks)
            return cl_session_die(CL_ERR_CRASHED, "the student program sent a record the "
                                                  "harness did not ask for");
        if (push(&S.ranks[w->rank], w) != CL_OK)
            return cl_session_die(CL_ERR_NOMEM, "out of memory for the student's records");
    }
    *last = p.last != 0;
    return CL_OK;
}

/* Exchange on "sim": the scheduler found every rank waiting; send what is
 * queued, take the whole answer, and wake the ranks it concerns. */
static cl_result exchange(void)
{
    if (S.nout == 0)
        return cl_session_die(CL_ERR_CRASHED, "the student program left ranks waiting");
    CL_CHECK(cl_session_flush());
    int last = 0;
    while (!last)
        CL_CHECK(cl_session_receive(&last));
    for (int r = 0; r < S.nlocal; r++)
        if (S.ranks[r].waiting && S.ranks[r].in_n > 0)
            cl_sim_wake(S.first + r);
    return CL_OK;
}

cl_result cl_session_next(int r, cl_wire *out)
{
    proxy_rank *p = &S.ranks[r];
    while (p->in_n == 0) {
        if (S.dead)
            return cl_session_die(S.death, "%s", S.why);
        if (S.backend == CL_WIRE_SIM) {
            p->waiting = 1;
            cl_result rc = cl_sim_wait_external(p->world);
            p->waiting = 0;
            CL_CHECK(rc);
            continue;
        }
        int last;
        if (S.nout)
            CL_CHECK(cl_session_flush());
        CL_CHECK(cl_session_receive(&last));
    }
    *out = p->in[p->in_head];
    p->in_head = (p->in_head + 1) % p->in_cap;
    p->in_n--;
    return CL_OK;
}

/* On "sim" the harness and the student's program take turns, never run at once:
 * on one CPU each hand-over is a plain switch, where across two it is a wake-up
 * of another core (about 2.5 times slower over a whole run). Best effort. */
static void share_one_cpu(void)
{
    int cpu = sched_getcpu();
    if (cpu < 0)
        return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) == 0)
        sched_setaffinity(S.pid, sizeof one, &one);
}

cl_result cl_student_hello(int backend, int first, int world_size, unsigned flags)
{
    if (!S.pid) {
        cl_set_error("no student program was started");
        return CL_ERR_INVALID;
    }
    S.backend = backend;
    S.first = first;
    S.world_size = world_size;
    S.flags = flags;
    S.ranks = calloc((size_t)S.nlocal, sizeof *S.ranks);
    if (!S.ranks)
        return CL_ERR_NOMEM;
    cl_wire h = {.kind = CL_W_HELLO,
                 .rank = S.nlocal,
                 .peer = first,
                 .aux = world_size,
                 .bytes = cl_arena_bytes(),
                 .op = (uint16_t)backend,
                 .arg = flags};
    CL_CHECK(cl_session_queue(&h));
    CL_CHECK(cl_session_flush());
    int last = 0;
    while (!last)
        CL_CHECK(cl_session_receive(&last));
    S.ready = 1;
    if (backend == CL_WIRE_SIM)
        share_one_cpu();
    if (backend == CL_WIRE_SIM)
        cl_sim_set_idle(exchange);
    return CL_OK;
}

cl_result cl_student_region(int fd, void *base, size_t bytes)
{
    cl_wire_packet p = {.n = 1, .last = 0};
    p.rec[0] = (cl_wire){.kind = CL_W_REGION, .addr = (uintptr_t)base, .bytes = bytes};
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct iovec iov = {.iov_base = &p, .iov_len = CL_WIRE_PACKET_BYTES(1)};
    struct msghdr msg = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    if (S.pid <= 0 || sendmsg(S.sock, &msg, MSG_NOSIGNAL) < 0) {
        cl_set_error("cannot give the student program its shared region: %s", strerror(errno));
        return CL_ERR_IO;
    }
    return CL_OK;
}

void cl_student_stop(void)
{
    if (S.pid > 0) {
        if (!S.dead) {
            S.nout = 0;
            cl_wire w = {.kind = CL_W_EXIT};
            cl_session_queue(&w);
            cl_session_flush();
        }
        int status;
        pid_t got = 0;
        for (int i = 0; i < 50 && got == 0; i++) {
            got = waitpid(S.pid, &status, WNOHANG);
            if (got == 0)
                usleep(10000);
        }
        if (got == 0) {
            kill(S.pid, SIGKILL);
            waitpid(S.pid, &status, 0);
        }
    }
    if (S.sock >= 0)
        close(S.sock);
    for (int r = 0; S.ranks && r < S.nlocal; r++) {
        free(S.ranks[r].comms);
        free(S.ranks[r].reqs);
        free(S.ranks[r].in);
        free(S.ranks[r].trace);
        free(S.ranks[r].mine);
    }
    free(S.ranks);
    free(S.out);
    if (S.backend == CL_WIRE_SIM)
        cl_sim_set_idle(NULL);
    S = (session){.pid = 0, .sock = -1};
    cl_arena_close();
}
