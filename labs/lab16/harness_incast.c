/* harness_incast.c: lab 16's incast mode, the closed loop: N senders (the student's
 * reaction points, one call per 1 us step for all of them) into one switch egress port
 * modelled here: the egress queue, RED-like ECN marking with the settings' Kmin/Kmax/Pmax,
 * the notification point (one CNP per flow per cnp_us, back after a round trip), and PFC per
 * ingress port (XOFF/XON, pause frames a half round trip late). It reports utilisation,
 * fairness, the queue and pauses, traces for the picture, and one flow's life for the
 * grader to replay.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lab16_harness.h"

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

int cmp_double(const void *a, const void *b)
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

cl_result incast_case(cl_case *c)
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
