/* harness_rails.c: the rails between rank 0 (the sender) and rank 1 (the receiver).
 *
 * Each rail is one TCP connection with a thread on each side that works through the
 * rail's transfers in the order they were posted: the sender's thread writes a header
 * (offset, length) and the bytes, the receiver's reads the header, checks it against its
 * own post, and reads the bytes to that offset of the message. With --link net the
 * connection runs between the two namespace nodes' addresses on that rail
 * (10.77.<rail>.<node+1>), where tbf shapes it; with --link emu it runs over the loopback
 * and the sender's thread paces it to the rail's rate. The message lives in the harness;
 * the student's program only posts and waits. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "data.h"
#include "deadline.h"
#include "lab17_harness.h"
#include "timing.h"

#define MAX_INFLIGHT 64
#define MAX_XFERS    (1 << 20)
#define BLOCK        (64 << 10) /* the pacing quantum */

typedef struct xfer {
    int rail;
    size_t off, n;
    int done, waited, bad;
} xfer;

typedef struct rail_state {
    int fd;
    pthread_t th;
    int *queue; /* transfer indices, in post order */
    int nq, capq, head;
    int inflight;
    size_t carried; /* bytes this call */
    double free_at; /* emu: when the rail finishes its queued bytes */
} rail_state;

static struct {
    int open, role, k, emu, stop, active;
    double rate[LAB17_MAX_RAILS];
    rail_state r[LAB17_MAX_RAILS];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned char *buf;
    size_t bytes, cap;
    xfer *x;
    int nx, capx;
    char err[300];
    int failed;
} R = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* A failure seen by a rail thread: kept for the next wait, which reports it. */
static void fail_locked(const char *why)
{
    if (!R.failed)
        snprintf(R.err, sizeof R.err, "%s", why);
    R.failed = 1;
    pthread_cond_broadcast(&R.cv);
}

