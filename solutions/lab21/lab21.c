/* lab21.c: lab 21, Megatron-LM's parallel groups: the rank generator, the communicators, a plan.
 *
 * You write the rank generator of Megatron-LM (RankGenerator and
 * generate_masked_orthogonal_rank_groups), the communicators that
 * initialize_model_parallel builds from it, with cl_comm_split, and the choice
 * of sizes and order for a model on a cluster. Read labs/lab21/README.md
 * first; the TODOs below follow its sections. Build with `make lab21`, grade
 * with `./grade lab21`.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab21.h"

/* BEGIN SOLUTION */
static const char *const names[LAB21_DIMS] = {"tp", "cp", "ep", "dp", "pp"};

static int name_index(const char *t)
{
    for (int d = 0; d < LAB21_DIMS; d++)
        if (strcmp(t, names[d]) == 0)
            return d;
    return -1;
}
/* END SOLUTION */

cl_result lab21_generator_init(lab21_generator *g, const lab21_sizes *s, const char *order)
{
    /* BEGIN SOLUTION */
    int size[LAB21_DIMS] = {s->tp, s->cp, s->ep, s->dp, s->pp}, seen[LAB21_DIMS] = {0};
    char buf[LAB21_ORDER_LEN];
    if (strlen(order) >= sizeof buf) {
        cl_set_error("order '%s' is too long", order);
        return CL_ERR_INVALID;
    }
    long world = 1;
    for (int d = 0; d < LAB21_DIMS; d++) {
        if (size[d] < 1 || (world *= size[d]) > LAB21_MAX_WORLD) {
            cl_set_error("%s = %d: sizes are 1 or more, %d ranks at most", names[d], size[d],
                         LAB21_MAX_WORLD);
            return CL_ERR_INVALID;
        }
    }
    if (s->ep > 1 && s->cp > 1) {
        cl_set_error("ep = %d and cp = %d: one generator has one of them only", s->ep, s->cp);
        return CL_ERR_INVALID;
    }
    for (size_t i = 0; i <= strlen(order); i++)
        buf[i] = (char)tolower((unsigned char)order[i]);
    g->ndims = 0;
    for (char *t = buf, *end;; t = end + 1) { /* "tp--dp" holds an empty name: unknown */
        end = strchr(t, '-');
        if (end)
            *end = '\0';
        int d = name_index(t);
        if (d < 0 || seen[d]) {
            cl_set_error("order '%s': '%s' is not one of tp, cp, ep, dp, pp, or comes twice", order,
                         t);
            return CL_ERR_INVALID;
        }
        seen[d] = 1;
        snprintf(g->name[g->ndims], sizeof g->name[0], "%s", names[d]);
        g->size[g->ndims++] = size[d];
        if (!end)
            break;
    }
    static const int append[LAB21_DIMS] = {0, 4, 3, 2, 1}; /* tp, pp, dp, ep, cp */
    for (int a = 0; a < LAB21_DIMS; a++) { /* the kinds the order leaves out go last */
        int d = append[a];
        if (!seen[d]) {
            if (size[d] != 1) {
                cl_set_error("%s has size %d but is not in the order '%s'", names[d], size[d],
                             order);
                return CL_ERR_INVALID;
            }
            snprintf(g->name[g->ndims], sizeof g->name[0], "%s", names[d]);
            g->size[g->ndims++] = 1;
        }
    }
    g->world = (int)world;
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab21) 1: RankGenerator.__init__ (section 1 of the handout): the order's kinds,
    // the missing ones appended, their sizes, and every refusal listed in lab21.h.
    (void)g, (void)s, (void)order;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab21_get_ranks(const lab21_generator *g, const char *token, int *groups, size_t cap,
                          int *ngroups, int *gsize)
{
    /* BEGIN SOLUTION */
    int mask[LAB21_DIMS] = {0};
    char buf[LAB21_ORDER_LEN];
    if (strlen(token) >= sizeof buf) {
        cl_set_error("token '%s' is too long", token);
        return CL_ERR_INVALID;
    }
    snprintf(buf, sizeof buf, "%s", token);
    /* split by hand: "tp--dp" or "-" hold an empty name, which is unknown */
    for (char *t = buf, *end;; t = end + 1) {
        end = strchr(t, '-');
        if (end)
            *end = '\0';
        int i = 0;
        while (i < g->ndims && strcmp(t, g->name[i]) != 0)
            i++;
        if (i == g->ndims) {
            cl_set_error("token '%s': '%s' is not a kind of the generator", token, t);
            return CL_ERR_INVALID;
        }
        mask[i] = 1;
        if (!end)
            break;
    }
    /* A rank is the mixed-radix number of its indices, the order's first kind
     * fastest. A group holds the ranks that differ only in the masked kinds. */
    int in_size = 1;
    for (int i = 0; i < g->ndims; i++)
        if (mask[i])
            in_size *= g->size[i];
    int count = g->world / in_size;
    if ((size_t)g->world > cap) {
        cl_set_error("%d ranks do not fit in %zu", g->world, cap);
        return CL_ERR_INVALID;
    }
    for (int grp = 0; grp < count; grp++)
        for (int k = 0; k < in_size; k++) {
            int rank = 0, stride = 1, gi = grp, ki = k;
            for (int i = 0; i < g->ndims; i++) {
                int digit;
                if (mask[i])
                    digit = ki % g->size[i], ki /= g->size[i];
                else
                    digit = gi % g->size[i], gi /= g->size[i];
                rank += digit * stride;
                stride *= g->size[i];
            }
            groups[grp * in_size + k] = rank;
        }
    *ngroups = count;
    *gsize = in_size;
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab21) 2: RankGenerator.get_ranks (section 2): the mask of the token's kinds, then
    // generate_masked_orthogonal_rank_groups: every group, its ranks in Megatron-LM's order.
    (void)g, (void)token, (void)groups, (void)cap, (void)ngroups, (void)gsize;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* BEGIN SOLUTION */
