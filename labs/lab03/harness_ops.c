/* harness_ops.c: lab 03's record of every operation the student's code makes.
 *
 * Each lab03_op() asks the harness for its buffers first (LAB03_OP_BEGIN). On the first
 * operation of a pair the harness fills the send buffers of all the pair's operations
 * with fresh data (a seed per operation), and once the pair is over it checks every
 * receive buffer. It logs when each operation began; the rank's trace says when its
 * last wait ended. From the two it rebuilds the timed runs the method prescribes. With
 * noise on, the timing rank is held up halfway through some timed runs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lab03_harness.h"
#include "p2p_sim.h"

/* --- the state of one rank during a student call ------------------------------------------ */

typedef struct visit { /* one pair, as one rank saw it */
    int i, j, ops, order_errors, nth;
    uint64_t seed;
    int first;      /* its first entry in the op log */
    double ready;   /* clock after its buffers were filled */
    double delay_s; /* the hold-up of a slow run (timing rank) */
    unsigned char slow[LAB03_MAX_REPEATS];
    long long wrong; /* bytes that arrived wrong */
    int closed;
} visit;

typedef struct oplog {
    int visit, k;
    double enter; /* the rank's clock when operation k asked for its buffers */
} oplog;

typedef struct rank_state {
    int active, kind, noise, P;
    size_t bytes;
    lab03_method m;
    char *send, *recv; /* P buffers of `bytes` each */
    uint64_t seed, rng;
    visit *v;
    int nv, capv;
    oplog *log;
    int nlog, caplog;
    int refused;
    char why[200];
    double origin; /* CLOCK_MONOTONIC every rank agreed on at the start (cpu, gpu) */
} rank_state;

static rank_state ranks[MAXR]; /* by world rank: one on "cpu" and "gpu", all on "sim" */

uint64_t mix(uint64_t a, uint64_t b) { return cl_data_hash(a * 0x9E3779B97F4A7C15ULL ^ b); }

uint64_t op_seed(uint64_t pair_seed, int k) { return mix(pair_seed, (uint64_t)k + 1); }

