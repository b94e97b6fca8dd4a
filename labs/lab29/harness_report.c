/* harness_report.c: lab 29's columns: a plan's (tp, dp, visible, p2p_level), its step's
 * (times, memory, and its probe's bandwidths and latencies), and chapter 1's baseline.
 */
#include <stdio.h>
#include <string.h>

#include "lab29_harness.h"

/* --- the report ---------------------------------------------------------------------------- */

void col_plan(cl_row *r, const char *prefix, const lab29_plan *p)
{
    char key[48], vis[LAB29_VISIBLE_LEN + 1], lv[9];
    memcpy(vis, p->visible, LAB29_VISIBLE_LEN);
    vis[LAB29_VISIBLE_LEN] = '\0';
    memcpy(lv, p->p2p_level, 8);
    lv[8] = '\0';
    snprintf(key, sizeof key, "%stp", prefix);
    cl_col_int(r, key, p->tp);
    snprintf(key, sizeof key, "%sdp", prefix);
    cl_col_int(r, key, (long long)current_case.k.job.nodes * LAB29_GPUS / (p->tp > 0 ? p->tp : 1));
    snprintf(key, sizeof key, "%svisible", prefix);
    cl_col_str(r, key, vis);
    snprintf(key, sizeof key, "%sp2p_level", prefix);
    cl_col_str(r, key, lv);
}

void col_step(cl_row *r, const char *prefix, const lab29_step *s, const lab29_probe *pr)
{
    char key[48];
#define NUM(name, value, fmt)                                                                      \
    do {                                                                                           \
        snprintf(key, sizeof key, "%s%s", prefix, name);                                           \
        cl_col_num(r, key, value, fmt);                                                            \
    } while (0)
    NUM("step_s", s->step_s, "%.6g");
    NUM("overhead_s", s->step_s - s->compute_s, "%.6g");
    NUM("compute_s", s->compute_s, "%.6g");
    NUM("tp_s", s->tp_s, "%.6g");
    NUM("dp_s", s->dp_s, "%.6g");
    NUM("mem_gb", s->mem_bytes / 1e9, "%.6g");
    if (pr) {
        NUM("tp_busbw", pr->tp_busbw, "%.6g");
        NUM("tp_alpha_us", pr->tp_alpha_s * 1e6, "%.3g");
        NUM("dp_busbw", pr->dp_busbw, "%.6g");
        NUM("dp_alpha_us", pr->dp_alpha_s * 1e6, "%.3g");
    }
#undef NUM
    snprintf(key, sizeof key, "%sfits", prefix);
    cl_col_int(r, key, s->fits);
    snprintf(key, sizeof key, "%smicro_batches", prefix);
    cl_col_int(r, key, s->micro_batches);
}

/* The baseline of chapter 1: TP=8 over both NVLink domains, GPUs in index order, DP across. */
cl_result baseline(cl_row *row)
{
    lab29_plan p = {.tp = LAB29_GPUS, .visible = "0,1,2,3,4,5,6,7"};
    lab29_probe pr;
    lab29_step s;
    CL_CHECK(cost_of(&p, &pr, &s));
    col_step(row, "base_", &s, &pr);
    return CL_OK;
}
