/* driver.c: lab 21's plug-in: Megatron-LM's rank generator, its communicators, and a plan.
 *
 *   lab21 groups tp=2 cp=1 ep=1 dp=4 pp=2 order=tp-cp-ep-dp-pp token=dp   (or --cases FILE)
 *       your RankGenerator's groups for one token
 *   lab21 comms [--config "tp=2 cp=1 pp=2 ep=2 etp=1 order=tp-cp-ep-dp-pp;..."]
 *       your communicators on every rank (any backend), as the harness reads them
 *   lab21 plan --backend sim --system dgx-a100 --nranks 32 [--layers 40 --hidden 5120 ...]
 *       your plan for the model on that cluster, its simulated step, and the best plan's
 *       (--plan "tp=2 cp=1 pp=4 order=tp-cp-ep-dp-pp" simulates that plan instead)
 *
 * The harness never takes the student's word for a group: after
 * lab21_init_parallel returns, this file's student side shows every
 * communicator to the harness (lab21_ops.h), which reads its members with its
 * own agreement over that communicator and compares them with Megatron-LM's
 * (harness_megatron.c). The plan's step runs on the student's communicators
 * (harness_step.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness.h"
#include "lab21.h"
#include "lab21_ops.h"

typedef struct gen_args {
    lab21_sizes s;
    char order[LAB21_ORDER_LEN], token[LAB21_ORDER_LEN];
    int init_status;             /* out: lab21_generator_init */
    int ngroups, gsize;          /* out */
    int groups[LAB21_MAX_WORLD]; /* out */
} gen_args;

typedef struct init_args {
    lab21_parallel p;
} init_args;

typedef struct plan_args {
    lab21_job j;
    lab21_plan plan; /* out */
} plan_args;

#ifdef CL_STUDENT_SIDE

static cl_result generator(cl_comm *c, void *args)
{
    (void)c;
    gen_args *a = args;
    lab21_generator g;
    memset(&g, 0, sizeof g);
    a->init_status = lab21_generator_init(&g, &a->s, a->order);
    if (a->init_status != CL_OK)
        return a->init_status;
    return lab21_get_ranks(&g, a->token, a->groups, LAB21_MAX_WORLD, &a->ngroups, &a->gsize);
}

/* Build the communicators, then show each one to the harness. */
static cl_result init(cl_comm *c, void *args)
{
    init_args *a = args;
    lab21_comms out;
    memset(&out, 0, sizeof out);
    cl_result rc = lab21_init_parallel(c, &a->p, &out);
    if (rc != CL_OK) /* a refusal is the answer: the harness reads the status */
        return rc;
    for (int k = 0; k < LAB21_KINDS; k++) {
        lab21_group_args g = {.kind = k};
        rc = cl_lab_call(out.c[k] ? out.c[k] : c, out.c[k] ? LAB21_OP_GROUP : LAB21_OP_NONE, &g,
                         sizeof g);
        if (rc != CL_OK)
            return rc;
    }
    return CL_OK;
}

static cl_result plan(cl_comm *c, void *args)
{
    (void)c;
    plan_args *a = args;
    return lab21_plan_job(&a->j, &a->plan);
}

CL_STUDENT_ENTRIES({"generator", generator}, {"init", init}, {"plan", plan});

#else

#include "lab21_harness.h"
#include "sim/sim_system.h"

/* --- the communicators, as the harness reads them ------------------------------------------ */

/* What rank w showed for each kind in its last call of init: the first
 * member of its group (-1: none, -2: not shown), its place, and the harness's
 * communicator. */
typedef struct shown {
    int first[LAB21_KINDS], place[LAB21_KINDS];
    cl_comm *comm[LAB21_KINDS];
} shown;

static cl_comm *worlds[LAB21_MAX_WORLD]; /* this process's ranks' world communicators */
static shown seen[LAB21_MAX_WORLD];

static void forget(int w)
{
    for (int k = 0; k < LAB21_KINDS; k++)
        seen[w].first[k] = -2, seen[w].place[k] = -1, seen[w].comm[k] = NULL;
}

