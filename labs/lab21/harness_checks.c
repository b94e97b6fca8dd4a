/* harness_checks.c: lab 21's groups and comms modes. groups asks the student's rank
 * generator for one token's groups and reports them; comms calls the student's
 * lab21_init_parallel for each --config on every rank and reports, kind by kind, the groups
 * the harness read (harness_comms.c) and the ranks whose group is not Megatron-LM's. The
 * configuration text (key=value tokens) is read here for the plan mode too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab21_harness.h"

/* --- parsing ------------------------------------------------------------------------------ */

/* key=value tokens of text into a configuration (missing keys keep p's values). */
cl_result parse_config(const char *text, lab21_parallel *p, lab21_plan *plan)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *save = NULL, *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        char *eq = strchr(t, '=');
        if (!eq) {
            cl_set_error("'%s' is not key=value", t);
            return CL_ERR_INVALID;
        }
        *eq = '\0';
        const char *v = eq + 1;
        int *slot = NULL;
        if (strcmp(t, "order") == 0) {
            if (strlen(v) >= LAB21_ORDER_LEN) {
                cl_set_error("order '%s' is too long", v);
                return CL_ERR_INVALID;
            }
            if (p)
                snprintf(p->order, sizeof p->order, "%s", v);
            if (plan)
                snprintf(plan->order, sizeof plan->order, "%s", v);
            continue;
        }
        if (p)
            slot = !strcmp(t, "tp")    ? &p->tp
                   : !strcmp(t, "cp")  ? &p->cp
                   : !strcmp(t, "pp")  ? &p->pp
                   : !strcmp(t, "ep")  ? &p->ep
                   : !strcmp(t, "etp") ? &p->etp
                                       : NULL;
        if (plan)
            slot = !strcmp(t, "tp")   ? &plan->tp
                   : !strcmp(t, "cp") ? &plan->cp
                   : !strcmp(t, "pp") ? &plan->pp
                   : !strcmp(t, "dp") ? &plan->dp
                                      : NULL;
        char *end;
        long x = strtol(v, &end, 10);
        if (!slot || !*v || *end || x < 0 || x > LAB21_MAX_WORLD) {
            cl_set_error("'%s=%s': expected %s", t, v,
                         p ? "tp, cp, pp, ep, etp (whole numbers) or order"
                           : "tp, cp, pp, dp (whole numbers) or order");
            return CL_ERR_INVALID;
        }
        *slot = (int)x;
    }
    return CL_OK;
}

/* --- groups: the rank generator ------------------------------------------------------------- */

cl_result groups_case(cl_case *c)
{
    gen_args a;
    long long v[5];
    const char *keys[5] = {"tp", "cp", "ep", "dp", "pp"}, *order, *token;
    memset(&a, 0, sizeof a);
    for (int i = 0; i < 5; i++)
        CL_CHECK(cl_case_int(c, keys[i], &v[i]));
    CL_CHECK(cl_case_str(c, "order", &order));
    CL_CHECK(cl_case_str(c, "token", &token));
    if (strlen(order) >= LAB21_ORDER_LEN || strlen(token) >= LAB21_ORDER_LEN) {
        cl_set_error("order or token longer than %d characters", LAB21_ORDER_LEN - 1);
        return CL_ERR_INVALID;
    }
    a.s = (lab21_sizes){(int)v[0], (int)v[1], (int)v[2], (int)v[3], (int)v[4]};
    snprintf(a.order, sizeof a.order, "%s", order);
    snprintf(a.token, sizeof a.token, "%s", token);
    cl_row *row = cl_case_row(c);
    cl_col_str(row, "order", order);
    cl_col_str(row, "token", token);
    cl_result rc = cl_case_call(c, "generator", &a, sizeof a);
    cl_col_str(row, "init", cl_result_str((cl_result)a.init_status));
    cl_col_int(row, "ngroups", a.ngroups);
    cl_col_int(row, "gsize", a.gsize);
    if (rc != CL_OK)
        return rc;
    if (a.ngroups < 0 || a.gsize < 0 || (long)a.ngroups * a.gsize > LAB21_MAX_WORLD) {
        cl_col_str(row, "groups", "");
        cl_set_error("%d groups of %d ranks do not fit in the %d the harness gave", a.ngroups,
                     a.gsize, LAB21_MAX_WORLD);
        return CL_ERR_INVALID;
    }
    static char text[8 * LAB21_MAX_WORLD];
    size_t o = 0;
    text[0] = '\0';
    for (int g = 0; g < a.ngroups; g++)
        for (int i = 0; i < a.gsize; i++)
            o += (size_t)snprintf(text + o, sizeof text - o, "%s%d",
                                  i   ? ","
                                  : g ? "|"
                                      : "",
                                  a.groups[g * a.gsize + i]);
    cl_col_str(row, "groups", text);
    return CL_OK;
}

