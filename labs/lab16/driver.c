/* driver.c: lab 16's plug-in: the DCQCN reaction point against the harness's switch port.
 *
 *   lab16 rp     seed=N steps=N flows=N line=GBPS kmin=.. (every lab16_params field)
 *   lab16 incast flows=N line=GBPS rtt=US xoff=KB xon=KB qbound=KB ms=MS stagger=US seed=N
 *                [settings=yours|paper|given kmin=KB kmax=KB pmax=P g=.. alpha_us=.. ...]
 *   lab16 net    --rate 200mbit ...   (ranks: node 0 receives, the others send; see net.c)
 *
 * rp feeds fresh random events (CNP arrivals, bytes sent) to the student's
 * reaction point, step by step, and reports every state it returns: the
 * grader replays them against the paper's rules. incast is the closed loop:
 * N senders (the student's reaction points, one call per 1 us step for all of
 * them) into one switch egress port, modelled here, in the harness: the
 * egress queue, RED-like ECN marking with the student's Kmin/Kmax/Pmax, the
 * notification point (one CNP per flow per cnp_us, back after a round trip),
 * and PFC per ingress port (XOFF/XON, pause frames a half round trip late).
 * The student's settings come from their lab16_tune() for the port; the
 * paper's settings run the same loop for comparison.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness.h"
#include "lab16.h"
#include "net.h"

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct rp_args {
    lab16_params p;
    double line_gbps, dt_us;
    int n;
    lab16_rp rp[LAB16_MAX_FLOWS];
    lab16_event ev[LAB16_MAX_FLOWS];
} rp_args;

typedef struct tune_args {
    lab16_port port;
    lab16_params p; /* out */
} tune_args;

#ifdef CL_STUDENT_SIDE

static cl_result rp(cl_comm *c, void *args)
{
    (void)c;
    rp_args *a = args;
    for (int i = 0; i < a->n && i < LAB16_MAX_FLOWS; i++)
        lab16_rp_step(&a->p, a->line_gbps, &a->rp[i], &a->ev[i], a->dt_us);
    return CL_OK;
}

static cl_result tune(cl_comm *c, void *args)
{
    (void)c;
    tune_args *a = args;
    return lab16_tune(&a->port, &a->p);
}

CL_STUDENT_ENTRIES({"rp", rp}, {"tune", tune}, {"send", lab16_net_sender});

#else

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The paper's settings (Zhu et al. 2015, section 5; R_HAI as the HPCC artifact's
 * DCQCN presets, 10 x R_AI): the comparison run of `incast settings=paper`. */
static const lab16_params paper = {.kmin_kb = 5,
                                   .kmax_kb = 200,
                                   .pmax = 0.01,
                                   .g = 1.0 / 256,
                                   .alpha_us = 55,
                                   .timer_us = 55,
                                   .byte_kb = 10000,
                                   .f = 5,
                                   .rai_mbps = 40,
                                   .rhai_mbps = 400,
                                   .min_rate_mbps = 100};