/* The world rank whose student program slot c belongs to (every communicator of
 * a rank shares the rank's slot), or -1. */
static int world_rank_of(const cl_comm *c)
{
    void *home = cl_student_args_home(c);
    for (int w = 0; w < LAB21_MAX_WORLD; w++)
        if (worlds[w] && cl_student_args_home(worlds[w]) == home)
            return w;
    return -1;
}

/* The members of c in its rank order, by agreement over c itself. */
static cl_result members(cl_comm *c, int w, int *out)
{
    int n = cl_comm_size(c), me = cl_comm_rank(c);
    for (int base = 0; base < n; base += CL_AGREE_MAX) {
        int64_t v[CL_AGREE_MAX] = {0};
        int m = n - base < CL_AGREE_MAX ? n - base : CL_AGREE_MAX;
        if (me >= base && me < base + m)
            v[me - base] = w + 1;
        CL_CHECK(cl_agree(c, CL_SUM, v, m));
        for (int i = 0; i < m; i++)
            out[base + i] = (int)v[i] - 1;
    }
    return CL_OK;
}

static cl_result lab_op(cl_run *run, cl_comm *c, int code, void *args, size_t bytes)
{
    (void)run;
    lab21_group_args *a = args;
    int w = world_rank_of(c);
    if (bytes != sizeof *a || (code != LAB21_OP_GROUP && code != LAB21_OP_NONE) || w < 0 ||
        a->kind < 0 || a->kind >= LAB21_KINDS) {
        cl_set_error("lab 21 has no such operation");
        return CL_ERR_INVALID;
    }
    if (seen[w].first[a->kind] != -2) {
        cl_set_error("rank %d showed its %s communicator twice", w, lab21_kind_names[a->kind]);
        return CL_ERR_INVALID;
    }
    if (code == LAB21_OP_NONE) {
        seen[w].first[a->kind] = -1;
        return CL_OK;
    }
    int *list = malloc((size_t)cl_comm_size(c) * sizeof *list); /* per rank: agree yields */
    if (!list)
        return CL_ERR_NOMEM;
    cl_result rc = members(c, w, list);
    int head = list[0];
    free(list);
    CL_CHECK(rc);
    seen[w].first[a->kind] = head;
    seen[w].place[a->kind] = cl_comm_rank(c);
    seen[w].comm[a->kind] = c;
    return CL_OK;
}

/* Call the student's lab21_init_parallel for p on every rank; *status its result
 * (the same on every rank, or the first failure). */
static cl_result student_init(cl_comm *world, const lab21_parallel *p, cl_result *status, char *why,
                              size_t whylen)
{
    int w = cl_comm_rank(world);
    init_args a = {.p = *p};
    cl_call_result res;
    worlds[w] = world;
    forget(w);
    CL_CHECK(cl_student_run(world, "init", &a, sizeof a, CL_ALLOW_SPLIT | CL_ALLOW_LAB, &res));
    int64_t st = res.status;
    CL_CHECK(cl_agree(world, CL_MAX, &st, 1));
    *status = (cl_result)st;
    snprintf(why, whylen, "%s", res.status != CL_OK ? res.error : "");
    return CL_OK;
}

/* Gather every rank's (first member, place) of kind k at every rank. */
static cl_result gather_kind(cl_comm *world, int k, int *first, int *place)
{
    int n = cl_comm_size(world), me = cl_comm_rank(world);
    for (int base = 0; base < n; base += CL_AGREE_MAX) {
        int64_t v[CL_AGREE_MAX] = {0};
        int m = n - base < CL_AGREE_MAX ? n - base : CL_AGREE_MAX;
        if (me >= base && me < base + m)
            v[me - base] = ((int64_t)seen[me].first[k] + 2) * 4096 + seen[me].place[k] + 1;
        CL_CHECK(cl_agree(world, CL_SUM, v, m));
        for (int i = 0; i < m; i++)
            first[base + i] = (int)(v[i] / 4096) - 2, place[base + i] = (int)(v[i] % 4096) - 1;
    }
    return CL_OK;
}

