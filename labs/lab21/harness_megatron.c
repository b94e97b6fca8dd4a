/* harness_megatron.c: Megatron-LM's parallel groups, as the harness computes them.
 *
 * The rules of NVIDIA/Megatron-LM core_v0.15.0, megatron/core/parallel_state.py
 * (generate_masked_orthogonal_rank_groups, RankGenerator, initialize_model_parallel),
 * the same as datasets/lab21/make_groups.py. The harness uses them to check the
 * communicators of a plan and to build every other plan's own. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "lab21_harness.h"

const char *const lab21_kind_names[LAB21_KINDS] = {
    "tp", "cp", "dp", "dp-cp", "pp", "mp", "tp-cp", "tp-dp-cp", "embd", "ep", "etp", "edp"};

static const char *const names[LAB21_DIMS] = {"tp", "cp", "ep", "dp", "pp"};
static const int append[LAB21_DIMS] = {0, 4, 3, 2, 1}; /* RankGenerator's tp, pp, dp, ep, cp */

/* The generator's kinds in order and their sizes: dim[i] indexes names[]. */
typedef struct gen {
    int world, dim[LAB21_DIMS], size[LAB21_DIMS];
} gen;

static cl_result gen_init(gen *g, const int size[LAB21_DIMS], const char *order)
{
    char buf[LAB21_ORDER_LEN];
    int seen[LAB21_DIMS] = {0}, n = 0;
    if (strlen(order) >= sizeof buf) {
        cl_set_error("order '%s' is too long", order);
        return CL_ERR_INVALID;
    }
    for (size_t i = 0; i <= strlen(order); i++)
        buf[i] = (char)tolower((unsigned char)order[i]);
    g->world = 1;
    for (int d = 0; d < LAB21_DIMS; d++) {
        if (size[d] < 1 || size[d] > LAB21_MAX_WORLD) {
            cl_set_error("%s = %d", names[d], size[d]);
            return CL_ERR_INVALID;
        }
        g->world *= size[d];
        if (g->world > LAB21_MAX_WORLD) {
            cl_set_error("more than %d ranks", LAB21_MAX_WORLD);
            return CL_ERR_INVALID;
        }
    }
    if (size[1] > 1 && size[2] > 1) {
        cl_set_error("ep and cp are both above 1");
        return CL_ERR_INVALID;
    }
    for (char *t = buf, *end;; t = end + 1) { /* "tp--dp" holds an empty, unknown name */
        end = strchr(t, '-');
        if (end)
            *end = '\0';
        int d = 0;
        while (d < LAB21_DIMS && strcmp(t, names[d]) != 0)
            d++;
        if (d == LAB21_DIMS || seen[d]) {
            cl_set_error("order '%s': '%s' is unknown or repeated", order, t);
            return CL_ERR_INVALID;
        }
        seen[d] = 1;
        g->dim[n++] = d;
        if (!end)
            break;
    }
    for (int a = 0; a < LAB21_DIMS; a++) {
        int d = append[a];
        if (!seen[d]) {
            if (size[d] != 1) {
                cl_set_error("order '%s' leaves out %s of size %d", order, names[d], size[d]);
                return CL_ERR_INVALID;
            }
            g->dim[n++] = d;
        }
    }
    for (int i = 0; i < LAB21_DIMS; i++)
        g->size[i] = size[g->dim[i]];
    return CL_OK;
}

/* The group of rank r for the kinds in mask (by names[] index): its index,
 * and r's place in it (the masked kinds' digits, first one fastest). */
static void gen_place(const gen *g, const int mask[LAB21_DIMS], int r, int *color, int *key)
{
    int in = 0, out = 0, in_scale = 1, out_scale = 1;
    for (int i = 0; i < LAB21_DIMS; i++) {
        int digit = r % g->size[i];
        r /= g->size[i];
        if (mask[g->dim[i]])
            in += digit * in_scale, in_scale *= g->size[i];
        else
            out += digit * out_scale, out_scale *= g->size[i];
    }
    *color = out, *key = in;
}