/* xorshift64*: the harness's own random numbers (the marking, the rp events). */
static double uniform(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (double)((*s * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
}

static const char *params_problem(const lab16_params *p, double line)
{
    if (!(p->kmin_kb >= 0 && p->kmin_kb <= p->kmax_kb && isfinite(p->kmax_kb)))
        return "Kmin and Kmax: 0 <= Kmin <= Kmax, finite";
    if (!(p->pmax > 0 && p->pmax <= 1))
        return "Pmax must be in (0, 1]";
    if (!(p->g > 0 && p->g < 1))
        return "g must be in (0, 1)";
    if (!(p->alpha_us > 0 && isfinite(p->alpha_us) && p->timer_us > 0 && isfinite(p->timer_us)))
        return "the alpha and rate-increase timers must be positive";
    if (!(p->byte_kb > 0 && isfinite(p->byte_kb)))
        return "the byte counter must be positive";
    if (p->f < 1 || p->f > 1000)
        return "F must be 1..1000";
    if (!(p->rai_mbps >= 0 && p->rhai_mbps >= 0 && isfinite(p->rai_mbps) && isfinite(p->rhai_mbps)))
        return "R_AI and R_HAI must be non-negative";
    if (!(p->min_rate_mbps > 0 && p->min_rate_mbps <= line * 1000))
        return "the minimum rate must be in (0, line rate]";
    return NULL;
}

static cl_result case_params(cl_case *c, lab16_params *p)
{
    static const struct {
        const char *key;
        size_t off;
    } keys[] = {{"kmin", offsetof(lab16_params, kmin_kb)},
                {"kmax", offsetof(lab16_params, kmax_kb)},
                {"pmax", offsetof(lab16_params, pmax)},
                {"g", offsetof(lab16_params, g)},
                {"alpha_us", offsetof(lab16_params, alpha_us)},
                {"timer_us", offsetof(lab16_params, timer_us)},
                {"byte_kb", offsetof(lab16_params, byte_kb)},
                {"rai", offsetof(lab16_params, rai_mbps)},
                {"rhai", offsetof(lab16_params, rhai_mbps)},
                {"min_rate", offsetof(lab16_params, min_rate_mbps)}};
    *p = paper;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        double v;
        if (cl_case_num(c, keys[i].key, &v) == CL_OK)
            *(double *)((char *)p + keys[i].off) = v;
    }
    long long f;
    if (cl_case_int(c, "f", &f) == CL_OK)
        p->f = (int)f;
    cl_clear_error();
    return CL_OK;
}

/* Call the student's reaction points for n flows; CL_ERR_CRASHED/TIMEOUT end the mode. */
static cl_result step_rps(cl_case *c, rp_args *a, cl_call_result *res)
{
    return cl_case_call_quiet(c, "rp", a, sizeof *a, 0, res);
}

/* --- rp: the reaction point on random events ------------------------------------------------ */

static cl_result rp_case(cl_case *c)
{
    long long seed, steps, flows;
    double line;
    CL_CHECK(cl_case_int(c, "seed", &seed));
    CL_CHECK(cl_case_int(c, "steps", &steps));
    CL_CHECK(cl_case_int(c, "flows", &flows));
    CL_CHECK(cl_case_num(c, "line", &line));
    if (steps < 1 || steps > 100000 || flows < 1 || flows > LAB16_MAX_FLOWS || !(line > 0)) {
        cl_set_error("steps 1..100000, flows 1..%d, line > 0", LAB16_MAX_FLOWS);
        return CL_ERR_INVALID;
    }
    rp_args *a = calloc(1, sizeof *a);
    size_t n = (size_t)steps * (size_t)flows;
    double *rcs = malloc(n * sizeof *rcs), *rts = malloc(n * sizeof *rts),
           *al = malloc(n * sizeof *al), *by = malloc(n * sizeof *by);
    long long *cnp = malloc(n * sizeof *cnp);
    cl_result rc = CL_ERR_NOMEM;
    if (!a || !rcs || !rts || !al || !by || !cnp)
        goto done;
    CL_TRY(case_params(c, &a->p));
    a->line_gbps = line;
    a->dt_us = 1;
    a->n = (int)flows;
    uint64_t s = (uint64_t)seed * 2654435761u + 1;
    for (int i = 0; i < a->n; i++)
        a->rp[i] = (lab16_rp){.rc_gbps = line, .rt_gbps = line, .alpha = 1};
    cl_call_result res = {0};
    for (long long t = 0; t < steps; t++) {
        /* congestion comes and goes: blocks of 400 steps with CNPs, then without */
        double pc = (t / 400) % 2 ? 0.0 : 0.03;
        for (int i = 0; i < a->n; i++) {
            lab16_event *e = &a->ev[i];
            e->cnp = uniform(&s) < pc;
            e->bytes = floor(uniform(&s) * line * 125);
            cnp[(size_t)i * steps + t] = e->cnp;
            by[(size_t)i * steps + t] = e->bytes;
        }
        CL_TRY(step_rps(c, a, &res));
        if (res.status != CL_OK)
            break;
        for (int i = 0; i < a->n; i++) {
            size_t k = (size_t)i * steps + t;
            rcs[k] = a->rp[i].rc_gbps;
            rts[k] = a->rp[i].rt_gbps;
            al[k] = a->rp[i].alpha;
        }
    }
    cl_row *row = cl_case_row(c);
    cl_col_call(row, &res);
    if (res.status == CL_OK) {
        cl_col_ints(row, "cnp", cnp, n);
        cl_col_nums(row, "bytes", by, n, "%.0f");
        cl_col_nums(row, "rc", rcs, n, "%.6g");
        cl_col_nums(row, "rt", rts, n, "%.6g");
        cl_col_nums(row, "alpha", al, n, "%.6g");
    }
    rc = CL_OK;
done:
    free(a);
    free(rcs);
    free(rts);
    free(al);
    free(by);
    free(cnp);
    return rc;
}

/* --- incast: N senders into one switch port ------------------------------------------------- */

typedef struct flow {
    double start_us;
    double qb;             /* its bytes in the switch (the ingress port's share) */
    double sent, departed; /* bytes, in the measured window */
    double acc;            /* packets not yet sent whole */
    double last_cnp;       /* when the NP last sent a CNP for it */
    double cnp_at[16];     /* CNPs on their way back, arrival times */
    int ncnp;
    int xoff;                    /* the switch asked it to pause */
    double pause_from, pause_to; /* when the pause frame and the resume reach it */
} flow;

/* One flow's life, for the grader to replay against the rules: the steps a CNP
 * arrived or the flow was paused, and its state every CHECK_EVERY steps. */
#define CHECK_EVERY 100
typedef struct replay {
    int flow, start;
    long long *cnp, *paused;
    int ncnp, npaused;
    double *t, *rc, *rt, *alpha;
    int n;
} replay;

typedef struct incast_out {
    double util, jain, q_p99_kb, q_max_kb, paused_frac;
    long pauses, pauses_all, out_of_range;
    int samples;
    double *t_us, *q_kb, *rates; /* traces every 20 us; rates flow-major */
    replay rp;
} incast_out;

static void replay_free(replay *r)
{
    free(r->cnp);
    free(r->paused);
    free(r->t);
    free(r->rc);
    free(r->rt);
    free(r->alpha);
}

static double mark_prob(const lab16_params *p, double q)
{
    double kb = q / 1000;
    if (kb <= p->kmin_kb)
        return 0;
    if (kb > p->kmax_kb)
        return 1;
    return p->pmax * (kb - p->kmin_kb) / (p->kmax_kb - p->kmin_kb + 1e-12);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define TRACE_US 20

static cl_result run_incast(cl_case *c, const lab16_port *port, const lab16_params *p, int nf,
                            double ms, double stagger, uint64_t seed, incast_out *o)
{
    int steps = (int)(ms * 1000), warm = steps / 2, nsamp = steps / TRACE_US;
    double line_Bpus = port->line_gbps * 125, xoff = port->xoff_kb * 1000,
           xon = port->xon_kb * 1000, half = port->rtt_us / 2;
    flow *fl = calloc((size_t)nf, sizeof *fl);
    rp_args *a = calloc(1, sizeof *a);
    double *qs = malloc((size_t)(steps - warm) * sizeof *qs);
    int idx[LAB16_MAX_FLOWS];
    memset(o, 0, sizeof *o);
    o->t_us = malloc((size_t)nsamp * sizeof *o->t_us);
    o->q_kb = malloc((size_t)nsamp * sizeof *o->q_kb);
    o->rates = malloc((size_t)nsamp * (size_t)nf * sizeof *o->rates);
    replay *rl = &o->rp;
    rl->flow = (int)(seed % (uint64_t)nf);
    rl->start = (int)ceil(rl->flow * stagger);
    rl->cnp = malloc((size_t)steps * sizeof *rl->cnp);
    rl->paused = malloc((size_t)steps * sizeof *rl->paused);
    int nck = steps / CHECK_EVERY + 1;
    rl->t = malloc((size_t)nck * sizeof *rl->t);
    rl->rc = malloc((size_t)nck * sizeof *rl->rc);
    rl->rt = malloc((size_t)nck * sizeof *rl->rt);
    rl->alpha = malloc((size_t)nck * sizeof *rl->alpha);
    cl_result rc = CL_ERR_NOMEM;
    if (!fl || !a || !qs || !o->t_us || !o->q_kb || !o->rates || !rl->cnp || !rl->paused ||
        !rl->t || !rl->rc || !rl->rt || !rl->alpha)
        goto done;
    a->p = *p;
    a->line_gbps = port->line_gbps;
    a->dt_us = 1;
    lab16_rp state[LAB16_MAX_FLOWS];
    for (int i = 0; i < nf; i++) {
        fl[i].start_us = i * stagger;
        fl[i].last_cnp = -1e9;
        fl[i].pause_from = fl[i].pause_to = -1;
        state[i] = (lab16_rp){.rc_gbps = port->line_gbps, .rt_gbps = port->line_gbps, .alpha = 1};
    }
    double q = 0, paused_us = 0, departed = 0;
    cl_call_result res = {0};
    rc = CL_OK;
    for (int t = 0; t < steps; t++) {
        int n = 0;
        double arrivals = 0, pq = mark_prob(p, q);
        for (int i = 0; i < nf; i++) {
            flow *f = &fl[i];
            if (t < f->start_us)
                continue;
            lab16_event e = {0};
            for (int k = 0; k < f->ncnp; k++)
                if (f->cnp_at[k] <= t) { /* a CNP arrives: at most one counts per step */
                    e.cnp = 1;
                    f->cnp_at[k--] = f->cnp_at[--f->ncnp];
                }
            int paused = f->pause_from >= 0 && t >= f->pause_from &&
                         (f->pause_to < f->pause_from || t < f->pause_to);
            double r = state[i].rc_gbps;
            if (!(r >= 0 && r <= port->line_gbps * (1 + 1e-9))) { /* NaN, negative, too fast */
                o->out_of_range++;
                r = r > 0 ? port->line_gbps : 0;
            }
            e.bytes = paused ? 0 : r * 125;
            if (i == rl->flow) {
                if (e.cnp)
                    rl->cnp[rl->ncnp++] = t;
                if (paused)
                    rl->paused[rl->npaused++] = t;
            }
            if (paused && t >= warm)
                paused_us += 1;
            /* the switch: ECN marks on the packets, the NP's CNPs back a round trip later */
            f->acc += e.bytes / port->mtu;
            while (f->acc >= 1) {
                f->acc -= 1;
                if (pq > 0 && uniform(&seed) < pq && t - f->last_cnp >= port->cnp_us) {
                    f->last_cnp = t;
                    if (f->ncnp < 16)
                        f->cnp_at[f->ncnp++] = t + port->rtt_us;
                }
            }
            f->qb += e.bytes;
            arrivals += e.bytes;
            if (t >= warm)
                f->sent += e.bytes;
            idx[n] = i;
            a->ev[n] = e;
            a->rp[n++] = state[i];
        }
        /* the egress port drains at line rate, every ingress in proportion (FIFO) */
        q += arrivals;
        double d = q < line_Bpus ? q : line_Bpus;
        for (int i = 0; i < nf && q > 0; i++) {
            double di = d * fl[i].qb / q;
            fl[i].qb -= di;
            if (t >= warm)
                fl[i].departed += di;
        }
        q -= d;
        if (t >= warm) {
            departed += d;
            qs[t - warm] = q;
        }
        /* PFC per ingress port: the pause frame and the resume reach the sender late */
        for (int i = 0; i < nf; i++) {
            flow *f = &fl[i];
            if (!f->xoff && f->qb > xoff) {
                f->xoff = 1;
                f->pause_from = t + half;
                o->pauses_all++;
                o->pauses += t >= warm;
            } else if (f->xoff && f->qb < xon) {
                f->xoff = 0;
                f->pause_to = t + half;
            }
        }
        /* the student's reaction points, all of them in one call */
        a->n = n;
        if (n) {
            CL_TRY(step_rps(c, a, &res));
            if (res.status != CL_OK) {
                cl_set_error("lab16_rp_step: %s", res.error);
                rc = CL_ERR_INVALID;
                goto done;
            }
            for (int k = 0; k < n; k++)
                state[idx[k]] = a->rp[k];
        }
        if (t >= rl->start && (t - rl->start) % CHECK_EVERY == 0) {
            const lab16_rp *x = &state[rl->flow];
            rl->t[rl->n] = t;
            rl->rc[rl->n] = x->rc_gbps;
            rl->rt[rl->n] = x->rt_gbps;
            rl->alpha[rl->n++] = x->alpha;
        }
        if (t % TRACE_US == 0 && o->samples < nsamp) {
            int s = o->samples++;
            o->t_us[s] = t;
            o->q_kb[s] = q / 1000;
            for (int i = 0; i < nf; i++)
                o->rates[(size_t)i * nsamp + s] = t >= fl[i].start_us ? state[i].rc_gbps : 0;
        }
    }
    int m = steps - warm;
    double sum = 0, sq = 0;
    for (int i = 0; i < nf; i++) {
        sum += fl[i].departed;
        sq += fl[i].departed * fl[i].departed;
    }
    o->util = departed / (line_Bpus * m);
    o->jain = sq > 0 ? sum * sum / (nf * sq) : 0;
    qsort(qs, (size_t)m, sizeof *qs, cmp_double);
    o->q_p99_kb = qs[(size_t)(0.99 * (m - 1))] / 1000;
    o->q_max_kb = qs[m - 1] / 1000;
    o->paused_frac = paused_us / ((double)m * nf);
done:
    free(fl);
    free(a);
    free(qs);
    return rc;
}

static cl_result port_of(cl_case *c, lab16_port *port)
{
    CL_CHECK(cl_case_num(c, "line", &port->line_gbps));
    CL_CHECK(cl_case_num(c, "rtt", &port->rtt_us));
    CL_CHECK(cl_case_num(c, "xoff", &port->xoff_kb));
    CL_CHECK(cl_case_num(c, "xon", &port->xon_kb));
    CL_CHECK(cl_case_num(c, "qbound", &port->qbound_kb));
    port->mtu = 1024;
    port->cnp_us = 50;
    if (!(port->line_gbps > 0 && port->line_gbps <= 800 && port->rtt_us >= 1 &&
          port->rtt_us <= 100 && port->xon_kb > 0 && port->xoff_kb > port->xon_kb)) {
        cl_set_error("line 0..800 Gb/s, rtt 1..100 us, 0 < xon < xoff");
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

static void report_params(cl_row *row, const lab16_params *p)
{
    cl_col_num(row, "kmin_kb", p->kmin_kb, "%.4g");
    cl_col_num(row, "kmax_kb", p->kmax_kb, "%.4g");
    cl_col_num(row, "pmax", p->pmax, "%.3g");
    cl_col_num(row, "g", p->g, "%.4g");
    cl_col_num(row, "alpha_us", p->alpha_us, "%.4g");
    cl_col_num(row, "timer_us", p->timer_us, "%.4g");
    cl_col_num(row, "byte_kb", p->byte_kb, "%.4g");
    cl_col_int(row, "f", p->f);
    cl_col_num(row, "rai_mbps", p->rai_mbps, "%.4g");
    cl_col_num(row, "rhai_mbps", p->rhai_mbps, "%.4g");
    cl_col_num(row, "min_rate_mbps", p->min_rate_mbps, "%.4g");
}

static cl_result incast_case(cl_case *c)
{
    lab16_port port;
    long long flows, seed;
    double ms, stagger;
    const char *which = "yours";
    CL_CHECK(port_of(c, &port));
    CL_CHECK(cl_case_int(c, "flows", &flows));
    CL_CHECK(cl_case_num(c, "ms", &ms));
    CL_CHECK(cl_case_num(c, "stagger", &stagger));
    CL_CHECK(cl_case_int(c, "seed", &seed));
    if (cl_case_str(c, "settings", &which) != CL_OK)
        which = "yours";
    cl_clear_error();
    if (flows < 1 || flows > LAB16_MAX_FLOWS || !(ms >= 1 && ms <= 200) || !(stagger >= 0) ||
        stagger * (flows - 1) >= ms * 500) {
        cl_set_error("flows 1..%d, ms 1..200, every flow started in the first half",
                     LAB16_MAX_FLOWS);
        return CL_ERR_INVALID;
    }
    cl_row *row = cl_case_row(c);
    lab16_params p = paper;
    if (strcmp(which, "given") == 0) {
        CL_CHECK(
            case_params(c, &p)); /* the case's own kmin=.. kmax=.. (the paper's for the rest) */
    } else if (strcmp(which, "paper") != 0) {
        tune_args t = {.port = port};
        cl_result rc = cl_case_call(c, "tune", &t, sizeof t);
        if (rc != CL_OK)
            return rc == CL_ERR_CRASHED || rc == CL_ERR_TIMEOUT ? rc : CL_OK;
        p = t.p;
    }
    const char *bad = params_problem(&p, port.line_gbps);
    cl_col_str(row, "settings", bad ? bad : "valid");
    report_params(row, &p);
    if (bad)
        return CL_OK;
    incast_out o;
    cl_result rc =
        run_incast(c, &port, &p, (int)flows, ms, stagger, (uint64_t)seed * 7919 + 17, &o);
    if (rc == CL_OK) {
        cl_col_num(row, "util", o.util, "%.4f");
        cl_col_num(row, "jain", o.jain, "%.4f");
        cl_col_num(row, "q_p99_kb", o.q_p99_kb, "%.1f");
        cl_col_num(row, "q_max_kb", o.q_max_kb, "%.1f");
        cl_col_int(row, "pauses", o.pauses);
        cl_col_int(row, "pauses_all", o.pauses_all);
        cl_col_num(row, "paused_frac", o.paused_frac, "%.4f");
        cl_col_int(row, "rate_out_of_range", o.out_of_range);
        cl_col_nums(row, "trace_t_us", o.t_us, (size_t)o.samples, "%.0f");
        cl_col_nums(row, "trace_q_kb", o.q_kb, (size_t)o.samples, "%.1f");
        cl_col_nums(row, "trace_rates", o.rates, (size_t)o.samples * (size_t)flows, "%.3f");
        cl_col_int(row, "replay_flow", o.rp.flow);
        cl_col_int(row, "replay_start", o.rp.start);
        cl_col_ints(row, "replay_cnp", o.rp.cnp, (size_t)o.rp.ncnp);
        cl_col_ints(row, "replay_paused", o.rp.paused, (size_t)o.rp.npaused);
        cl_col_nums(row, "replay_t", o.rp.t, (size_t)o.rp.n, "%.0f");
        cl_col_nums(row, "replay_rc", o.rp.rc, (size_t)o.rp.n, "%.17g");
        cl_col_nums(row, "replay_rt", o.rp.rt, (size_t)o.rp.n, "%.17g");
        cl_col_nums(row, "replay_alpha", o.rp.alpha, (size_t)o.rp.n, "%.17g");
    }
    replay_free(&o.rp);
    free(o.t_us);
    free(o.q_kb);
    free(o.rates);
    return rc;
}

/* --- tune: the student's settings for a port ------------------------------------------------- */

static cl_result tune_case(cl_case *c)
{
    tune_args t = {0};
    CL_CHECK(port_of(c, &t.port));
    cl_result rc = cl_case_call(c, "tune", &t, sizeof t);
    if (rc != CL_OK)
        return rc == CL_ERR_CRASHED || rc == CL_ERR_TIMEOUT ? rc : CL_OK;
    const char *bad = params_problem(&t.p, t.port.line_gbps);
    cl_col_str(cl_case_row(c), "settings", bad ? bad : "valid");
    report_params(cl_case_row(c), &t.p);
    return CL_OK;
}

/* --- net: UDP senders on a real RED/ECN bottleneck -----------------------------------------------
 */

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct rx_flow {
    struct sockaddr_in from;
    int known;
    double bytes, last_cnp;
    long marked, cnps;
} rx_flow;

typedef struct rx_result {
    double util, jain, qdelay_p99_us, queue_p99_kb;
    long packets, marked, cnps;
} rx_result;

/* The receiver and notification point, on rank 0, for `seconds`: bytes and
 * one-way delays counted after the first quarter. */
static cl_result receive(int sock, int echo, int nflows, double seconds, double gbps,
                         rx_result *out)
{
    rx_flow *fl = calloc((size_t)nflows, sizeof *fl);
    size_t cap = 1 << 20, nd = 0;
    double *delay = malloc(cap * sizeof *delay), base = 1e9;
    if (!fl || !delay) {
        free(fl);
        free(delay);
        return CL_ERR_NOMEM;
    }
    memset(out, 0, sizeof *out);
    double t0 = mono_s(), from = t0 + seconds / 4, end = t0 + seconds + 0.3;
    unsigned char buf[2048], ctl[256];
    for (double now = t0; now < end; now = mono_s()) {
        struct pollfd pf = {.fd = sock, .events = POLLIN};
        if (poll(&pf, 1, 20) <= 0)
            continue;
        struct sockaddr_in src;
        struct iovec iov = {buf, sizeof buf};
        struct msghdr m = {.msg_name = &src,
                           .msg_namelen = sizeof src,
                           .msg_iov = &iov,
                           .msg_iovlen = 1,
                           .msg_control = ctl,
                           .msg_controllen = sizeof ctl};
        ssize_t k = recvmsg(sock, &m, MSG_DONTWAIT);
        if (k < (ssize_t)sizeof(lab16_packet))
            continue;
        lab16_packet pk;
        memcpy(&pk, buf, sizeof pk);
        if (pk.magic != LAB16_MAGIC_DATA || pk.flow >= (uint32_t)nflows)
            continue;
        int tos = 0;
        for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h))
            if (h->cmsg_level == IPPROTO_IP && h->cmsg_type == IP_TOS)
                tos = *(unsigned char *)CMSG_DATA(h);
        rx_flow *f = &fl[pk.flow];
        f->from = src;
        f->known = 1;
        now = mono_s();
        double d = now - pk.sent_ns * 1e-9;
        if (d < base)
            base = d;
        if (now >= from && now < t0 + seconds) {
            out->packets++;
            f->bytes += k;
            if (nd < cap)
                delay[nd++] = d;
        }
        if ((tos & LAB16_ECN_CE) == LAB16_ECN_CE) {
            f->marked++;
            if (now - f->last_cnp >= 50e-6) { /* the NP: one CNP per 50 us per flow */
                lab16_packet cnp = {LAB16_MAGIC_CNP, pk.flow, pk.seq, pk.sent_ns};
                sendto(echo, &cnp, sizeof cnp, 0, (struct sockaddr *)&f->from, sizeof f->from);
                f->last_cnp = now;
                f->cnps++;
            }
        }
    }
    double sum = 0, sq = 0, window = seconds * 3 / 4;
    for (int i = 0; i < nflows; i++) {
        sum += fl[i].bytes;
        sq += fl[i].bytes * fl[i].bytes;
        out->marked += fl[i].marked;
        out->cnps += fl[i].cnps;
    }
    out->util = sum / (gbps * 125e6 * window);
    out->jain = sq > 0 ? sum * sum / (nflows * sq) : 0;
    if (nd) {
        qsort(delay, nd, sizeof *delay, cmp_double);
        out->qdelay_p99_us = (delay[(size_t)(0.99 * (nd - 1))] - base) * 1e6;
        out->queue_p99_kb = out->qdelay_p99_us * gbps * 125 / 1000;
    }
    free(fl);
    free(delay);
    return CL_OK;
}

static double opt_num(cl_run *run, const char *name) { return strtod(cl_opt(run, name), NULL); }

static cl_result net_mode(cl_run *run, cl_comm *comm)
{
    int rank = cl_comm_rank(comm), senders = cl_comm_size(comm) - 1;
    double gbps = opt_num(run, "line"), seconds = opt_num(run, "seconds");
    int rounds = (int)opt_num(run, "rounds"), port = (int)opt_num(run, "udp-port");
    if (!(gbps > 0 && gbps <= 100) || !(seconds >= 0.5 && seconds <= 30) || rounds < 1 ||
        rounds > 20 || port < 1024 || port > 65535) {
        cl_set_error("--line 0..100 Gb/s, --seconds 0.5..30, --rounds 1..20, --udp-port 1024..");
        return CL_ERR_INVALID;
    }
    /* the student's settings for this port: every rank asks, the same pure function */
    tune_args t = {.port = {.line_gbps = gbps,
                            .rtt_us = opt_num(run, "rtt"),
                            .mtu = 1024,
                            .xoff_kb = 1e6,
                            .xon_kb = 1e5,
                            .qbound_kb = opt_num(run, "qbound"),
                            .cnp_us = 50}};
    cl_call_result res;
    CL_CHECK(cl_student_run(comm, "tune", &t, sizeof t, 0, &res));
    const char *bad = res.status != CL_OK ? res.error : params_problem(&t.p, gbps);
    if (bad) {
        cl_set_error("lab16_tune: %s", bad);
        return CL_ERR_INVALID;
    }
    int sock = -1, echo = -1;
    if (rank == 0) { /* the data socket, and the echoes' socket: CE in every header */
        int ce = LAB16_ECN_CE;
        echo = socket(AF_INET, SOCK_DGRAM, 0);
        if (echo >= 0)
            setsockopt(echo, IPPROTO_IP, IP_TOS, &ce, sizeof ce);
        sock = socket(AF_INET, SOCK_DGRAM, 0);
        int one = 1, big = 4 << 20;
        struct sockaddr_in me = {.sin_family = AF_INET,
                                 .sin_port = htons((uint16_t)port),
                                 .sin_addr.s_addr = htonl(INADDR_ANY)};
        if (sock < 0 || setsockopt(sock, IPPROTO_IP, IP_RECVTOS, &one, sizeof one) ||
            bind(sock, (struct sockaddr *)&me, sizeof me)) {
            cl_set_error("the receiver cannot listen on UDP port %d", port);
            if (sock >= 0)
                close(sock);
            sock = -1;
        } else {
            setsockopt(sock, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
        }
    }
    int64_t ok = rank != 0 || (sock >= 0 && echo >= 0);
    CL_CHECK(cl_agree(comm, CL_MIN, &ok, 1));
    if (!ok)
        return CL_ERR_IO;
    cl_report_str(run, "units", "rates Gb/s, queue KB (99th percentile of one-way delay x rate)");
    cl_result rc = CL_OK;
    for (int r = 0; r < rounds && rc == CL_OK; r++)
        for (int fixed = 1; fixed >= 0 && rc == CL_OK; fixed--) {
            rx_result rx = {0};
            double sent[2] = {0, 0};
            rc = cl_barrier(comm);
            if (rc != CL_OK)
                break;
            if (rank == 0) {
                rc = receive(sock, echo, senders, seconds, gbps, &rx);
            } else {
                lab16_send_args a = {.p = t.p,
                                     .line_gbps = gbps,
                                     .fixed_gbps = fixed ? gbps / senders : 0,
                                     .seconds = seconds,
                                     .dst_port = port,
                                     .flow = rank - 1,
                                     .packet_bytes = 1024};
                inet_pton(AF_INET, cl_opt(run, "receiver"), &a.dst_ip);
                rc = cl_student_run(comm, "send", &a, sizeof a, 0, &res);
                if (rc == CL_OK && res.status != CL_OK) {
                    cl_set_error("the sender: %s", res.error);
                    rc = res.status;
                }
                sent[0] = a.sent_bytes;
                sent[1] = (double)a.cnps;
            }
            if (rc != CL_OK)
                break;
            rc = cl_agree_sum(comm, sent, 2);
            cl_row *row = cl_row_begin(run, comm);
            cl_col_str(row, "senders", fixed ? "fixed" : "yours");
            cl_col_int(row, "round", r);
            cl_col_num(row, "util", rx.util, "%.4f");
            cl_col_num(row, "jain", rx.jain, "%.4f");
            cl_col_num(row, "qdelay_p99_us", rx.qdelay_p99_us, "%.1f");
            cl_col_num(row, "queue_p99_kb", rx.queue_p99_kb, "%.1f");
            cl_col_int(row, "packets", rx.packets);
            cl_col_int(row, "marked", rx.marked);
            cl_col_int(row, "cnps_sent", rx.cnps);
            cl_col_num(row, "cnps_received", sent[1], "%.0f");
            cl_col_num(row, "sent_mb", sent[0] / 1e6, "%.2f");
            cl_row_end(row);
        }
    if (sock >= 0)
        close(sock);
    if (echo >= 0)
        close(echo);
    return rc;
}

const cl_lab cl_lab_def = {
    .name = "lab16",
    .title = "拥塞控制: DCQCN against a modelled switch port, and on real ECN marks",
    .permits = CL_PERMIT_NET,
    .modes =
        (const cl_mode[]){{.name = "rp",
                           .help = "your reaction point on random CNPs and byte counts",
                           .cases = rp_case},
                          {.name = "incast",
                           .help = "N of your senders into one switch port, your settings",
                           .cases = incast_case},
                          {.name = "tune",
                           .help = "your settings for a port (line= rtt= xoff= xon= qbound=)",
                           .cases = tune_case},
                          {.name = "net",
                           .help = "UDP senders pacing by your reaction point on real ECN marks",
                           .ranks = net_mode,
                           .min_ranks = 2,
                           .backends = "cpu"},
                          {0}},
    .options =
        (const cl_option[]){
            {"line", "GBPS  net: every link's rate, the bottleneck's too", "0.2"},
            {"rtt", "US  net: the round trip your settings assume", "200"},
            {"qbound", "KB  net: the queue your settings aim under", "100"},
            {"seconds", "S  net: each run's length", "2"},
            {"rounds", "N  net: fixed-rate and your senders, N times each, interleaved", "3"},
            {"udp-port", "P  net: the receiver's UDP port", "47916"},
            {"receiver", "IP  net: the receiver's address (node 0)", "10.77.0.1"},
            {0}},
};

#endif