/* Ranks whose group of kind k differs from the reference's (first member, place). */
static int mismatches(const lab21_layout *ref, int k, const int *first, const int *place, int n)
{
    static int head[LAB21_MAX_WORLD];
    int bad = 0;
    for (int r = 0; r < n; r++)
        head[r] = -1;
    for (int r = 0; r < n; r++)
        if (ref->color[k][r] >= 0 && ref->key[k][r] == 0)
            head[ref->color[k][r]] = r;
    for (int r = 0; r < n; r++) {
        int c = ref->color[k][r];
        int f = c >= 0 ? head[c] : -1, pl = c >= 0 ? ref->key[k][r] : -1;
        bad += first[r] != f || (c >= 0 && place[r] != pl);
    }
    return bad;
}

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

/* --- parsing ------------------------------------------------------------------------------ */

/* key=value tokens of text into a configuration (missing keys keep p's values). */
static cl_result parse_config(const char *text, lab21_parallel *p, lab21_plan *plan)
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

static cl_result groups_case(cl_case *c)
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

/* The working memory of one configuration's check, per rank: the simulated
 * ranks of one process interleave at every agreement. */
typedef struct check_mem {
    lab21_layout ref;
    int first[LAB21_MAX_WORLD], place[LAB21_MAX_WORLD];
    char groups[8 * LAB21_MAX_WORLD], none[8 * LAB21_MAX_WORLD];
} check_mem;

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

static cl_result comms_mode(cl_run *run, cl_comm *world)
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

/* --- plan: the decision -------------------------------------------------------------------- */

/* One GPU's dense bf16 peak (datasheets) and memory; the step assumes half the peak is
 * achieved (Narayanan et al., SC 2021: 52% of peak on 3072 A100s). */
static const struct gpu_facts {
    const char *system;
    double peak_tflops, mem_GB;
} gpus[] = {{"dgx-a100", 312, 80}, /* NVIDIA A100 Tensor Core GPU datasheet: SXM4 80GB */
            {"dgx-h100", 989, 80}, /* NVIDIA H100 Tensor Core GPU datasheet: H100 SXM */
            {NULL, 0, 0}};
#define ACHIEVED 0.5

static cl_result opt_int(cl_run *run, const char *name, int *out)
{
    char *end;
    const char *v = cl_opt(run, name);
    long x = strtol(v, &end, 10);
    if (!*v || *end || x < 1 || x > (1L << 30)) {
        cl_set_error("--%s %s: expected a positive whole number", name, v);
        return CL_ERR_INVALID;
    }
    *out = (int)x;
    return CL_OK;
}

static cl_result build_job(cl_run *run, cl_comm *world, lab21_job *j)
{
    cl_sim_system sys;
    memset(j, 0, sizeof *j);
    const char *name = cl_run_opts(run)->system;
    CL_CHECK(cl_sim_system_load(name ? name : "dgx-a100", &sys));
    lab21_model *m = &j->m;
    CL_CHECK(opt_int(run, "layers", &m->layers));
    CL_CHECK(opt_int(run, "hidden", &m->hidden));
    CL_CHECK(opt_int(run, "heads", &m->heads));
    CL_CHECK(opt_int(run, "seq", &m->seq));
    CL_CHECK(opt_int(run, "vocab", &m->vocab));
    CL_CHECK(opt_int(run, "batch", &m->global_batch));
    CL_CHECK(opt_int(run, "micro", &m->micro_batch));
    lab21_cluster *k = &j->c;
    int n = cl_comm_size(world);
    if (sys.node != CL_SIM_NODE_NVSWITCH || n % sys.gpus_per_node) {
        cl_set_error("plan needs an NVSwitch system and whole nodes (%d ranks on %s, %d GPUs "
                     "per node)",
                     n, sys.name, sys.gpus_per_node);
        return CL_ERR_UNSUPPORTED;
    }
    k->nodes = n / sys.gpus_per_node;
    k->gpus_per_node = sys.gpus_per_node;
    k->nics_per_node = sys.nics_per_node;
    k->nvlink_GBps = sys.nvlinks_per_gpu * sys.nvlink_gbps;
    k->nic_GBps = sys.nic_eff_gbps;
    k->hbm_GBps = sys.hbm_gbps;
    k->nvl_lat_us = sys.lat_ring_nvl[CL_PROTO_SIMPLE] + 2 * sys.nvswitch_hop_us;
    k->net_lat_us = sys.lat_ring_net[CL_PROTO_SIMPLE] + 2 * sys.fabric_hop_us;
    const struct gpu_facts *g = gpus;
    while (g->system && strcmp(g->system, sys.name) != 0)
        g++;
    const char *tf = cl_opt(run, "tflops"), *mem = cl_opt(run, "mem-gb");
    k->tflops = tf ? atof(tf) : g->peak_tflops * ACHIEVED;
    k->mem_GB = mem ? atof(mem) : g->mem_GB;
    if (!(k->tflops > 0) || !(k->mem_GB > 0)) {
        cl_set_error("no GPU facts for %s: give --tflops and --mem-gb", sys.name);
        return CL_ERR_UNSUPPORTED;
    }
    return CL_OK;
}

