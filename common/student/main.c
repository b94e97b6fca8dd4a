/* main.c: the student program's main(): map the arena, run the ranks the harness calls.
 *
 * The program is started by the harness (boundary/spawn.c), never by hand:
 * fd 3 is its socket to the harness and fd 4 the arena. It hosts `nlocal`
 * ranks, each a coroutine on a stack of its own (coroutine.h); one runs at a time,
 * in the order the harness's records arrive, until it waits for the harness
 * (cl_rt_wait) or its entry returns. Then the next one runs; when none is
 * left, the queued records go to the harness and the program waits for its
 * answer.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime.h"

static int passed_fd = -1; /* a descriptor that came with the last packet (CL_W_REGION) */

static struct {
    int nlocal, backend, flags;
    st_rank *ranks;
    st_rank *current;
    cl_coro sched;
    size_t stack_bytes;
    int *runq; /* local ranks to run, in arrival order */
    int nrun;
    cl_wire_packet out;
} S;

st_rank *cl_rt_current(void) { return S.current; }
int cl_rt_backend(void) { return S.backend; }
int cl_rt_host_buffers(void) { return (S.flags & CL_WIRE_HOST_BUFFERS) != 0; }

static void die(const char *why)
{
    ssize_t r = write(2, why, strlen(why));
    (void)r;
    _exit(70);
}

static void send_packet(int last)
{
    S.out.last = (uint32_t)last;
    ssize_t want = (ssize_t)CL_WIRE_PACKET_BYTES(S.out.n);
    if (write(CL_WIRE_FD, &S.out, (size_t)want) != want)
        _exit(0); /* the harness is gone: nothing left to do */
    S.out.n = 0;
}

void cl_rt_emit(cl_wire *w, int now)
{
    if (S.out.n == CL_WIRE_BATCH)
        send_packet(0);
    S.out.rec[S.out.n++] = *w;
    if (now)
        send_packet(0);
}

const cl_wire *cl_rt_wait(st_rank *r)
{
    r->state = ST_WAITING;
    cl_coro_switch(&r->coro, &S.sched);
    return &r->reply;
}

/* --- faults: tell the harness what killed the program, then die of it ------------------- */

static void on_fault(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    cl_wire_packet p = {.n = 1, .last = 1};
    p.rec[0] = (cl_wire){.kind = CL_W_FAULT,
                         .aux = sig,
                         .rank = S.current ? S.current->local : -1,
                         .addr = (uint64_t)(uintptr_t)si->si_addr};
    if (sig == SIGSYS)
        p.rec[0].arg = si->si_syscall;
    ssize_t r = write(CL_WIRE_FD, &p, CL_WIRE_PACKET_BYTES(1));
    (void)r;
    signal(sig, SIG_DFL);
    raise(sig);
    _exit(128 + sig);
}

static void catch_faults(void)
{
    static char altstack[64 * 1024];
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
    sigaltstack(&ss, NULL);
    struct sigaction sa = {.sa_sigaction = on_fault, .sa_flags = SA_SIGINFO | SA_ONSTACK};
    sigemptyset(&sa.sa_mask);
    int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
}

/* --- ranks ------------------------------------------------------------------------------ */

static const cl_entry *find_entry(const char *name)
{
    for (int i = 0; i < cl_student_entries.n; i++)
        if (strcmp(cl_student_entries.entries[i].name, name) == 0)
            return &cl_student_entries.entries[i];
    return NULL;
}

static void rank_main(void)
{
    st_rank *r = S.current;
    cl_clear_error();
    cl_result rc = r->fn(&r->world.base, r->args);
    cl_wire w = {.kind = CL_W_RETURN, .rank = r->local, .status = rc};
    if (rc != CL_OK)
        snprintf(CL_SLOT_TEXT_OF(r->local), CL_SLOT_TEXT, "%s", cl_last_error());
    cl_rt_emit(&w, 0);
    r->state = ST_IDLE;
    cl_coro_switch(&r->coro, &S.sched); /* never resumed: the next call starts afresh */
}

static void start_call(const cl_wire *w)
{
    st_rank *r = &S.ranks[w->rank];
    char *name = CL_SLOT_TEXT_OF(w->rank);
    name[CL_SLOT_TEXT - 1] = '\0';
    const cl_entry *e = find_entry(name);
    if (!e || r->state != ST_IDLE) {
        snprintf(name, CL_SLOT_TEXT, "%s",
                 e ? "the rank is already running a call" : "this program has no such function");
        cl_wire ret = {.kind = CL_W_RETURN, .rank = w->rank, .status = CL_ERR_INVALID};
        cl_rt_emit(&ret, 0);
        return;
    }
    if (cl_coro_start(&r->coro, S.stack_bytes, rank_main) != CL_OK)
        die("commlab student program: cannot map a rank's stack\n");
    r->fn = e->fn;
    r->args = (void *)(uintptr_t)w->addr;
    r->time = w->time;
    r->state = ST_RUNNABLE;
    S.runq[S.nrun++] = w->rank;
}