static void kind_of(const gen *g, const char *token, int world, int *color, int *key)
{
    int mask[LAB21_DIMS] = {0};
    for (int d = 0; d < LAB21_DIMS; d++) {
        const char *p = strstr(token, names[d]);
        mask[d] = p != NULL;
    }
    for (int r = 0; r < world; r++)
        gen_place(g, mask, r, &color[r], &key[r]);
}

cl_result lab21_ref_layout(int world, const lab21_parallel *p, lab21_layout *out)
{
    gen dec, exp;
    if (p->tp < 1 || p->cp < 1 || p->pp < 1 || p->ep < 1 || p->etp < 1 || world < 1 ||
        world > LAB21_MAX_WORLD) {
        cl_set_error("a size below 1, or %d ranks", world);
        return CL_ERR_INVALID;
    }
    if (world % (p->tp * p->cp * p->pp) || world % (p->etp * p->ep * p->pp)) {
        cl_set_error("%d ranks are not a multiple of tp x cp x pp = %d and of etp x ep x pp = %d",
                     world, p->tp * p->cp * p->pp, p->etp * p->ep * p->pp);
        return CL_ERR_INVALID;
    }
    int dp = world / (p->tp * p->cp * p->pp), edp = world / (p->etp * p->ep * p->pp);
    int dsize[LAB21_DIMS] = {p->tp, p->cp, 1, dp, p->pp};
    int esize[LAB21_DIMS] = {p->etp, 1, p->ep, edp, p->pp};
    cl_result rc = gen_init(&dec, dsize, p->order); /* a refusal is an answer: no message */
    if (rc == CL_OK)
        rc = gen_init(&exp, esize, p->order);
    if (rc != CL_OK)
        return rc;
    size_t len = strlen(p->order);
    int pp_last = len >= 2 && tolower((unsigned char)p->order[len - 2]) == 'p' &&
                  tolower((unsigned char)p->order[len - 1]) == 'p';
    if (!pp_last && p->pp > 1 && edp != dp) {
        cl_set_error("pp is not last in '%s' and the expert data-parallel size %d is not dp = %d",
                     p->order, edp, dp);
        return CL_ERR_INVALID;
    }
    out->world = world;
    kind_of(&dec, "tp", world, out->color[LAB21_TP], out->key[LAB21_TP]);
    kind_of(&dec, "cp", world, out->color[LAB21_CP], out->key[LAB21_CP]);
    kind_of(&dec, "dp", world, out->color[LAB21_DP], out->key[LAB21_DP]);
    kind_of(&dec, "dp-cp", world, out->color[LAB21_DP_CP], out->key[LAB21_DP_CP]);
    kind_of(&dec, "pp", world, out->color[LAB21_PP], out->key[LAB21_PP]);
    kind_of(&dec, "tp-pp", world, out->color[LAB21_MP], out->key[LAB21_MP]);
    kind_of(&dec, "tp-cp", world, out->color[LAB21_TP_CP], out->key[LAB21_TP_CP]);
    kind_of(&dec, "tp-dp-cp", world, out->color[LAB21_TP_DP_CP], out->key[LAB21_TP_DP_CP]);
    kind_of(&exp, "ep", world, out->color[LAB21_EP], out->key[LAB21_EP]);
    kind_of(&exp, "tp", world, out->color[LAB21_ETP], out->key[LAB21_ETP]);
    kind_of(&exp, "dp", world, out->color[LAB21_EDP], out->key[LAB21_EDP]);
    int *ecolor = out->color[LAB21_EMBD], *ekey = out->key[LAB21_EMBD];
    kind_of(&exp, "pp", world, ecolor, ekey); /* the expert generator's pp groups, to compare */
    for (int r = 0; r < world; r++)
        if (ecolor[r] != out->color[LAB21_PP][r] || ekey[r] != out->key[LAB21_PP][r]) {
            cl_set_error("the decoder's and the expert generator's pp groups differ under '%s'",
                         p->order);
            return CL_ERR_INVALID;
        }
    for (int r = 0; r < world; r++) { /* the first and the last stage of each pp group */
        int k = out->key[LAB21_PP][r];
        ecolor[r] = k == 0 || k == p->pp - 1 ? out->color[LAB21_PP][r] : -1;
        ekey[r] = k == 0 ? 0 : 1;
    }
    return CL_OK;
}