static void report_job(cl_run *run, const lab21_job *j)
{
    cl_report_int(run, "nodes", j->c.nodes);
    cl_report_int(run, "gpus_per_node", j->c.gpus_per_node);
    cl_report_num(run, "nvlink_GBps", j->c.nvlink_GBps);
    cl_report_num(run, "nic_GBps", j->c.nic_GBps);
    cl_report_num(run, "tflops", j->c.tflops);
    cl_report_num(run, "mem_GB", j->c.mem_GB);
    cl_report_int(run, "layers", j->m.layers);
    cl_report_int(run, "hidden", j->m.hidden);
    cl_report_int(run, "heads", j->m.heads);
    cl_report_int(run, "seq", j->m.seq);
    cl_report_int(run, "vocab", j->m.vocab);
    cl_report_int(run, "global_batch", j->m.global_batch);
    cl_report_int(run, "micro_batch", j->m.micro_batch);
}

static void cost_cols(cl_row *row, const char *prefix, const lab21_plan *p, const lab21_cost *c)
{
    char key[48], plan[96];
    snprintf(plan, sizeof plan, "tp=%d cp=%d pp=%d dp=%d order=%s", p->tp, p->cp, p->pp, p->dp,
             p->order);
#define COL(name, v)                                                                               \
    snprintf(key, sizeof key, "%s%s", prefix, name), cl_col_num(row, key, v, "%.6g")
    snprintf(key, sizeof key, "%splan", prefix);
    cl_col_str(row, key, plan);
    COL("step_s", c->step_s);
    COL("layer_s", c->layer_s);
    COL("tp_s", c->tp_s);
    COL("cp_s", c->cp_s);
    COL("pp_s", c->pp_s);
    COL("dp_s", c->dp_s);
    COL("mem_GB", c->mem_GB);
#undef COL
}

/* Every rank must have the same plan. */
static cl_result same_plan(cl_comm *world, const lab21_plan *p, int *same)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < sizeof *p; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    int64_t v[2] = {(int64_t)(h >> 1), -(int64_t)(h >> 1)};
    CL_CHECK(cl_agree(world, CL_MAX, v, 2));
    *same = v[0] == -v[1];
    return CL_OK;
}

/* The student's plan on the student's communicators: its cost (c->valid 0 with
 * the reason when it is not a plan, or its groups are not Megatron-LM's). */