/* Hold this rank up for `s` seconds: real time, or virtual time on "sim". */
static void hold_up(cl_comm *c, double s)
{
    if (s <= 0)
        return;
    if (cl_comm_on_sim(c)) {
        cl_sim_compute(c, s);
        return;
    }
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - floor(s)) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static int grow(void **p, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return 0;
    int n = *cap ? 2 * *cap : 64;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, (size_t)n * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

/* The pair's data is checked once it is over: every operation's receive buffer
 * must hold the partner's data of that operation. */
static cl_result close_visit(cl_comm *c, rank_state *s, visit *v)
{
    if (!v || v->closed)
        return CL_OK;
    v->closed = 1;
    int me = cl_comm_rank(c), partner = me == v->i ? v->j : v->i;
    if (s->kind == LAB03_UNI && me == v->i)
        return CL_OK; /* the sender receives nothing */
    int done = v->ops < s->P ? v->ops : s->P;
    for (int k = 0; k < done; k++) {
        size_t wrong = 0;
        CL_CHECK(cl_count_wrong_bytes(c, s->recv + (size_t)k * s->bytes, s->bytes,
                                      op_seed(v->seed, k), partner, 0, &wrong));
        v->wrong += (long long)wrong;
    }
    return CL_OK;
}

/* A new pair on this rank: fresh data in every send buffer, and on the timing
 * rank the runs that will be held up. */
static cl_result open_visit(cl_comm *c, rank_state *s, int i, int j)
{
    if (grow((void **)&s->v, &s->capv, s->nv + 1, sizeof *s->v))
        return CL_ERR_NOMEM;
    visit *v = &s->v[s->nv++];
    memset(v, 0, sizeof *v);
    v->i = i, v->j = j, v->first = s->nlog - 1; /* the operation that opens it */
    for (int q = 0; q < s->nv - 1; q++)
        v->nth += s->v[q].i == i && s->v[q].j == j;
    v->seed = mix(mix(s->seed, (uint64_t)(i * MAXR + j)), (uint64_t)v->nth);
    int me = cl_comm_rank(c);
    for (int k = 0; k < s->P; k++)
        CL_CHECK(
            cl_fill_bytes(c, s->send + (size_t)k * s->bytes, s->bytes, op_seed(v->seed, k), me, 0));
    v->ready = cl_comm_time(c);
    int R = s->m.repeats;
    if (s->noise && me == i && R >= 3 && s->m.warmup >= 1) {
        int want = (R - 1) / 2;
        for (int got = 0; got < want;) {
            s->rng = mix(s->rng, 77);
            int r = (int)(s->rng % (uint64_t)R);
            if (!v->slow[r])
                v->slow[r] = 1, got++;
        }
    }
    return CL_OK;
}

static cl_result refuse(rank_state *s, const char *why)
{
    s->refused++;
    if (!s->why[0])
        snprintf(s->why, sizeof s->why, "%s", why);
    cl_set_error("%s", why);
    return CL_ERR_INVALID;
}

/* One LAB03_OP_BEGIN: the operation logged and checked, its buffers handed out. */
static cl_result ops_begin(cl_comm *c, lab03_begin *b)
{
    rank_state *s = &ranks[cl_comm_rank(c)];
    double now = cl_comm_time(c);
    int n = cl_comm_size(c), me = cl_comm_rank(c);
    char why[200];
    if (grow((void **)&s->log, &s->caplog, s->nlog + 1, sizeof *s->log))
        return CL_ERR_NOMEM;
    oplog *e = &s->log[s->nlog++];
    *e = (oplog){.visit = -1, .k = b->k, .enter = now};
    if (!s->active)
        return refuse(s, "lab03_op outside a measurement");
    if (b->kind != s->kind || b->bytes != s->bytes) {
        snprintf(why, sizeof why, "lab03_op(%s, %llu bytes) in a %s matrix of %zu-byte messages",
                 b->kind >= 0 && b->kind <= 2 ? kind_names[b->kind] : "?",
                 (unsigned long long)b->bytes, kind_names[s->kind], s->bytes);
        return refuse(s, why);
    }
    if (b->i < 0 || b->j < 0 || b->i >= n || b->j >= n || b->i == b->j ||
        (me != b->i && me != b->j) || b->k < 0 || b->k >= s->P) {
        snprintf(why, sizeof why,
                 "rank %d: lab03_op(i=%d, j=%d, k=%d): i != j must be ranks "
                 "0..%d, this rank one of them, k in 0..%d (warm-up + iters x repeats)",
                 me, b->i, b->j, b->k, n - 1, s->P - 1);
        return refuse(s, why);
    }
    visit *v = s->nv ? &s->v[s->nv - 1] : NULL;
    if (!v || v->i != b->i || v->j != b->j || b->k == 0 || v->ops >= s->P) {
        CL_CHECK(close_visit(c, s, v));
        CL_CHECK(open_visit(c, s, b->i, b->j));
        v = &s->v[s->nv - 1];
    }
    if (b->k != v->ops)
        v->order_errors++;
    v->ops++;
    e->visit = s->nv - 1;
    /* A hold-up halfway through a slow run, sized from the warm-up. */
    int w = s->m.warmup, it = s->m.iters, r = (b->k - w) / it;
    if (me == b->i && b->k >= w && r < s->m.repeats && v->slow[r] && b->k == w + r * it + it / 2 &&
        b->k == v->ops - 1) {
        if (v->delay_s == 0) {
            double warm = s->log[v->first + w].enter - v->ready;
            double run = warm > 0 ? warm / w * it : 1e-3;
            v->delay_s = fmin(fmax(2.0 * run, 20e-6), 0.02);
        }
        hold_up(c, v->delay_s);
    }
    b->send = (uint64_t)(uintptr_t)(s->send + (size_t)b->k * s->bytes);
    b->recv = (uint64_t)(uintptr_t)(s->recv + (size_t)b->k * s->bytes);
    return CL_OK;
}

/* The lab's operation (cl_lab.lab_op): LAB03_OP_BEGIN is the only one. */
cl_result lab_op(cl_run *run, cl_comm *c, int code, void *args, size_t bytes)
{
    (void)run;
    if (code != LAB03_OP_BEGIN || bytes != sizeof(lab03_begin) || cl_comm_rank(c) >= MAXR) {
        cl_set_error("lab03: unknown operation %d (%zu bytes)", code, bytes);
        return CL_ERR_INVALID;
    }
    return ops_begin(c, args);
}

/* --- one student call of a matrix, and what the harness makes of it ----------------------------
 */

/* End of each logged operation: its last completed wait before the next BEGIN. */
static cl_result op_ends(cl_comm *c, rank_state *s, double **out)
{
    double *end = calloc((size_t)(s->nlog + 1), sizeof *end);
    if (!end)
        return CL_ERR_NOMEM;
    int n, at = -1;
    const cl_trace_event *ev = cl_student_trace(c, &n);
    for (int e = 0; e < n; e++) {
        if (ev[e].op == CL_WOP_LAB && ev[e].code == LAB03_OP_BEGIN)
            at++;
        else if (ev[e].op == CL_WOP_WAIT && at >= 0 && at < s->nlog)
            end[at] = ev[e].time;
    }
    *out = end;
    return CL_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of the timed runs, the method's: the middle one, or the mean of the two. */
double median_of_runs(double *per, int n)
{
    qsort(per, (size_t)n, sizeof *per, cmp_double);
    return n % 2 ? per[n / 2] : (per[n / 2 - 1] + per[n / 2]) / 2;
}

double ref_metric(int kind, size_t bytes, double seconds)
{
    switch (kind) {
    case LAB03_UNI: return (double)bytes / seconds / 1e9;
    case LAB03_BIDIR: return 2.0 * (double)bytes / seconds / 1e9;
    case LAB03_LATENCY: return seconds / 2.0 * 1e6;
    }
    return NAN;
}

/* The timing rank's runs of visit v, as the method defines them. */
static void rebuild(const rank_state *s, const visit *v, const double *end, int n, double *ref,
                    double *spread)
{
    int w = s->m.warmup, it = s->m.iters, R = s->m.repeats;
    double per[LAB03_MAX_REPEATS], lo = INFINITY, hi = 0;
    *ref = NAN, *spread = NAN;
    if (v->ops != s->P || v->order_errors || v->first + s->P > n)
        return;
    for (int r = 0; r < R; r++) {
        double t0 = s->log[v->first + w + r * it].enter;
        double t1 = end[v->first + w + (r + 1) * it - 1];
        per[r] = (t1 - t0) / it;
        lo = fmin(lo, per[r]), hi = fmax(hi, per[r]);
    }
    double mid = median_of_runs(per, R);
    *ref = ref_metric(s->kind, s->bytes, mid);
    *spread = lo > 0 ? hi / lo : NAN;
}

static cl_result agree_all(cl_comm *c, findings *f, int nn)
{
    CL_CHECK(cl_agree_max(c, f->value, nn));
    CL_CHECK(cl_agree_sum(c, f->writers, nn));
    CL_CHECK(cl_agree_sum(c, f->visits, nn));
    CL_CHECK(cl_agree_sum(c, f->ops_off, nn));
    CL_CHECK(cl_agree_sum(c, f->wrong, nn));
    CL_CHECK(cl_agree_max(c, f->ref, nn));
    CL_CHECK(cl_agree_max(c, f->spread, nn));
    CL_CHECK(cl_agree_sum(c, f->slow, nn));
    CL_CHECK(cl_agree_max(c, f->start, nn));
    CL_CHECK(cl_agree_max(c, f->end, nn));
    for (int p = 0; p < nn; p++)
        f->start[p] = f->start[p] > 0 ? BIG - f->start[p] : NAN;
    return cl_agree_sum(c, &f->refused, 1);
}

/* Before the student's call: fresh buffers and seeds, the clocks' origin; the op log on. */
cl_result ops_start(cl_run *run, cl_comm *c, int kind, size_t bytes, const lab03_method *m,
                    int noise)
{
    int me = cl_comm_rank(c);
    rank_state *s = &ranks[me];
    memset(s, 0, sizeof *s);
    s->kind = kind, s->bytes = bytes, s->m = *m, s->noise = noise;
    s->P = m->warmup + m->iters * m->repeats;
    CL_CHECK(cl_fresh_seed(run, c, &s->seed));
    s->rng = mix(s->seed, 0x5EED0000u + (uint64_t)me);
    s->seed = mix(s->seed, (uint64_t)kind);
    size_t pool = (size_t)s->P * bytes;
    CL_CHECK(cl_mem_alloc(c, pool ? pool : 1, (void **)&s->send));
    CL_CHECK(cl_mem_alloc(c, pool ? pool : 1, (void **)&s->recv));
    CL_CHECK(cl_poison(c, s->recv, pool, CL_INT32)); /* no first-touch faults in timed runs */
    CL_CHECK(cl_barrier(c));
    /* Pairs are compared across processes on one clock, CLOCK_MONOTONIC (MPI_Wtime
     * need not be global) or the simulator's, from an origin every rank agrees on. */
    s->origin = cl_comm_on_sim(c) ? 0 : cl_wtime();
    CL_CHECK(cl_agree_max(c, &s->origin, 1));
    s->active = 1;
    return CL_OK;
}

/* After it: the last pair's data checked, every pair's runs rebuilt, the rank's findings
 * (its share of the student's matrix among them) combined with every other rank's. */
cl_result ops_finish(cl_comm *c, const double *matrix, findings *f, char *why, size_t whylen)
{
    int n = cl_comm_size(c), me = cl_comm_rank(c), nn = n * n;
    rank_state *s = &ranks[me];
    const lab03_method *m = &s->m;
    s->active = 0;
    if (s->nv)
        CL_CHECK(close_visit(c, s, &s->v[s->nv - 1]));
    memset(f, 0, sizeof *f);
    for (int p = 0; p < nn; p++) {
        double v = matrix[p];
        f->writers[p] = isnan(v) ? 0 : 1;
        f->value[p] = isnan(v) ? 0 : v;
    }
    double *end = NULL;
    CL_CHECK(op_ends(c, s, &end));
    double to_global = cl_comm_on_sim(c) ? 0 : cl_wtime() - cl_comm_time(c) - s->origin;
    for (int q = 0; q < s->nv; q++) {
        visit *v = &s->v[q];
        int p = v->i * n + v->j;
        f->wrong[p] += (double)v->wrong;
        f->ops_off[p] += v->ops != s->P || v->order_errors;
        double t0 = s->log[v->first].enter, t1 = t0;
        for (int e = v->first; e < s->nlog && (e == v->first || s->log[e].visit == q); e++)
            t1 = fmax(t1, end[e]);
        f->start[p] = fmax(f->start[p], BIG - (t0 + to_global));
        f->end[p] = fmax(f->end[p], t1 + to_global);
        if (me != v->i)
            continue;
        f->visits[p] += 1;
        for (int r = 0; r < m->repeats; r++)
            f->slow[p] += v->slow[r];
        double ref, spread;
        rebuild(s, v, end, s->nlog, &ref, &spread);
        if (isfinite(ref))
            f->ref[p] = ref, f->spread[p] = spread;
    }
    f->refused = s->refused;
    snprintf(why, whylen, "%s", s->why);
    free(end);
    free(s->v);
    free(s->log);
    s->v = NULL, s->log = NULL;
    CL_CHECK(cl_mem_free(c, s->send));
    CL_CHECK(cl_mem_free(c, s->recv));
    return agree_all(c, f, nn);
}