/* --- comms: the communicators of configurations ------------------------------------------------
 */

/* "0,1|2,3": the groups of kind k, by their first member, members by place. */
static void groups_text(const int *first, const int *place, int n, char *out, size_t len,
                        char *none, size_t nlen)
{
    size_t o = 0, no = 0;
    out[0] = none[0] = '\0';
    for (int f = 0; f < n; f++) {
        int count = 0;
        for (int r = 0; r < n; r++)
            count += first[r] == f;
        if (!count)
            continue;
        o += (size_t)snprintf(out + o, o < len ? len - o : 0, "%s", o ? "|" : "");
        for (int pl = 0, k = 0; pl < n && k < count; pl++)
            for (int r = 0; r < n; r++)
                if (first[r] == f && place[r] == pl) {
                    o += (size_t)snprintf(out + o, o < len ? len - o : 0, "%s%d", k ? "," : "", r);
                    k++;
                }
    }
    for (int r = 0; r < n; r++)
        if (first[r] < 0)
            no += (size_t)snprintf(none + no, no < nlen ? nlen - no : 0, "%s%d", no ? "," : "", r);
    if (!none[0])
        snprintf(none, nlen, "-");
}

static cl_result config_rows(cl_run *run, cl_comm *world, const lab21_parallel *p, const char *cfg,
                             check_mem *m)
{
    int n = cl_comm_size(world);
    char why[320];
    cl_result expect = lab21_ref_layout(n, p, &m->ref), status;
    CL_CHECK(student_init(world, p, &status, why, sizeof why));
    if (status != CL_OK || expect != CL_OK) {
        cl_row *row = cl_row_begin(run, world);
        cl_col_str(row, "config", cfg);
        cl_col_str(row, "kind", "*");
        cl_col_str(row, "status", cl_result_str(status));
        cl_col_str(row, "expected", expect == CL_OK ? "success" : "invalid");
        cl_col_int(row, "mismatch", (status == CL_OK) != (expect == CL_OK) ? n : 0);
        if (status != CL_OK)
            cl_col_str(row, "error", why);
        cl_row_end(row);
        return CL_OK;
    }
    for (int k = 0; k < LAB21_KINDS; k++) {
        CL_CHECK(gather_kind(world, k, m->first, m->place));
        int bad = 0;
        for (int r = 0; r < n; r++)
            bad += m->first[r] == -2; /* never shown: cannot happen with the given code */
        bad += mismatches(&m->ref, k, m->first, m->place, n);
        groups_text(m->first, m->place, n, m->groups, sizeof m->groups, m->none, sizeof m->none);
        cl_row *row = cl_row_begin(run, world);
        cl_col_str(row, "config", cfg);
        cl_col_str(row, "kind", lab21_kind_names[k]);
        cl_col_str(row, "status", "success");
        cl_col_str(row, "expected", "success");
        cl_col_int(row, "mismatch", bad);
        cl_col_str(row, "groups", m->groups);
        cl_col_str(row, "none", m->none);
        cl_row_end(row);
    }
    return CL_OK;
}

static cl_result one_config(cl_run *run, cl_comm *world, const char *text)
{
    lab21_parallel p = {.tp = 1, .cp = 1, .pp = 1, .ep = 1, .etp = 0};
    snprintf(p.order, sizeof p.order, "tp-cp-ep-dp-pp");
    CL_CHECK(parse_config(text, &p, NULL));
    if (p.etp == 0)
        p.etp = p.tp;
    char cfg[160];
    snprintf(cfg, sizeof cfg, "tp=%d cp=%d pp=%d ep=%d etp=%d order=%s", p.tp, p.cp, p.pp, p.ep,
             p.etp, p.order);
    check_mem *m = malloc(sizeof *m);
    if (!m)
        return CL_ERR_NOMEM;
    cl_result rc = config_rows(run, world, &p, cfg, m);
    free(m);
    return rc;
}

cl_result comms_mode(cl_run *run, cl_comm *world)
{
    if (cl_comm_size(world) > LAB21_MAX_WORLD) {
        cl_set_error("at most %d ranks", LAB21_MAX_WORLD);
        return CL_ERR_INVALID;
    }
    char list[2048];
    snprintf(list, sizeof list, "%s", cl_opt(run, "config"));
    for (char *save = NULL, *t = strtok_r(list, ";", &save); t; t = strtok_r(NULL, ";", &save))
        CL_CHECK(one_config(run, world, t));
    return CL_OK;
}