/* This rank's group of token under g: its index (color) and this rank's place (key). */
static cl_result place_of(const lab21_generator *g, const char *token, int rank, int *color,
                          int *key)
{
    static int groups[LAB21_MAX_WORLD]; /* no communication while it is used */
    int n, size;
    CL_CHECK(lab21_get_ranks(g, token, groups, LAB21_MAX_WORLD, &n, &size));
    for (int i = 0; i < n * size; i++)
        if (groups[i] == rank) {
            *color = i / size, *key = i % size;
            return CL_OK;
        }
    cl_set_error("rank %d is in no %s group", rank, token);
    return CL_ERR_INVALID;
}
/* END SOLUTION */

cl_result lab21_init_parallel(cl_comm *world, const lab21_parallel *p, lab21_comms *out)
{
    /* BEGIN SOLUTION */
    int n = cl_comm_size(world), r = cl_comm_rank(world);
    if (p->tp < 1 || p->cp < 1 || p->pp < 1 || p->ep < 1 || p->etp < 1 ||
        n % (p->tp * p->cp * p->pp) || n % (p->etp * p->ep * p->pp)) {
        cl_set_error("%d ranks: not a multiple of tp x cp x pp or of etp x ep x pp", n);
        return CL_ERR_INVALID;
    }
    int dp = n / (p->tp * p->cp * p->pp), edp = n / (p->etp * p->ep * p->pp);
    lab21_generator dec, exp;
    lab21_sizes ds = {.tp = p->tp, .cp = p->cp, .ep = 1, .dp = dp, .pp = p->pp};
    lab21_sizes es = {.tp = p->etp, .cp = 1, .ep = p->ep, .dp = edp, .pp = p->pp};
    CL_CHECK(lab21_generator_init(&dec, &ds, p->order));
    CL_CHECK(lab21_generator_init(&exp, &es, p->order));
    size_t len = strlen(p->order);
    int pp_last = len >= 2 && tolower((unsigned char)p->order[len - 2]) == 'p' &&
                  tolower((unsigned char)p->order[len - 1]) == 'p';
    if (!pp_last && p->pp > 1 && edp != dp) {
        cl_set_error("pp is not last and the expert data-parallel size %d is not dp = %d", edp, dp);
        return CL_ERR_INVALID;
    }
    /* the decoder's and the expert generator's pipelines must be the same */
    int color[LAB21_KINDS], key[LAB21_KINDS], c2, k2;
    for (int q = 0; q < n; q++) {
        CL_CHECK(place_of(&dec, "pp", q, &color[0], &key[0]));
        CL_CHECK(place_of(&exp, "pp", q, &c2, &k2));
        if (c2 != color[0] || k2 != key[0]) {
            cl_set_error("the decoder's and the expert generator's pp groups differ");
            return CL_ERR_INVALID;
        }
    }
    static const char *const dec_tokens[] = {"tp", "cp",    "dp",    "dp-cp",
                                             "pp", "tp-pp", "tp-cp", "tp-dp-cp"};
    for (int k = 0; k < 8; k++)
        CL_CHECK(place_of(&dec, dec_tokens[k], r, &color[k], &key[k]));
    CL_CHECK(place_of(&exp, "ep", r, &color[LAB21_EP], &key[LAB21_EP]));
    CL_CHECK(place_of(&exp, "tp", r, &color[LAB21_ETP], &key[LAB21_ETP]));
    CL_CHECK(place_of(&exp, "dp", r, &color[LAB21_EDP], &key[LAB21_EDP]));
    /* the embedding group: the first and the last stage of this rank's pipeline */
    int stage = key[LAB21_PP];
    color[LAB21_EMBD] = stage == 0 || stage == p->pp - 1 ? color[LAB21_PP] : -1;
    key[LAB21_EMBD] = stage == 0 ? 0 : 1;
    for (int k = 0; k < LAB21_KINDS; k++)
        CL_CHECK(cl_comm_split(world, color[k], key[k], &out->c[k]));
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab21) 3: initialize_model_parallel (section 3): the decoder and the expert
    // generators, Megatron-LM's refusals, then one cl_comm_split per kind on every rank.
    (void)world, (void)p, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* BEGIN SOLUTION */