static int full_io(int fd, void *p, size_t n, int out)
{
    unsigned char *b = p;
    while (n) {
        ssize_t k = out ? send(fd, b, n, MSG_NOSIGNAL) : recv(fd, b, n, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        b += k, n -= (size_t)k;
    }
    return 0;
}

/* The sender's bytes of transfer x on rail i, paced to the rail's rate under emu. */
static int send_bytes(int i, const xfer *x)
{
    uint64_t hdr[2] = {x->off, x->n};
    if (full_io(R.r[i].fd, hdr, sizeof hdr, 1))
        return -1;
    double start = cl_wtime();
    if (R.emu && R.r[i].free_at > start)
        start = R.r[i].free_at;
    for (size_t done = 0; done < x->n;) {
        size_t n = x->n - done < BLOCK ? x->n - done : BLOCK;
        if (R.emu)
            cl_sleep_until(start + (double)(done + n) / R.rate[i]);
        if (full_io(R.r[i].fd, R.buf + x->off + done, n, 1))
            return -1;
        done += n;
    }
    R.r[i].free_at = R.emu ? start + (double)x->n / R.rate[i] : 0;
    return 0;
}

/* The receiver's side: the header must be its own post's. */
static int recv_bytes(int i, xfer *x, char *why, size_t len)
{
    uint64_t hdr[2];
    if (full_io(R.r[i].fd, hdr, sizeof hdr, 0))
        return -1;
    if (hdr[0] == x->off && hdr[1] == x->n)
        return full_io(R.r[i].fd, R.buf + x->off, x->n, 0);
    snprintf(why, len,
             "rail %d: the sender posted bytes %llu..%llu where the receiver posted %zu..%zu "
             "(each rail's posts must match, in order)",
             i, (unsigned long long)hdr[0], (unsigned long long)(hdr[0] + hdr[1]), x->off,
             x->off + x->n);
    x->bad = 1;
    static unsigned char sink[BLOCK]; /* drain it, so that the sender is not stuck */
    for (uint64_t left = hdr[1]; left;) {
        size_t n = left < BLOCK ? (size_t)left : BLOCK;
        if (full_io(R.r[i].fd, sink, n, 0))
            return -1;
        left -= n;
    }
    return 0;
}

static void *worker(void *arg)
{
    int i = (int)(intptr_t)arg;
    rail_state *r = &R.r[i];
    pthread_mutex_lock(&R.mu);
    for (;;) {
        while (!R.stop && r->head == r->nq)
            pthread_cond_wait(&R.cv, &R.mu);
        if (R.stop)
            break;
        xfer *x = &R.x[r->queue[r->head]];
        xfer copy = *x;
        pthread_mutex_unlock(&R.mu);
        char why[300] = "";
        int rc = R.role == 0 ? send_bytes(i, &copy) : recv_bytes(i, &copy, why, sizeof why);
        pthread_mutex_lock(&R.mu);
        x = &R.x[r->queue[r->head]]; /* R.x may have moved */
        r->head++;
        x->done = 1;
        x->bad = copy.bad;
        r->carried += copy.n;
        if (rc)
            fail_locked(R.stop ? "the rails were closed" : "a rail's connection broke");
        else if (why[0])
            fail_locked(why);
        pthread_cond_broadcast(&R.cv);
    }
    pthread_mutex_unlock(&R.mu);
    return NULL;
}

/* --- opening: addresses, ports, connections ------------------------------------------------ */

static cl_result parse_rates(const char *text, lab17_rails *r)
{
    const char *p = text;
    r->k = 0;
    while (p && *p && r->k < LAB17_MAX_RAILS) {
        char *end;
        double mbs = strtod(p, &end);
        if (end == p || !(mbs > 0) || (*end && *end != ',')) {
            cl_set_error("--rates is the rails' rates in MB/s, comma-separated (e.g. 25,12.5), "
                         "not '%s'",
                         text);
            return CL_ERR_INVALID;
        }
        r->rate[r->k++] = mbs * 1e6;
        p = *end ? end + 1 : end;
    }
    if (r->k == 0 || (p && *p)) {
        cl_set_error("--rates: 1 to %d rails", LAB17_MAX_RAILS);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

static void address(int rail, int node, struct sockaddr_in *a)
{
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    char ip[32];
    if (R.emu)
        snprintf(ip, sizeof ip, "127.0.0.1");
    else
        snprintf(ip, sizeof ip, "10.77.%d.%d", rail, node + 1);
    inet_pton(AF_INET, ip, &a->sin_addr);
}

static cl_result connect_rails(cl_comm *comm)
{
    int64_t port[LAB17_MAX_RAILS] = {0};
    int lfd[LAB17_MAX_RAILS];
    for (int i = 0; i < R.k; i++)
        lfd[i] = -1;
    if (R.role == 1) { /* the receiver listens on each rail */
        for (int i = 0; i < R.k; i++) {
            struct sockaddr_in a;
            socklen_t len = sizeof a;
            address(i, 1, &a);
            lfd[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (lfd[i] < 0 || bind(lfd[i], (struct sockaddr *)&a, sizeof a) != 0 ||
                listen(lfd[i], 1) != 0 || getsockname(lfd[i], (struct sockaddr *)&a, &len)) {
                cl_set_error("rail %d: cannot listen on %s: %s (--link net needs the namespace "
                             "nodes' rails)",
                             i, inet_ntoa(a.sin_addr), strerror(errno));
                port[i] = -1;
            } else {
                port[i] = ntohs(a.sin_port);
            }
        }
    }
    int64_t ok = 1;
    for (int i = 0; i < R.k; i++)
        ok &= port[i] >= 0;
    int64_t all_ok = ok ? 0 : 1;
    CL_CHECK(cl_agree(comm, CL_MAX, &all_ok, 1));
    CL_CHECK(cl_agree(comm, CL_SUM, port, R.k));
    if (all_ok) {
        if (ok)
            cl_set_error("the receiver could not listen on its rails");
        return CL_ERR_UNSUPPORTED;
    }
    int64_t bad = 0;
    for (int i = 0; i < R.k; i++) {
        if (R.role == 0) {
            struct sockaddr_in me, peer;
            address(i, 0, &me);
            address(i, 1, &peer);
            peer.sin_port = htons((uint16_t)port[i]);
            int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (fd < 0 || bind(fd, (struct sockaddr *)&me, sizeof me) != 0 ||
                connect(fd, (struct sockaddr *)&peer, sizeof peer) != 0) {
                cl_set_error("rail %d: cannot connect to %s: %s", i, inet_ntoa(peer.sin_addr),
                             strerror(errno));
                bad = 1;
                if (fd >= 0)
                    close(fd);
                fd = -1;
            }
            R.r[i].fd = fd;
        } else {
            R.r[i].fd = accept4(lfd[i], NULL, NULL, SOCK_CLOEXEC);
            close(lfd[i]);
            if (R.r[i].fd < 0) {
                cl_set_error("rail %d: accept: %s", i, strerror(errno));
                bad = 1;
            }
        }
        if (R.r[i].fd >= 0) {
            int one = 1;
            setsockopt(R.r[i].fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        }
    }
    CL_CHECK(cl_agree(comm, CL_MAX, &bad, 1));
    return bad ? CL_ERR_IO : CL_OK;
}

cl_result rails_open(cl_run *run, cl_comm *comm, lab17_rails *r)
{
    if (cl_comm_size(comm) != 2 || strcmp(cl_comm_backend(comm), "cpu") != 0) {
        cl_set_error("the rails join two MPI ranks (cpu backend, mpirun -np 2)");
        return CL_ERR_INVALID;
    }
    const char *link = cl_opt(run, "link");
    if (strcmp(link, "net") != 0 && strcmp(link, "emu") != 0) {
        cl_set_error("--link is emu or net, not '%s'", link);
        return CL_ERR_INVALID;
    }
    memset(r, 0, sizeof *r);
    CL_CHECK(parse_rates(cl_opt(run, "rates"), r));
    R.emu = strcmp(link, "emu") == 0, R.role = cl_comm_rank(comm), R.k = r->k;
    memcpy(R.rate, r->rate, sizeof R.rate);
    CL_CHECK(connect_rails(comm));
    R.stop = 0;
    for (int i = 0; i < R.k; i++)
        if (pthread_create(&R.r[i].th, NULL, worker, (void *)(intptr_t)i) != 0) {
            cl_set_error("cannot start a rail thread");
            return CL_ERR_NOMEM;
        }
    R.open = 1;
    cl_report_str(run, "link", R.emu ? "emulated (loopback, paced)" : "namespace nodes (tbf)");
    cl_report_int(run, "rails", R.k);
    return CL_OK;
}

void rails_close(void)
{
    if (!R.open)
        return;
    pthread_mutex_lock(&R.mu);
    R.stop = 1;
    pthread_cond_broadcast(&R.cv);
    pthread_mutex_unlock(&R.mu);
    for (int i = 0; i < R.k; i++)
        shutdown(R.r[i].fd, SHUT_RDWR);
    for (int i = 0; i < R.k; i++) {
        pthread_join(R.r[i].th, NULL);
        close(R.r[i].fd);
        free(R.r[i].queue);
    }
    free(R.x), free(R.buf);
    memset(R.r, 0, sizeof R.r);
    R.x = NULL, R.buf = NULL, R.nx = R.capx = 0, R.cap = 0, R.open = 0;
}

/* --- one transfer ------------------------------------------------------------------------ */

static unsigned char expected(uint64_t seed, size_t i)
{
    return (unsigned char)(cl_data_hash(seed ^ (uint64_t)(i >> 3)) >> (8 * (i & 7)));
}

static cl_result begin(size_t bytes, uint64_t seed)
{
    if (bytes > R.cap) {
        unsigned char *b = realloc(R.buf, bytes ? bytes : 1);
        if (!b)
            return CL_ERR_NOMEM;
        R.buf = b, R.cap = bytes;
    }
    pthread_mutex_lock(&R.mu);
    R.bytes = bytes, R.nx = 0, R.failed = 0, R.err[0] = '\0', R.active = 1;
    for (int i = 0; i < R.k; i++)
        R.r[i].nq = R.r[i].head = R.r[i].inflight = 0, R.r[i].carried = 0;
    pthread_mutex_unlock(&R.mu);
    for (size_t i = 0; i < bytes; i++)
        R.buf[i] = R.role == 0 ? expected(seed, i) : (unsigned char)~expected(seed, i);
    return CL_OK;
}

/* After a call: everything waited for, every byte once and right (receiver). */
static void end(uint64_t seed, outcome *o)
{
    pthread_mutex_lock(&R.mu);
    R.active = 0;
    size_t posted = 0;
    int pending = 0;
    for (int j = 0; j < R.nx; j++) {
        posted += R.x[j].n;
        pending += !R.x[j].waited;
    }
    o->posted = posted, o->ops = (size_t)R.nx;
    if (o->status == CL_OK && R.failed) {
        o->status = CL_ERR_INVALID;
        snprintf(o->error, sizeof o->error, "%s", R.err);
    } else if (o->status == CL_OK && pending) {
        o->status = CL_ERR_INVALID;
        snprintf(o->error, sizeof o->error,
                 "returned with %d transfer(s) not waited for (lab17_rail_wait each one)", pending);
    } else if (o->status == CL_OK && posted != R.bytes) {
        o->status = CL_ERR_INVALID;
        snprintf(o->error, sizeof o->error,
                 "%zu bytes posted for a message of %zu: every byte goes exactly once", posted,
                 R.bytes);
    }
    pthread_mutex_unlock(&R.mu);
    o->wrong = 0;
    if (R.role == 1)
        for (size_t i = 0; i < R.bytes; i++)
            o->wrong += R.buf[i] != expected(seed, i);
}

/* Both ranks' outcome: the first failure, the wrong bytes, the slower time. */
static cl_result agree(cl_comm *comm, outcome *o)
{
    int64_t v[2] = {o->status != CL_OK, (int64_t)o->wrong};
    CL_CHECK(cl_agree(comm, CL_MAX, v, 1));
    CL_CHECK(cl_agree(comm, CL_SUM, v + 1, 1));
    if (v[0] && o->status == CL_OK) {
        o->status = CL_ERR_INVALID;
        snprintf(o->error, sizeof o->error, "failed on the other rank");
    }
    o->wrong = (size_t)v[1];
    return cl_agree_max(comm, &o->seconds, 1);
}

cl_result rails_student(cl_run *run, cl_comm *comm, const lab17_rails *r, size_t bytes, outcome *o)
{
    uint64_t seed;
    memset(o, 0, sizeof *o);
    CL_CHECK(cl_fresh_seed(run, comm, &seed));
    CL_CHECK(begin(bytes, seed));
    stripe_args a = {.r = *r, .bytes = bytes, .sender = R.role == 0};
    cl_call_result res;
    CL_CHECK(cl_barrier(comm));
    CL_CHECK(cl_student_run(comm, "stripe", &a, sizeof a, CL_ALLOW_LAB, &res));
    o->status = res.status, o->seconds = res.seconds;
    snprintf(o->error, sizeof o->error, "%s%s%s", res.forbidden[0] ? "forbidden: " : "",
             res.forbidden[0] ? res.forbidden : "", res.error);
    if (o->status == CL_OK && res.forbidden[0])
        o->status = CL_ERR_FORBIDDEN;
    end(seed, o);
    return agree(comm, o);
}

static cl_result post(int rail, size_t off, size_t n, int *id);
static cl_result wait_for(int id);

cl_result rails_harness(cl_run *run, cl_comm *comm, const lab17_rails *r, size_t bytes,
                        unsigned only, outcome *o)
{
    uint64_t seed;
    memset(o, 0, sizeof *o);
    CL_CHECK(cl_fresh_seed(run, comm, &seed));
    CL_CHECK(begin(bytes, seed));
    double total = 0;
    for (int i = 0; i < r->k; i++)
        total += only >> i & 1 ? r->rate[i] : 0;
    CL_CHECK(cl_barrier(comm));
    double t0 = cl_wtime();
    size_t at = 0;
    int ids[LAB17_MAX_RAILS * 8], nid = 0, last = -1;
    for (int i = 0; i < r->k; i++)
        if (only >> i & 1)
            last = i;
    /* Each chosen rail: its share in 8 pieces, all posted at once. */
    for (int i = 0; i < r->k && o->status == CL_OK; i++) {
        if (!(only >> i & 1))
            continue;
        size_t share = i == last ? bytes - at : (size_t)((double)bytes * r->rate[i] / total);
        for (int p = 0; p < 8 && share; p++) {
            size_t n = p == 7 ? share - share / 8 * 7 : share / 8;
            if (n && post(i, at, n, &ids[nid]) == CL_OK)
                nid++;
            at += n;
        }
    }
    for (int j = 0; j < nid; j++)
        if (wait_for(ids[j]) != CL_OK && o->status == CL_OK) {
            o->status = CL_ERR_BACKEND;
            snprintf(o->error, sizeof o->error, "the harness's transfer: %s", cl_last_error());
        }
    o->seconds = cl_wtime() - t0;
    end(seed, o);
    return agree(comm, o);
}

/* --- the operations ------------------------------------------------------------------------ */

static cl_result post(int rail, size_t off, size_t n, int *id)
{
    pthread_mutex_lock(&R.mu);
    cl_result rc = CL_OK;
    if (!R.active) {
        cl_set_error("lab17_rail_post outside lab17_stripe");
        rc = CL_ERR_INVALID;
    } else if (rail < 0 || rail >= R.k || n == 0 || off > R.bytes || n > R.bytes - off) {
        cl_set_error("lab17_rail_post(rail %d, offset %zu, %zu bytes): rails 0..%d, 1 byte or "
                     "more within the %zu of the message",
                     rail, off, n, R.k - 1, R.bytes);
        rc = CL_ERR_INVALID;
    } else if (R.r[rail].inflight >= MAX_INFLIGHT || R.nx >= MAX_XFERS) {
        cl_set_error("lab17_rail_post: %d transfers in flight on rail %d (at most %d), or more "
                     "than %d in one call",
                     R.r[rail].inflight, rail, MAX_INFLIGHT, MAX_XFERS);
        rc = CL_ERR_INVALID;
    }
    rail_state *q = rc == CL_OK ? &R.r[rail] : NULL;
    if (q && R.nx == R.capx) {
        int cap = R.capx ? 2 * R.capx : 256;
        xfer *x = realloc(R.x, (size_t)cap * sizeof *x);
        if (!x)
            rc = CL_ERR_NOMEM;
        else
            R.x = x, R.capx = cap;
    }
    if (q && rc == CL_OK && q->nq == q->capq) {
        int cap = q->capq ? 2 * q->capq : 256;
        int *p = realloc(q->queue, (size_t)cap * sizeof *p);
        if (!p)
            rc = CL_ERR_NOMEM;
        else
            q->queue = p, q->capq = cap;
    }
    if (rc == CL_OK) {
        R.x[R.nx] = (xfer){.rail = rail, .off = off, .n = n};
        q->queue[q->nq++] = R.nx;
        q->inflight++;
        *id = ++R.nx;
        pthread_cond_broadcast(&R.cv);
    }
    pthread_mutex_unlock(&R.mu);
    return rc;
}

static cl_result wait_for(int id)
{
    pthread_mutex_lock(&R.mu);
    cl_result rc = CL_OK;
    xfer *x = id >= 1 && id <= R.nx ? &R.x[id - 1] : NULL;
    if (!x || x->waited) {
        cl_set_error("lab17_rail_wait: %s transfer %d", x ? "already waited for" : "no", id);
        rc = CL_ERR_INVALID;
    }
    while (rc == CL_OK && !R.x[id - 1].done && !R.failed) {
        double left = cl_deadline_left();
        if (left <= 0) {
            cl_set_error("lab17_rail_wait: the deadline passed with rail %d's transfer in flight",
                         R.x[id - 1].rail);
            rc = CL_ERR_TIMEOUT;
            break;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double step = left < 0.2 ? left : 0.2;
        ts.tv_sec += (time_t)step;
        ts.tv_nsec += (long)((step - floor(step)) * 1e9);
        if (ts.tv_nsec >= 1000000000L)
            ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&R.cv, &R.mu, &ts);
    }
    if (rc == CL_OK && R.failed) {
        cl_set_error("%s", R.err);
        rc = CL_ERR_INVALID;
    }
    if (rc == CL_OK) {
        x = &R.x[id - 1];
        x->waited = 1;
        R.r[x->rail].inflight--;
    }
    pthread_mutex_unlock(&R.mu);
    return rc;
}

cl_result rails_op(cl_comm *comm, int code, lab17_op *op)
{
    (void)comm;
    if (!R.open) {
        cl_set_error("the rails are not open in this mode");
        return CL_ERR_INVALID;
    }
    if (code == LAB17_OP_POST) {
        int id = 0;
        CL_CHECK(post(op->rail, op->offset, op->n, &id));
        op->id = id;
        return CL_OK;
    }
    if (code == LAB17_OP_WAIT)
        return wait_for(op->id);
    cl_set_error("lab17: unknown rail operation %d", code);
    return CL_ERR_INVALID;
}
