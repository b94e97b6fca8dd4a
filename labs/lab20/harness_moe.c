/* harness_moe.c: mode moe: MoE layers planned by the student and dispatched with the student's
 * collectives, against every other way of moving the same tokens.
 *
 * For each layer (tokens per rank x popularity skew x drop budget) the harness
 * draws a routing afresh (every rank computes the same one from an agreed
 * seed), asks the student's lab20_moe_plan() on rank 0 for a plan (with the
 * times of the student's own AlltoAlls at two sizes, measured by the harness), checks its drops
 * against the budget, and times its dispatch (the student's AlltoAll or AlltoAllv, every output
 * checked). Then it times every layout and algorithm at the smallest capacity the budget allows,
 * with the same collectives: the best of them is what the plan is compared with. The other options'
 * times never reach the student's program.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab20_harness.h"
#include "sim/sim_system.h"

#define MAX_LIST 8

/* One layer: its shape and routing (the same on every rank). */
typedef struct layer {
    int p, local, nodes, experts, topk;
    long tokens;
    size_t token_bytes;
    double skew, budget;
    int32_t *counts; /* p * experts */
    size_t *sc;      /* p * p: elements rank s sends rank j, for the current capacity */
} layer;

/* --- lists of the options ------------------------------------------------------------------ */

