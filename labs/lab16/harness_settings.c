/* harness_settings.c: lab 16's DCQCN settings: the paper's (the comparison run), the
 * checks every setting the student returns goes through, a case's switch port and its
 * settings read from the case's keys, the columns that report them, and the tune mode,
 * which reports the student's lab16_tune() for a port.
 */
#include <math.h>
#include <stddef.h>

#include "lab16_harness.h"

/* The paper's settings (Zhu et al. 2015, section 5; R_HAI as the HPCC artifact's
 * DCQCN presets, 10 x R_AI): the comparison run of `incast settings=paper`. */
const lab16_params paper = {.kmin_kb = 5,
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

const char *params_problem(const lab16_params *p, double line)
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

cl_result case_params(cl_case *c, lab16_params *p)
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

cl_result port_of(cl_case *c, lab16_port *port)
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

void report_params(cl_row *row, const lab16_params *p)
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

/* --- tune: the student's settings for a port ------------------------------------------------- */

cl_result tune_case(cl_case *c)
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
