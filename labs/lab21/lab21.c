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

cl_result lab21_generator_init(lab21_generator *g, const lab21_sizes *s, const char *order)
{
    // TODO(lab21) 1: RankGenerator.__init__ (section 1 of the handout): the order's kinds,
    // the missing ones appended, their sizes, and every refusal listed in lab21.h.
    (void)g, (void)s, (void)order;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab21_get_ranks(const lab21_generator *g, const char *token, int *groups, size_t cap,
                          int *ngroups, int *gsize)
{
    // TODO(lab21) 2: RankGenerator.get_ranks (section 2): the mask of the token's kinds, then
    // generate_masked_orthogonal_rank_groups: every group, its ranks in Megatron-LM's order.
    (void)g, (void)token, (void)groups, (void)cap, (void)ngroups, (void)gsize;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab21_init_parallel(cl_comm *world, const lab21_parallel *p, lab21_comms *out)
{
    // TODO(lab21) 3: initialize_model_parallel (section 3): the decoder and the expert
    // generators, Megatron-LM's refusals, then one cl_comm_split per kind on every rank.
    (void)world, (void)p, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab21_plan_job(const lab21_job *j, lab21_plan *out)
{
    // TODO(lab21) 4: your plan (section 4): every valid plan, its predicted step, the best.
    (void)j, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}