static cl_result list(cl_run *run, const char *key, double *v, int *n, int whole)
{
    const char *s = cl_opt(run, key);
    char *end;
    *n = 0;
    while (s && *s) {
        if (*n == MAX_LIST) {
            cl_set_error("--%s: at most %d values", key, MAX_LIST);
            return CL_ERR_INVALID;
        }
        v[*n] = strtod(s, &end);
        if (end == s || (*end && *end != ',') || !(v[*n] >= 0) || !isfinite(v[*n]) ||
            (whole && (v[*n] < 1 || v[*n] != floor(v[*n])))) {
            cl_set_error("--%s wants a list of %s numbers, not '%s'", key,
                         whole ? "positive whole" : "non-negative", cl_opt(run, key));
            return CL_ERR_INVALID;
        }
        (*n)++;
        s = *end ? end + 1 : end;
    }
    if (*n == 0) {
        cl_set_error("--%s is empty", key);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

static cl_result whole(cl_run *run, const char *key, long lo, long hi, long *out)
{
    const char *s = cl_opt(run, key);
    char *end;
    *out = strtol(s ? s : "", &end, 10);
    if (!s || !*s || *end || *out < lo || *out > hi) {
        cl_set_error("--%s wants a whole number from %ld to %ld, not '%s'", key, lo, hi,
                     s ? s : "");
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

/* --- the routing ----------------------------------------------------------------------------- */

static double unit(uint64_t seed, uint64_t i)
{
    return (double)(cl_data_hash(seed ^ cl_data_hash(i)) >> 11) * 0x1p-53;
}

/* Experts' popularity follows Zipf's law with exponent skew over a random
 * order; each token picks topk distinct experts by popularity. */
static cl_result route(layer *L, uint64_t seed)
{
    /* On "sim" every rank runs in this process: draw each routing once. */
    static uint64_t cached_seed;
    static int32_t *cached;
    static size_t cached_n;
    size_t n = (size_t)L->p * L->experts;
    if (cached && cached_seed == seed && cached_n == n) {
        memcpy(L->counts, cached, n * sizeof *cached);
        return CL_OK;
    }
    int E = L->experts;
    double *cdf = malloc((size_t)E * sizeof *cdf);
    int *order = malloc((size_t)E * sizeof *order);
    if (!cdf || !order) {
        free(cdf);
        free(order);
        return CL_ERR_NOMEM;
    }
    for (int e = 0; e < E; e++)
        order[e] = e;
    for (int e = E - 1; e > 0; e--) { /* Fisher-Yates */
        int j = (int)(unit(seed, (uint64_t)e) * (e + 1));
        int x = order[e];
        order[e] = order[j];
        order[j] = x;
    }
    double sum = 0;
    for (int e = 0; e < E; e++) {
        sum += pow(1.0 + order[e], -L->skew);
        cdf[e] = sum;
    }
    memset(L->counts, 0, (size_t)L->p * E * sizeof *L->counts);
    uint64_t draw = 1u << 20;
    for (int s = 0; s < L->p; s++)
        for (long tok = 0; tok < L->tokens; tok++) {
            int chosen[16], k = 0;
            while (k < L->topk) {
                double u = unit(seed, draw++) * sum;
                int lo = 0, hi = E - 1;
                while (lo < hi) {
                    int mid = (lo + hi) / 2;
                    if (cdf[mid] < u)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                int dup = 0;
                for (int i = 0; i < k; i++)
                    dup |= chosen[i] == lo;
                if (!dup)
                    chosen[k++] = lo;
            }
            for (int i = 0; i < k; i++)
                L->counts[(long)s * E + chosen[i]]++;
        }
    free(cdf);
    free(order);
    int32_t *keep = realloc(cached, n * sizeof *cached);
    if (keep) {
        cached = keep;
        cached_seed = seed;
        cached_n = n;
        memcpy(cached, L->counts, n * sizeof *cached);
    }
    return CL_OK;
}

static long dropped_at(const layer *L, long cap)
{
    long d = 0;
    for (long i = 0; i < (long)L->p * L->experts; i++)
        if (L->counts[i] > cap)
            d += L->counts[i] - cap;
    return d;
}

static long allowed(const layer *L)
{
    return (long)floor(L->budget * (double)L->p * (double)L->tokens * L->topk);
}

/* The smallest capacity whose drops fit the budget (at least 1). */
static long least_capacity(const layer *L)
{
    long lo = 1, hi = 1;
    for (long i = 0; i < (long)L->p * L->experts; i++)
        if (L->counts[i] > hi)
            hi = L->counts[i];
    while (lo < hi) {
        long mid = (lo + hi) / 2;
        if (dropped_at(L, mid) <= allowed(L))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Elements rank s sends rank j when every expert keeps at most cap tokens of each rank. */
static void kept(layer *L, long cap)
{
    int per = L->experts / L->p;
    size_t h = L->token_bytes / 4;
    for (int s = 0; s < L->p; s++)
        for (int j = 0; j < L->p; j++) {
            long n = 0;
            for (int e = j * per; e < (j + 1) * per; e++) {
                long cnt = L->counts[(long)s * L->experts + e];
                n += cnt < cap ? cnt : cap;
            }
            L->sc[(size_t)s * L->p + j] = (size_t)n * h;
        }
}

static const size_t *sendcounts_of(int rank, void *ctx)
{
    const layer *L = ctx;
    return L->sc + (size_t)rank * L->p;
}

/* --- one dispatch -------------------------------------------------------------------------------
 */

typedef struct outcome {
    call_out call;
    int64_t bad[3];
} outcome;

/* The dispatch of layout/algo at capacity cap with the student's collectives, checked. */
static cl_result dispatch(cl_run *run, cl_comm *c, layer *L, int layout, int algo, long cap,
                          outcome *o)
{
    int p = L->p, r = cl_comm_rank(c);
    size_t h = L->token_bytes / 4,
           extra = layout == LAB20_EXACT ? 4 * (size_t)p * sizeof(size_t) : 0;
    size_t v[4 * 256];
    a2a data, cnt = {0};
    memset(o, 0, sizeof *o);
    memset(&data, 0, sizeof data);
    cl_result rc;
    if (layout == LAB20_PADDED) {
        rc = lab20_a2a_open(c, &data, (size_t)p * (size_t)(L->experts / p) * (size_t)cap * h,
                            CL_FLOAT32);
    } else {
        kept(L, cap);
        size_t sd = 0, rd = 0;
        for (int j = 0; j < p; j++) {
            v[j] = L->sc[(size_t)r * p + j];
            v[p + j] = sd;
            v[2 * p + j] = L->sc[(size_t)j * p + r];
            v[3 * p + j] = rd;
            sd += v[j];
            rd += v[2 * p + j];
        }
        rc = lab20_a2av_open(c, &data, v, CL_FLOAT32, sendcounts_of, L);
        if (rc == CL_OK)
            rc = lab20_a2a_open(c, &cnt, (size_t)p, CL_INT64);
    }
    if (rc == CL_OK)
        rc = lab20_a2a_fill(run, c, &data);
    if (rc == CL_OK && layout == LAB20_EXACT)
        rc = lab20_a2a_fill(run, c, &cnt);
    char *block = calloc(1, sizeof(dispatch_args) + extra);
    if (rc == CL_OK && !block)
        rc = CL_ERR_NOMEM;
    if (rc == CL_OK) {
        dispatch_args *d = (dispatch_args *)block;
        lab20_coll_args(&data, &d->a);
        d->layout = layout;
        d->algo = algo;
        d->local = L->local;
        d->cnt_send = cnt.send;
        d->cnt_recv = cnt.recv;
        const char *home = cl_student_args_home(c);
        if (extra && home) {
            memcpy(block + sizeof *d, v, extra);
            const size_t *at = (const size_t *)(home + sizeof *d);
            d->a.sendcounts = at;
            d->a.sdispls = at + p;
            d->a.recvcounts = at + 2 * p;
            d->a.rdispls = at + 3 * p;
        }
        rc = lab20_call(c, "dispatch", block, sizeof *d + extra,
                        CL_ALLOW_COLLECTIVE | CL_CALL_UNTRACED, &o->call);
    }
    if (rc == CL_OK && o->call.status == CL_OK) {
        rc = lab20_a2a_check(c, &data, o->bad);
        if (rc == CL_OK && layout == LAB20_EXACT) {
            int64_t b2[3];
            rc = lab20_a2a_check(c, &cnt, b2);
            for (int i = 0; i < 3; i++)
                o->bad[i] += b2[i];
        }
    }
    free(block);
    lab20_a2a_close(c, &data);
    lab20_a2a_close(c, &cnt);
    return rc;
}

/* --- the machine, as the student's own collectives see it
 * ----------------------------------------- */

typedef struct calib {
    size_t bytes[2];
    double pairwise[2], hier[2];
} calib;

#define CALIB_SMALL ((size_t)64 << 10)
#define CALIB_LARGE ((size_t)16 << 20)

/* One uniform AlltoAll of `bytes` per rank by the student's pairwise or
 * two-level code, checked; its time (slowest rank), or a failure with why. */
static cl_result timed(cl_run *run, cl_comm *c, int local, int hier, size_t bytes, double *t,
                       char *why, size_t len)
{
    int p = cl_comm_size(c);
    a2a b;
    outcome o = {0};
    size_t count = bytes / 4 / (size_t)p * (size_t)p;
    cl_result rc = lab20_a2a_open(c, &b, count ? count : (size_t)p, CL_FLOAT32);
    if (rc == CL_OK)
        rc = lab20_a2a_fill(run, c, &b);
    if (rc == CL_OK) {
        hier_args h = {.local = local};
        lab20_coll_args(&b, &h.a);
        rc = lab20_call(c, hier ? "hier" : "alltoall", &h, hier ? sizeof h : sizeof h.a,
                        CL_ALLOW_COLLECTIVE | CL_CALL_UNTRACED, &o.call);
    }
    if (rc == CL_OK && o.call.status == CL_OK)
        rc = lab20_a2a_check(c, &b, o.bad);
    lab20_a2a_close(c, &b);
    CL_CHECK(rc);
    *t = o.call.seconds;
    const char *name = hier ? "two-level" : "pairwise";
    if (o.call.status != CL_OK)
        snprintf(why, len, "your %s AlltoAll failed while the harness timed it: %s", name,
                 o.call.error);
    else if (o.call.forbidden[0])
        snprintf(why, len, "your %s AlltoAll used %s", name, o.call.forbidden);
    else if (o.bad[0] || o.bad[1] || o.bad[2])
        snprintf(why, len,
                 "your %s AlltoAll moved wrong data (%lld wrong, %lld past the end, "
                 "%lld input changed)",
                 name, (long long)o.bad[0], (long long)o.bad[1], (long long)o.bad[2]);
    else
        return CL_OK;
    return CL_ERR_MISMATCH;
}

static cl_result calibrate(cl_run *run, cl_comm *c, int local, calib *k)
{
    int sim = cl_comm_on_sim(c), reps = sim ? 1 : 3;
    int two = local > 1 && cl_comm_size(c) > local;
    char why[512] = "";
    memset(k, 0, sizeof *k);
    k->bytes[0] = CALIB_SMALL;
    k->bytes[1] = CALIB_LARGE;
    for (int i = 0; i < 2; i++)
        for (int h = 0; h <= two; h++) {
            double s[3];
            for (int j = 0; j < reps; j++) {
                cl_result rc = timed(run, c, local, h, k->bytes[i], &s[j], why, sizeof why);
                if (rc == CL_ERR_MISMATCH) {
                    cl_set_error("%s", why);
                    return rc;
                }
                CL_CHECK(rc);
            }
            (h ? k->hier : k->pairwise)[i] = cl_median(s, (size_t)reps);
        }
    return CL_OK;
}

/* --- one layer
 * ------------------------------------------------------------------------------------- */

static const char *way(int layout, int algo)
{
    return layout == LAB20_EXACT ? "exact" : algo == LAB20_HIER ? "padded-hier" : "padded-pairwise";
}

static void bad_columns(cl_row *row, const outcome *o)
{
    cl_col_int(row, "#wrong", (long long)o->bad[0]);
    cl_col_int(row, "overrun", (long long)o->bad[1]);
    cl_col_int(row, "input_changed", (long long)o->bad[2]);
    cl_col_str(row, "forbidden", o->call.forbidden[0] ? o->call.forbidden : "-");
}

/* The student's plan on rank 0, shared with every rank: CL_OK with the plan, or
 * the plan's failure in why. */
static cl_result ask_plan(cl_comm *c, const layer *L, const calib *k, lab20_plan *plan,
                          cl_result *status, char *why, size_t len)
{
    int64_t v[4] = {0, 0, 0, 0};
    if (cl_comm_rank(c) == 0) {
        plan_args *pa = calloc(1, sizeof *pa);
        if (!pa)
            return CL_ERR_NOMEM;
        pa->m = (lab20_moe){.p = L->p,
                            .local = L->local,
                            .nodes = L->nodes,
                            .experts = L->experts,
                            .topk = L->topk,
                            .tokens = L->tokens,
                            .token_bytes = L->token_bytes,
                            .drop_budget = L->budget};
        for (int i = 0; i < 2; i++) {
            pa->m.calib_bytes[i] = k->bytes[i];
            pa->m.pairwise_s[i] = k->pairwise[i];
            pa->m.hier_s[i] = k->hier[i];
        }
        memcpy(pa->counts, L->counts, (size_t)L->p * L->experts * sizeof *L->counts);
        pa->plan.capacity_factor = -1;
        pa->plan.layout = (lab20_layout)-1;
        pa->plan.algo = (lab20_algo)-1;
        cl_call_result res;
        cl_result rc = cl_student_run(c, "plan", pa, sizeof *pa, 0, &res);
        if (rc != CL_OK) {
            free(pa);
            return rc;
        }
        memcpy(&v[0], &pa->plan.capacity_factor, sizeof(double));
        v[1] = pa->plan.layout;
        v[2] = pa->plan.algo;
        v[3] = res.status != CL_OK ? res.status : res.forbidden[0] ? CL_ERR_FORBIDDEN : CL_OK;
        if (res.status != CL_OK)
            snprintf(why, len, "%s", res.error);
        else if (res.forbidden[0])
            snprintf(why, len, "lab20_moe_plan() is a pure function; it called %s", res.forbidden);
        free(pa);
    }
    CL_CHECK(cl_agree(c, CL_SUM, v, 4));
    memcpy(&plan->capacity_factor, &v[0], sizeof(double));
    plan->layout = (lab20_layout)v[1];
    plan->algo = (lab20_algo)v[2];
    *status = (cl_result)v[3];
    if (*status == CL_OK && !(plan->capacity_factor > 0 && isfinite(plan->capacity_factor))) {
        snprintf(why, len, "capacity_factor %g: a positive finite number, please",
                 plan->capacity_factor);
        *status = CL_ERR_INVALID;
    } else if (*status == CL_OK &&
               (plan->layout > LAB20_EXACT || plan->layout < LAB20_PADDED ||
                plan->algo > LAB20_HIER || plan->algo < LAB20_PAIRWISE ||
                (plan->layout == LAB20_EXACT && plan->algo != LAB20_PAIRWISE))) {
        snprintf(why, len, "layout %d with algo %d is not a way lab20.h lists", plan->layout,
                 plan->algo);
        *status = CL_ERR_INVALID;
    }
    if (*status != CL_OK && !why[0])
        snprintf(why, len, "failed on rank 0");
    return CL_OK;
}

static cl_result one_layer(cl_run *run, cl_comm *c, layer *L, const calib *k)
{
    uint64_t seed;
    CL_CHECK(cl_fresh_seed(run, c, &seed));
    CL_CHECK(route(L, seed));
    long least = least_capacity(L), assignments = (long)L->p * L->tokens * L->topk;
    double mean = (double)L->tokens * L->topk / L->experts;
    lab20_plan plan;
    cl_result status;
    char why[440] = "";
    CL_CHECK(ask_plan(c, L, k, &plan, &status, why, sizeof why));
    cl_row *row = cl_row_begin(run, c);
    cl_col_int(row, "tokens", L->tokens);
    cl_col_num(row, "skew", L->skew, "%.2f");
    cl_col_num(row, "budget", L->budget, "%.4f");
    cl_col_int(row, "bytes", (long long)((size_t)L->tokens * L->topk * L->token_bytes));
    cl_col_int(row, "least_capacity", least);
    long cap = 0;
    outcome mine = {0};
    if (status == CL_OK) {
        double want = ceil(plan.capacity_factor * mean - 1e-9);
        cap = want > 1e9 ? 1000000000L : (long)want;
        long d = dropped_at(L, cap);
        cl_col_num(row, "capacity_factor", plan.capacity_factor, "%.4f");
        cl_col_int(row, "capacity", cap);
        cl_col_num(row, "dropped", (double)d / (double)assignments, "%.5f");
        cl_col_str(row, "plan", way(plan.layout, plan.algo));
        if (d > allowed(L)) {
            snprintf(why, sizeof why,
                     "capacity %ld drops %.3f%% of the tokens, over the budget "
                     "of %.3f%%",
                     cap, 100.0 * d / assignments, 100 * L->budget);
            status = CL_ERR_INVALID;
        } else if (cap > 16 * least + 64) {
            snprintf(why, sizeof why,
                     "capacity %ld: far beyond what the budget needs (%ld); "
                     "the padding alone would swamp the fabric",
                     cap, least);
            status = CL_ERR_INVALID;
        }
    }
    if (status == CL_OK) {
        CL_CHECK(dispatch(run, c, L, plan.layout, plan.algo, cap, &mine));
        status = mine.call.status;
        if (status != CL_OK)
            snprintf(why, sizeof why, "%s", mine.call.error);
    }
    /* Every way at the least capacity. */
    static const int ways[3][2] = {
        {LAB20_PADDED, LAB20_PAIRWISE}, {LAB20_PADDED, LAB20_HIER}, {LAB20_EXACT, LAB20_PAIRWISE}};
    double best = INFINITY, t[3] = {NAN, NAN, NAN};
    int bestw = -1;
    outcome worst = {0};
    for (int w = 0; w < 3 && status == CL_OK; w++) {
        if (ways[w][1] == LAB20_HIER && (L->local < 2 || L->nodes < 2))
            continue;
        outcome o;
        CL_CHECK(dispatch(run, c, L, ways[w][0], ways[w][1], least, &o));
        if (o.call.status != CL_OK) {
            status = o.call.status;
            snprintf(why, sizeof why, "%s (dispatching %s)", o.call.error,
                     way(ways[w][0], ways[w][1]));
        }
        for (int i = 0; i < 3; i++)
            worst.bad[i] += o.bad[i];
        if (!worst.call.forbidden[0] && o.call.forbidden[0])
            snprintf(worst.call.forbidden, sizeof worst.call.forbidden, "%s", o.call.forbidden);
        t[w] = o.call.seconds;
        if (t[w] < best)
            best = t[w], bestw = w;
    }
    for (int i = 0; i < 3; i++)
        mine.bad[i] += worst.bad[i];
    if (!mine.call.forbidden[0])
        snprintf(mine.call.forbidden, sizeof mine.call.forbidden, "%s", worst.call.forbidden);
    cl_col_str(row, "status", cl_result_str(status));
    if (status == CL_OK) {
        cl_col_num(row, "time", mine.call.seconds * 1e6, "%.2f");
        cl_col_num(row, "padded_pairwise_time", t[0] * 1e6, "%.2f");
        if (!isnan(t[1]))
            cl_col_num(row, "padded_hier_time", t[1] * 1e6, "%.2f");
        cl_col_num(row, "exact_time", t[2] * 1e6, "%.2f");
        cl_col_str(row, "best", way(ways[bestw][0], ways[bestw][1]));
        cl_col_num(row, "best_time", best * 1e6, "%.2f");
        cl_col_num(row, "ratio", mine.call.seconds > 0 ? best / mine.call.seconds : 0, "%.4f");
    }
    bad_columns(row, &mine);
    if (status != CL_OK)
        cl_col_str(row, "error", why);
    cl_row_end(row);
    return CL_OK;
}

cl_result lab20_moe_mode(cl_run *run, cl_comm *c)
{
    double tokens[MAX_LIST], skew[MAX_LIST], budget[MAX_LIST];
    int nt, ns, nb, local;
    long experts, topk;
    size_t token_bytes;
    CL_CHECK(list(run, "tokens", tokens, &nt, 1));
    CL_CHECK(list(run, "skew", skew, &ns, 0));
    CL_CHECK(list(run, "budget", budget, &nb, 0));
    CL_CHECK(whole(run, "experts", 0, LAB20_MAX_COUNTS, &experts));
    CL_CHECK(whole(run, "topk", 1, 16, &topk));
    CL_CHECK(cl_parse_size(cl_opt(run, "token-bytes"), &token_bytes));
    CL_CHECK(lab20_local(run, c, &local));
    int p = cl_comm_size(c);
    if (experts == 0)
        experts = 2L * p;
    if (p > 256 || experts % p || (long)p * experts > LAB20_MAX_COUNTS || topk > experts ||
        token_bytes == 0 || token_bytes % 4) {
        cl_set_error("moe: %d ranks and %ld experts (a multiple of the ranks, ranks x experts <= "
                     "%d, at most 256 ranks), top-%ld, %zu-byte tokens (a multiple of 4)",
                     p, experts, LAB20_MAX_COUNTS, topk, token_bytes);
        return CL_ERR_INVALID;
    }
    for (int i = 0; i < nb; i++)
        if (budget[i] >= 1) {
            cl_set_error("--budget: fractions below 1, not %g", budget[i]);
            return CL_ERR_INVALID;
        }
    calib k;
    CL_CHECK(calibrate(run, c, local, &k));
    cl_report_int(run, "local", local);
    cl_report_int(run, "experts", experts);
    cl_report_int(run, "topk", topk);
    cl_report_int(run, "token_bytes", (long long)token_bytes);
    for (int i = 0; i < 2; i++) {
        char key[48];
        snprintf(key, sizeof key, "calib_%zu_pairwise_us", k.bytes[i]);
        cl_report_num(run, key, k.pairwise[i] * 1e6);
        snprintf(key, sizeof key, "calib_%zu_hier_us", k.bytes[i]);
        cl_report_num(run, key, k.hier[i] * 1e6);
    }
    cl_report_str(run, "units", "times in us; bytes: tokens x topk x token bytes per rank");
    layer L = {.p = p,
               .local = local,
               .nodes = p / local,
               .experts = (int)experts,
               .topk = (int)topk,
               .token_bytes = token_bytes};
    L.counts = malloc((size_t)p * experts * sizeof *L.counts);
    L.sc = malloc((size_t)p * p * sizeof *L.sc);
    cl_result rc = L.counts && L.sc ? CL_OK : CL_ERR_NOMEM;
    for (int i = 0; i < nt && rc == CL_OK; i++)
        for (int j = 0; j < ns && rc == CL_OK; j++)
            for (int q = 0; q < nb && rc == CL_OK; q++) {
                L.tokens = (long)tokens[i];
                L.skew = skew[j];
                L.budget = budget[q];
                rc = one_layer(run, c, &L, &k);
            }
    free(L.counts);
    free(L.sc);
    return rc;
}
