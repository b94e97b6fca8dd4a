/* shm.c: POSIX shared-memory segments with unique names that never outlive the run. */
#include "shm.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "timing.h"

/* --- names still linked by this process, removed at exit and on fatal signals ---------- */

#define MAX_LINKED 16

/* Invariant: slot i is in use iff linked_path[i][0] != 0; the path is the file under
 * /dev/shm, so the signal handler can call unlink(), which is async-signal-safe. */
static char linked_path[MAX_LINKED][CL_SHM_NAME_MAX + 16];
static volatile sig_atomic_t nlinked;
static bool atexit_done;

static const int fatal_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGABRT,
                                    SIGSEGV, SIGBUS, SIGFPE, SIGILL};
#define NSIGNALS (sizeof fatal_signals / sizeof fatal_signals[0])
static struct sigaction saved_actions[NSIGNALS];
static bool handlers_installed;

static void unlink_all(void)
{
    for (int i = 0; i < MAX_LINKED; i++)
        if (linked_path[i][0]) {
            unlink(linked_path[i]);
            linked_path[i][0] = '\0';
        }
    nlinked = 0;
}

static void on_fatal_signal(int sig)
{
    int saved = errno;
    unlink_all();
    for (size_t i = 0; i < NSIGNALS; i++)
        if (fatal_signals[i] == sig)
            sigaction(sig, &saved_actions[i], NULL);
    errno = saved;
    raise(sig); /* delivered on return with the previous action: default, or MPI's handler */
}

static void install_handlers(void)
{
    if (handlers_installed)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NSIGNALS; i++)
        sigaction(fatal_signals[i], &sa, &saved_actions[i]);
    handlers_installed = true;
}

static void restore_handlers(void)
{
    if (!handlers_installed)
        return;
    for (size_t i = 0; i < NSIGNALS; i++)
        sigaction(fatal_signals[i], &saved_actions[i], NULL);
    handlers_installed = false;
}

static void block_signals(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, old);
}

static bool register_name(const char *name)
{
    sigset_t old;
    bool ok = false;
    block_signals(&old);
    for (int i = 0; i < MAX_LINKED && !ok; i++)
        if (!linked_path[i][0]) {
            snprintf(linked_path[i], sizeof linked_path[i], "/dev/shm%s", name);
            nlinked = nlinked + 1;
            ok = true;
        }
    if (ok) {
        install_handlers();
        if (!atexit_done)
            atexit_done = atexit(unlink_all) == 0;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return ok;
}

static void unregister_name(const char *name)
{
    char path[CL_SHM_NAME_MAX + 16];
    sigset_t old;
    snprintf(path, sizeof path, "/dev/shm%s", name);
    block_signals(&old);
    for (int i = 0; i < MAX_LINKED; i++)
        if (linked_path[i][0] && strcmp(linked_path[i], path) == 0) {
            linked_path[i][0] = '\0';
            nlinked = nlinked - 1;
        }
    if (nlinked == 0)
        restore_handlers();
    sigprocmask(SIG_SETMASK, &old, NULL);
}

/* --- names ------------------------------------------------------------------------------ */

static void run_tag(char *out, size_t cap)
{
    const char *tag = getenv("COMMLAB_SHM_TAG");
    size_t n = 0;
    for (; tag && tag[n] && n + 1 < cap && n < 40; n++) {
        char ch = tag[n];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '_' || ch == '.';
        out[n] = ok ? ch : '_';
    }
    out[n] = '\0';
    if (n == 0)
        snprintf(out, cap, "run");
}

const char *cl_shm_prefix(void)
{
    static char prefix[96];
    char tag[48];
    run_tag(tag, sizeof tag);
    snprintf(prefix, sizeof prefix, "commlab-u%u-%s-", (unsigned)getuid(), tag);
    return prefix;
}

static uint64_t random64(void)
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r)
        return r;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    r = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 42);
    r ^= (uintptr_t)&r; /* address-space randomisation adds a few bits */
    r += 0x9e3779b97f4a7c15ull;
    r = (r ^ (r >> 30)) * 0xbf58476d1ce4e5b9ull;
    return r ^ (r >> 31);
}

static bool label_ok(const char *what)
{
    if (!what || !what[0] || strlen(what) > 24)
        return false;
    for (const char *p = what; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_'))
            return false;
    return true;
}

/* --- segments --------------------------------------------------------------------------- */

static cl_result map_fd(cl_shm *s, int fd, size_t bytes, const char *name)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (p == MAP_FAILED) {
        cl_set_error("mmap of %zu bytes of %s: %s", bytes, name, strerror(errno));
        return CL_ERR_IO;
    }
    s->base = p;
    s->bytes = bytes;
    return CL_OK;
}