/* --- the step model, predicted --------------------------------------------------------------- */

enum { RING_AR, RING_RS, RING_AG, SEND_NEXT };

/* One collective of `bytes` on every group of token at once (a ring in each
 * group's order; SEND_NEXT: every member sends `bytes` to the next one): the
 * slowest step's time, the NICs shared by the flows that cross nodes. */
static double comm_time(const lab21_cluster *c, const lab21_generator *g, const char *token,
                        int kind, double bytes)
{
    static int groups[LAB21_MAX_WORLD], out_load[LAB21_MAX_WORLD], in_load[LAB21_MAX_WORLD];
    int n, k, per = c->gpus_per_node, nics = c->nics_per_node;
    if (lab21_get_ranks(g, token, groups, LAB21_MAX_WORLD, &n, &k) != CL_OK || k <= 1)
        return 0;
    int world = n * k;
    for (int i = 0; i < world; i++)
        out_load[i] = in_load[i] = 0;
    /* a flow between nodes leaves by the receiver's rail NIC of the sender's node (PXN) */
    for (int grp = 0; grp < n; grp++)
        for (int i = 0; i < k; i++) {
            int u = groups[grp * k + i], v = groups[grp * k + (i + 1) % k];
            if (kind == SEND_NEXT && i == k - 1)
                continue;
            if (u / per != v / per) {
                int rail = (v % per) * nics / per;
                out_load[(u / per) * nics + rail]++;
                in_load[(v / per) * nics + rail]++;
            }
        }
    double chunk = kind == SEND_NEXT ? bytes : bytes / k, worst = 0;
    for (int grp = 0; grp < n; grp++)
        for (int i = 0; i < k; i++) {
            int u = groups[grp * k + i], v = groups[grp * k + (i + 1) % k];
            if (kind == SEND_NEXT && i == k - 1)
                continue;
            double t;
            if (u / per == v / per) {
                t = c->nvl_lat_us * 1e-6 + chunk / (c->nvlink_GBps * 1e9);
            } else {
                int rail = (v % per) * nics / per;
                int load = out_load[(u / per) * nics + rail];
                if (in_load[(v / per) * nics + rail] > load)
                    load = in_load[(v / per) * nics + rail];
                t = c->net_lat_us * 1e-6 + chunk * load / (c->nic_GBps * 1e9);
            }
            if (t > worst)
                worst = t;
        }
    double reduce = 3 * chunk / (c->hbm_GBps * 1e9), copy = 2 * chunk / (c->hbm_GBps * 1e9);
    switch (kind) {
    case RING_AR: return 2.0 * (k - 1) * worst + (k - 1) * reduce;
    case RING_RS: return (k - 1) * (worst + reduce);
    case RING_AG: return (k - 1) * worst + copy;
    default: return worst;
    }
}