static void deliver(const cl_wire *w)
{
    if (w->kind != CL_W_REGION && (w->rank < 0 || w->rank >= S.nlocal))
        die("commlab student program: a record for an unknown rank\n");
    if (w->kind == CL_W_CALL) {
        start_call(w);
    } else if (w->kind == CL_W_RESUME) {
        st_rank *r = &S.ranks[w->rank];
        if (r->state != ST_WAITING)
            die("commlab student program: an answer for a rank that is not waiting\n");
        r->reply = *w;
        r->time = w->time;
        r->state = ST_RUNNABLE;
        S.runq[S.nrun++] = w->rank;
    } else if (w->kind == CL_W_REGION) {
        void *at = mmap((void *)(uintptr_t)w->addr, w->bytes, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_FIXED_NOREPLACE, passed_fd, 0);
        if (passed_fd < 0 || at != (void *)(uintptr_t)w->addr)
            die("commlab student program: cannot map the shared region\n");
        close(passed_fd);
        passed_fd = -1;
    } else if (w->kind == CL_W_EXIT) {
        fflush(NULL);
        _exit(0);
    }
}

static void run_queue(void)
{
    for (int i = 0; i < S.nrun; i++) {
        st_rank *r = &S.ranks[S.runq[i]];
        if (r->state != ST_RUNNABLE)
            continue;
        S.current = r;
        cl_coro_switch(&S.sched, &r->coro);
        S.current = NULL;
    }
    S.nrun = 0;
}

static int read_packet(cl_wire_packet *p)
{
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    struct iovec iov = {.iov_base = p, .iov_len = sizeof *p};
    struct msghdr msg = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
    ssize_t got = recvmsg(CL_WIRE_FD, &msg, 0);
    if (got <= 0)
        return 0; /* the harness closed the socket: it is done with us */
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
        memcpy(&passed_fd, CMSG_DATA(c), sizeof passed_fd);
    if (got < (ssize_t)CL_WIRE_PACKET_BYTES(0) || p->n > CL_WIRE_BATCH ||
        (size_t)got != CL_WIRE_PACKET_BYTES(p->n))
        die("commlab student program: a malformed packet from the harness\n");
    return 1;
}

static void hello(void)
{
    cl_wire_packet p;
    struct stat st;
    if (fstat(CL_WIRE_FD, &st) != 0 || !S_ISSOCK(st.st_mode))
        die("commlab student program: the lab's program starts it; run that one instead\n");
    if (!read_packet(&p) || (p.n == 1 && p.rec[0].kind == CL_W_EXIT))
        _exit(0); /* the harness stopped before it needed us (no GPU here, say) */
    if (p.n != 1 || p.rec[0].kind != CL_W_HELLO)
        die("commlab student program: the harness said something unexpected\n");
    const cl_wire *h = &p.rec[0];
    S.nlocal = h->rank;
    S.backend = h->op;
    S.flags = (int)h->arg;
    if (S.nlocal < 1 || S.nlocal > (1 << 20))
        die("commlab student program: bad rank count\n");
    void *arena = mmap((void *)CL_ARENA_BASE, h->bytes, PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_FIXED_NOREPLACE, CL_WIRE_ARENA_FD, 0);
    if (arena != (void *)CL_ARENA_BASE)
        die("commlab student program: cannot map the arena\n");
    size_t per = ((size_t)4 << 30) / (size_t)S.nlocal;
    S.stack_bytes = per > ((size_t)1 << 20) ? (size_t)1 << 20 : per < (64 << 10) ? 64 << 10 : per;
    S.stack_bytes &= ~(size_t)4095;
    S.ranks = calloc((size_t)S.nlocal, sizeof *S.ranks);
    S.runq = calloc((size_t)S.nlocal * 2 + 1, sizeof *S.runq);
    if (!S.ranks || !S.runq)
        die("commlab student program: out of memory\n");
    for (int i = 0; i < S.nlocal; i++) {
        S.ranks[i].local = i;
        cl_rt_init_world(&S.ranks[i], h->peer + i, h->aux);
    }
    cl_wire ready = {.kind = CL_W_READY};
    cl_rt_emit(&ready, 0);
    send_packet(1);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* your printf lines appear as they happen */
    catch_faults();
    hello();
    static cl_wire_packet in;
    while (read_packet(&in)) {
        for (uint32_t i = 0; i < in.n; i++)
            deliver(&in.rec[i]);
        if (!in.last)
            continue;
        run_queue();
        send_packet(1);
    }
    fflush(NULL);
    return 0;
}
