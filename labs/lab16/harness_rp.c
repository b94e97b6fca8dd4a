/* harness_rp.c: lab 16's rp mode, and what it shares with incast: the harness's own random
 * numbers and one step of the student's reaction points. rp feeds fresh random events (CNP
 * arrivals, bytes sent) to the student's reaction points step by step and reports every state
 * they return; the grader replays them against the paper's rules.
 */
#include <math.h>
#include <stdlib.h>

#include "lab16_harness.h"

/* xorshift64*: the harness's own random numbers (the marking, the rp events). */
double uniform(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (double)((*s * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
}

/* Call the student's reaction points for n flows; CL_ERR_CRASHED/TIMEOUT end the mode. */
cl_result step_rps(cl_case *c, rp_args *a, cl_call_result *res)
{
    return cl_case_call_quiet(c, "rp", a, sizeof *a, 0, res);
}

/* --- rp: the reaction point on random events ------------------------------------------------ */

cl_result rp_case(cl_case *c)
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
