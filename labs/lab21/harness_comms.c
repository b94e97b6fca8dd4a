/* harness_comms.c: lab 21's reading of the student's communicators. After the student's
 * lab21_init_parallel returns, the student side of driver.c shows each communicator it built
 * (lab_op, lab21_ops.h); the harness reads its members with its own agreement over that
 * communicator and keeps, per rank and kind, the group's first member, the rank's place and
 * the communicator. Every rank's reading of a kind is then gathered and compared with
 * Megatron-LM's (harness_megatron.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "lab21_harness.h"
#include "lab21_ops.h"

/* --- the communicators, as the harness reads them ------------------------------------------ */

static cl_comm *worlds[LAB21_MAX_WORLD]; /* this process's ranks' world communicators */
shown seen[LAB21_MAX_WORLD];

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

/* *head = the world rank of c's rank 0, by agreement over c itself. */
static cl_result first_member(cl_comm *c, int w, int *head)
{
    int64_t v[1] = {cl_comm_rank(c) == 0 ? w : 0};
    CL_CHECK(cl_agree(c, CL_SUM, v, 1));
    *head = (int)v[0];
    return CL_OK;
}

cl_result lab_op(cl_run *run, cl_comm *c, int code, void *args, size_t bytes)
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
    int head;
    CL_CHECK(first_member(c, w, &head));
    seen[w].first[a->kind] = head;
    seen[w].place[a->kind] = cl_comm_rank(c);
    seen[w].comm[a->kind] = c;
    return CL_OK;
}

/* Call the student's lab21_init_parallel for p on every rank; *status its result
 * (the same on every rank, or the first failure). */
cl_result student_init(cl_comm *world, const lab21_parallel *p, cl_result *status, char *why,
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
cl_result gather_kind(cl_comm *world, int k, int *first, int *place)
{
    int n = cl_comm_size(world), me = cl_comm_rank(world);
    int64_t *all = malloc((size_t)n * sizeof *all);
    if (!all)
        return CL_ERR_NOMEM;
    /* first >= -2 and place >= -1, packed into one value */
    cl_result rc = cl_agree_gather(
        world, ((int64_t)seen[me].first[k] + 2) * 4096 + seen[me].place[k] + 1, all);
    for (int i = 0; rc == CL_OK && i < n; i++)
        first[i] = (int)(all[i] / 4096) - 2, place[i] = (int)(all[i] % 4096) - 1;
    free(all);
    return rc;
}

/* Ranks whose group of kind k differs from the reference's (first member, place). */
int mismatches(const lab21_layout *ref, int k, const int *first, const int *place, int n)
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