static cl_result student_groups(cl_comm *world, const lab21_parallel *par, check_mem *m,
                                lab21_cost *c)
{
    CL_CHECK(lab21_ref_layout(cl_comm_size(world), par, &m->ref));
    cl_result status;
    char why[320];
    CL_CHECK(student_init(world, par, &status, why, sizeof why));
    if (status != CL_OK) {
        snprintf(c->why, sizeof c->why, "your lab21_init_parallel failed: %.100s", why);
        c->valid = 0;
        return CL_OK;
    }
    int kinds[4] = {LAB21_TP, LAB21_CP, LAB21_PP, LAB21_DP_CP}, bad = 0;
    for (int i = 0; i < 4; i++) {
        CL_CHECK(gather_kind(world, kinds[i], m->first, m->place));
        bad += mismatches(&m->ref, kinds[i], m->first, m->place, cl_comm_size(world));
    }
    if (bad) {
        snprintf(c->why, sizeof c->why, "%d rank(s) are in groups that are not Megatron-LM's", bad);
        c->valid = 0;
    }
    return CL_OK;
}

static cl_result student_step(cl_comm *world, const lab21_job *j, const lab21_plan *p, void *buf,
                              lab21_cost *c)
{
    lab21_cost_model(j, p, c);
    if (!c->valid)
        return CL_OK;
    lab21_parallel par = {.tp = p->tp, .cp = p->cp, .pp = p->pp, .ep = 1, .etp = p->tp};
    memcpy(par.order, p->order, sizeof par.order);
    check_mem *m = malloc(sizeof *m);
    if (!m)
        return CL_ERR_NOMEM;
    cl_result rc = student_groups(world, &par, m, c);
    free(m);
    CL_CHECK(rc);
    if (!c->valid)
        return CL_OK;
    int w = cl_comm_rank(world);
    lab21_step_comms s = {seen[w].comm[LAB21_TP], seen[w].comm[LAB21_CP], seen[w].comm[LAB21_PP],
                          seen[w].comm[LAB21_DP_CP]};
    return lab21_simulate(world, j, p, &s, buf, c);
}

/* A plan given with --plan, on the harness's own communicators. */
static cl_result given_step(cl_comm *world, const lab21_job *j, const lab21_plan *p, void *buf,
                            lab21_cost *c)
{
    lab21_cost_model(j, p, c);
    if (!c->valid)
        return CL_OK;
    static lab21_layout ref; /* read before any split lets another rank reuse it */
    lab21_parallel par = {.tp = p->tp, .cp = p->cp, .pp = p->pp, .ep = 1, .etp = p->tp};
    memcpy(par.order, p->order, sizeof par.order);
    CL_CHECK(lab21_ref_layout(cl_comm_size(world), &par, &ref));
    int r = cl_comm_rank(world), kinds[4] = {LAB21_TP, LAB21_CP, LAB21_PP, LAB21_DP_CP};
    int size[4] = {p->tp, p->cp, p->pp, p->dp * p->cp}, color[4], key[4];
    for (int i = 0; i < 4; i++)
        color[i] = ref.color[kinds[i]][r], key[i] = ref.key[kinds[i]][r];
    cl_comm *cm[4] = {NULL, NULL, NULL, NULL};
    cl_result rc = CL_OK;
    for (int i = 0; i < 4 && rc == CL_OK; i++)
        rc = cl_comm_split(world, size[i] > 1 ? color[i] : -1, key[i], &cm[i]);
    lab21_step_comms s = {cm[0], cm[1], cm[2], cm[3]};
    if (rc == CL_OK)
        rc = lab21_simulate(world, j, p, &s, buf, c);
    for (int i = 0; i < 4; i++)
        if (cm[i])
            cl_comm_free(cm[i]);
    return rc;
}