cl_result cl_shm_create(cl_shm *s, const char *what, size_t bytes)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    if (bytes == 0 || !label_ok(what)) {
        cl_set_error("cl_shm_create: need bytes > 0 and a label of [A-Za-z0-9_], got %zu, '%s'",
                     bytes, what ? what : "(null)");
        return CL_ERR_INVALID;
    }
    int fd = -1;
    for (int attempt = 0; attempt < 8 && fd < 0; attempt++) {
        snprintf(s->name, sizeof s->name, "/%s%s-%ld-%016llx", cl_shm_prefix(), what,
                 (long)getpid(), (unsigned long long)random64());
        /* Register first: a signal between shm_open and the registration would leak. */
        if (!register_name(s->name)) {
            cl_set_error("cl_shm_create: more than %d segments linked at once", MAX_LINKED);
            return CL_ERR_INVALID;
        }
        fd = shm_open(s->name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0) {
            int err = errno;
            unregister_name(s->name);
            if (err != EEXIST) {
                cl_set_error("shm_open %s: %s", s->name, strerror(err));
                return CL_ERR_IO;
            }
        }
    }
    if (fd < 0) {
        cl_set_error("shm_open: no free name after 8 attempts");
        return CL_ERR_IO;
    }
    s->owner = s->linked = true;
    cl_result rc = CL_OK;
    if (ftruncate(fd, (off_t)bytes) != 0) {
        cl_set_error("ftruncate %s to %zu bytes: %s", s->name, bytes, strerror(errno));
        rc = CL_ERR_IO;
    }
    if (rc == CL_OK)
        rc = map_fd(s, fd, bytes, s->name);
    s->fd = fd;
    if (rc != CL_OK) {
        cl_shm_detach(s);
        return rc;
    }
    memset(s->base, 0, bytes); /* allocate the pages now, outside any timed loop */
    return CL_OK;
}

cl_result cl_shm_attach(cl_shm *s, const char *name, size_t bytes)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    if (!name || name[0] != '/' || strlen(name) >= sizeof s->name || bytes == 0) {
        cl_set_error("cl_shm_attach: bad name or size");
        return CL_ERR_INVALID;
    }
    snprintf(s->name, sizeof s->name, "%s", name);
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0) {
        cl_set_error("shm_open %s: %s", name, strerror(errno));
        return CL_ERR_IO;
    }
    struct stat st;
    cl_result rc = CL_OK;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < bytes) {
        cl_set_error("%s: segment smaller than %zu bytes", name, bytes);
        rc = CL_ERR_IO;
    }
    if (rc == CL_OK)
        rc = map_fd(s, fd, bytes, name);
    s->fd = fd;
    if (rc != CL_OK)
        cl_shm_detach(s);
    return rc;
}

cl_result cl_shm_unlink(cl_shm *s)
{
    if (!s->owner || !s->linked)
        return CL_OK;
    s->linked = false;
    int rc = shm_unlink(s->name);
    int err = errno;
    unregister_name(s->name);
    if (rc != 0 && err != ENOENT) {
        cl_set_error("shm_unlink %s: %s", s->name, strerror(err));
        return CL_ERR_IO;
    }
    return CL_OK;
}

cl_result cl_shm_detach(cl_shm *s)
{
    cl_result rc = cl_shm_unlink(s);
    if (s->base && munmap(s->base, s->bytes) != 0) {
        cl_set_error("munmap %s: %s", s->name, strerror(errno));
        rc = CL_ERR_IO;
    }
    s->base = NULL;
    s->bytes = 0;
    if (s->fd > 0)
        close(s->fd);
    s->fd = -1;
    return rc;
}

cl_result cl_shm_open_comm(cl_shm *s, cl_comm *comm, const char *what, size_t bytes)
{
    memset(s, 0, sizeof *s);
    if (strcmp(cl_comm_backend(comm), "cpu") != 0) {
        cl_set_error("shared memory needs the cpu backend, not %s", cl_comm_backend(comm));
        return CL_ERR_UNSUPPORTED;
    }
    int rank = cl_comm_rank(comm), size = cl_comm_size(comm);
    char *name; /* the segment's name travels in a buffer of the interface */
    CL_CHECK(cl_mem_alloc(comm, CL_SHM_NAME_MAX, (void **)&name));
    memset(name, 0, CL_SHM_NAME_MAX);
    cl_result rc = CL_OK;
    if (rank == 0) {
        rc = cl_shm_create(s, what, bytes);
        /* Tell the others even on failure (an empty name), so nobody waits forever. */
        if (rc == CL_OK)
            snprintf(name, CL_SHM_NAME_MAX, "%s", s->name);
        for (int r = 1; r < size; r++) {
            cl_result src = cl_send(comm, name, CL_SHM_NAME_MAX, r);
            if (src != CL_OK && rc == CL_OK)
                rc = src;
        }
    } else {
        rc = cl_recv(comm, name, CL_SHM_NAME_MAX, 0);
        if (rc == CL_OK && !name[0]) {
            cl_set_error("rank 0 could not create the shared segment");
            rc = CL_ERR_IO;
        }
        if (rc == CL_OK)
            rc = cl_shm_attach(s, name, bytes);
    }
    cl_mem_free(comm, name);
    if (rc == CL_OK)
        rc = cl_barrier(comm);
    cl_result urc = cl_shm_unlink(s); /* rank 0 only; everyone has it mapped now */
    if (rc == CL_OK)
        rc = urc;
    if (rc != CL_OK)
        cl_shm_detach(s);
    return rc;
}