/* Megatron-LM's refusals of p on n ranks (lab21_init_parallel's checks). */
static cl_result check_parallel(int n, const lab21_parallel *p, lab21_generator *dec,
                                lab21_generator *exp)
{
    if (p->tp < 1 || p->cp < 1 || p->pp < 1 || p->ep < 1 || p->etp < 1 ||
        n % (p->tp * p->cp * p->pp) || n % (p->etp * p->ep * p->pp)) {
        cl_set_error("%d ranks: not a multiple of tp x cp x pp or of etp x ep x pp", n);
        return CL_ERR_INVALID;
    }
    int dp = n / (p->tp * p->cp * p->pp), edp = n / (p->etp * p->ep * p->pp);
    lab21_sizes ds = {.tp = p->tp, .cp = p->cp, .ep = 1, .dp = dp, .pp = p->pp};
    lab21_sizes es = {.tp = p->etp, .cp = 1, .ep = p->ep, .dp = edp, .pp = p->pp};
    CL_CHECK(lab21_generator_init(dec, &ds, p->order));
    CL_CHECK(lab21_generator_init(exp, &es, p->order));
    size_t len = strlen(p->order);
    int pp_last = len >= 2 && tolower((unsigned char)p->order[len - 2]) == 'p' &&
                  tolower((unsigned char)p->order[len - 1]) == 'p';
    if (!pp_last && p->pp > 1 && edp != dp) {
        cl_set_error("pp is not last and the expert data-parallel size %d is not dp = %d", edp, dp);
        return CL_ERR_INVALID;
    }
    static int a[LAB21_MAX_WORLD], b[LAB21_MAX_WORLD];
    int na, ka, nb, kb;
    CL_CHECK(lab21_get_ranks(dec, "pp", a, LAB21_MAX_WORLD, &na, &ka));
    CL_CHECK(lab21_get_ranks(exp, "pp", b, LAB21_MAX_WORLD, &nb, &kb));
    if (memcmp(a, b, (size_t)n * sizeof a[0]) != 0) {
        cl_set_error("the decoder's and the expert generator's pp groups differ");
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

/* The handout's step for plan p, predicted; INFINITY when p is not a valid plan. */
static double predict(const lab21_job *j, const lab21_plan *p)
{
    const lab21_model *m = &j->m;
    int n = j->c.nodes * j->c.gpus_per_node;
    if (m->heads % p->tp || m->hidden % p->tp || m->layers % p->pp ||
        (p->cp > 1 && m->seq % (2 * p->cp)) || m->global_batch % (p->dp * m->micro_batch))
        return INFINITY;
    double s = m->seq, b = m->micro_batch, h = m->hidden;
    double params = 12.0 * m->layers * h * h + (double)m->vocab * h;
    double mem = 16 * params / (p->tp * p->pp) + 34 * s * b * h * m->layers / (p->tp * p->cp);
    if (mem > j->c.mem_GB * 1e9)
        return INFINITY;
    lab21_parallel par = {.tp = p->tp, .cp = p->cp, .pp = p->pp, .ep = 1, .etp = p->tp};
    snprintf(par.order, sizeof par.order, "%s", p->order);
    lab21_generator dec, exp;
    if (check_parallel(n, &par, &dec, &exp) != CL_OK)
        return INFINITY;
    double act = 2 * b * (s / p->cp) * h, kv = 4 * b * s * h / p->tp;
    double layer = 72 * b * s * h * h * (1 + s / (6 * h)) / (p->tp * p->cp) / (j->c.tflops * 1e12);
    double tp = comm_time(&j->c, &dec, "tp", RING_AR, act);
    double cp =
        2 * comm_time(&j->c, &dec, "cp", RING_AG, kv) + comm_time(&j->c, &dec, "cp", RING_RS, kv);
    double pp = comm_time(&j->c, &dec, "pp", SEND_NEXT, act / p->tp);
    double dp = comm_time(&j->c, &dec, "dp-cp", RING_AR, 4 * params / (p->tp * p->pp));
    double micro = (double)m->global_batch / (p->dp * m->micro_batch);
    double stage = (double)m->layers / p->pp * (layer + 4 * tp + cp) + 2 * pp;
    return (micro + p->pp - 1) * stage + dp;
}
/* END SOLUTION */

cl_result lab21_plan_job(const lab21_job *j, lab21_plan *out)
{
    /* BEGIN SOLUTION */
    static const char *const dims[4] = {"tp", "cp", "dp", "pp"};
    int n = j->c.nodes * j->c.gpus_per_node;
    double best = INFINITY;
    for (int tp = 1; tp <= n; tp++)
        for (int cp = 1; tp * cp <= n; cp++)
            for (int pp = 1; tp * cp * pp <= n; pp++) {
                if (n % (tp * cp * pp))
                    continue;
                int size[4] = {tp, cp, n / (tp * cp * pp), pp}, k[4], m = 0;
                for (int i = 0; i < 4; i++) /* the kinds whose place matters (dp for the
                                               expert generator when cp > 1) */
                    if (size[i] > 1 || (i == 2 && cp > 1))
                        k[m++] = i;
                /* every order of those kinds: m! of them, by the factorial number system */
                int total = 1;
                for (int i = 2; i <= m; i++)
                    total *= i;
                for (int q = 0; q < total; q++) {
                    int left[4], nl = m, x = q;
                    lab21_plan p = {.tp = tp, .cp = cp, .pp = pp, .dp = size[2]};
                    memcpy(left, k, sizeof k);
                    p.order[0] = '\0';
                    for (int i = 0; i < m; i++) {
                        int pick = x % nl;
                        x /= nl;
                        strcat(p.order, i ? "-" : "");
                        strcat(p.order, dims[left[pick]]);
                        left[pick] = left[--nl];
                    }
                    if (m == 0)
                        snprintf(p.order, sizeof p.order, "tp-cp-ep-dp-pp");
                    double t = predict(j, &p);
                    if (t < best)
                        best = t, *out = p;
                }
            }
    if (!isfinite(best)) {
        cl_set_error("no plan fits this model on %d GPUs", n);
        return CL_ERR_INVALID;
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab21) 4: your plan (section 4): every valid plan, its predicted step, the best.
    (void)j, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