static cl_result plan_mode(cl_run *run, cl_comm *world)
{
    plan_args a;
    lab21_cost mine, best_cost;
    lab21_plan best;
    void *buf = NULL;
    cl_result rc = CL_OK;
    memset(&a, 0, sizeof a);
    memset(&mine, 0, sizeof mine);
    CL_CHECK(build_job(run, world, &a.j));
    report_job(run, &a.j);
    cl_row *row = cl_row_begin(run, world);
    const char *given = cl_opt(run, "plan");
    cl_call_result res = {.status = CL_OK};
    if (given) {
        snprintf(a.plan.order, sizeof a.plan.order, "tp-cp-ep-dp-pp");
        a.plan.tp = a.plan.cp = a.plan.pp = 1, a.plan.dp = 0;
        CL_CHECK(parse_config(given, NULL, &a.plan));
        if (a.plan.dp == 0 && a.plan.tp * a.plan.cp * a.plan.pp > 0)
            a.plan.dp = cl_comm_size(world) / (a.plan.tp * a.plan.cp * a.plan.pp);
    } else
        CL_CHECK(cl_student_run(world, "plan", &a, sizeof a, 0, &res));
    a.plan.order[LAB21_ORDER_LEN - 1] = '\0';
    int same = 1;
    CL_CHECK(same_plan(world, &a.plan, &same));
    CL_TRY(cl_mem_alloc(world, lab21_step_bytes(&a.j), &buf));
    if (res.status != CL_OK) {
        snprintf(mine.why, sizeof mine.why, "your lab21_plan_job failed: %.100s", res.error);
    } else if (!same) {
        snprintf(mine.why, sizeof mine.why, "your plan differs between ranks");
    } else if (given) {
        CL_TRY(given_step(world, &a.j, &a.plan, buf, &mine));
    } else {
        CL_TRY(student_step(world, &a.j, &a.plan, buf, &mine));
    }
    cl_col_str(row, "status", mine.valid ? "valid" : "invalid");
    if (!mine.valid)
        cl_col_str(row, "why", mine.why);
    cost_cols(row, "", &a.plan, &mine);
    cl_col_num(row, "micro_batches", mine.micro_batches, "%g");
    if (strcmp(cl_opt(run, "search"), "no") != 0) {
        int count;
        CL_TRY(lab21_search(world, &a.j, buf, &best, &best_cost, &count));
        cost_cols(row, "best_", &best, &best_cost);
        cl_col_int(row, "plans_tried", count);
    }
    cl_row_end(row);
done:
    if (buf)
        cl_mem_free(world, buf);
    return rc;
}

static const cl_mode modes[] = {
    {.name = "groups", .help = "your RankGenerator's groups for one token", .cases = groups_case},
    {.name = "comms",
     .help = "your communicators of each --config, as the harness reads them",
     .ranks = comms_mode},
    {.name = "plan",
     .help = "your plan's simulated step, and the best plan's",
     .ranks = plan_mode,
     .backends = "sim"},
    {0}};

static const cl_option options[] = {
    {.name = "config",
     .help = "\"tp=2 cp=1 pp=2 ep=2 etp=1 order=tp-cp-ep-dp-pp;...\"  comms: configurations",
     .fallback = "tp=2 cp=1 pp=2 ep=2 etp=1 order=tp-cp-ep-dp-pp"},
    {.name = "plan", .help = "\"tp=2 cp=1 pp=4 order=tp-cp-ep-dp-pp\"  plan: simulate this plan"},
    {.name = "search", .help = "yes|no  plan: also find the best plan", .fallback = "yes"},
    {.name = "layers", .help = "N  plan: the model's layers", .fallback = "40"},
    {.name = "hidden", .help = "N  plan: hidden size", .fallback = "5120"},
    {.name = "heads", .help = "N  plan: attention heads", .fallback = "40"},
    {.name = "seq", .help = "N  plan: sequence length", .fallback = "2048"},
    {.name = "vocab", .help = "N  plan: vocabulary", .fallback = "51200"},
    {.name = "batch", .help = "N  plan: global batch (sequences)", .fallback = "256"},
    {.name = "micro", .help = "N  plan: micro-batch (sequences)", .fallback = "1"},
    {.name = "tflops", .help = "X  plan: one GPU's achieved TFLOP/s (default: half the peak)"},
    {.name = "mem-gb", .help = "X  plan: one GPU's memory, GB"},
    {0}};

const cl_lab cl_lab_def = {
    .name = "lab21",
    .title = "Megatron 并行组划分",
    .modes = modes,
    .options = options,
    .lab_op = lab_op,
};

#endif
