/* kept_comms.c: each rank's node and rail communicators from lab18_split, kept in the student's
 * program for the AllReduce calls that follow.
 *
 * On "sim" this program hosts every rank, and a rank's split may yield to the others: each
 * rank's entry stays where it was allocated.
 */
#include <stdlib.h>

#include "lab18_args.h"

typedef struct comms {
    cl_comm *world, *node, *rail;
} comms;
static comms **kept;
static int nkept;

static comms *find(cl_comm *world)
{
    for (int i = 0; i < nkept; i++)
        if (kept[i]->world == world)
            return kept[i];
    return NULL;
}

cl_result lab18_split_kept(cl_comm *world, int node)
{
    comms *k = find(world);
    if (!k) {
        comms **q = realloc(kept, (size_t)(nkept + 1) * sizeof *q);
        if (!q)
            return CL_ERR_NOMEM;
        kept = q;
        if (!(k = calloc(1, sizeof *k)))
            return CL_ERR_NOMEM;
        kept[nkept++] = k;
    } else {
        if (k->node)
            cl_comm_free(k->node);
        if (k->rail)
            cl_comm_free(k->rail);
    }
    *k = (comms){.world = world};
    return lab18_split(world, node, &k->node, &k->rail);
}

cl_result lab18_kept(cl_comm *world, cl_comm **node, cl_comm **rail)
{
    comms *k = find(world);
    if (!k || !k->node || !k->rail) {
        cl_set_error("lab18_split gave this rank no node or rail communicator");
        return CL_ERR_INVALID;
    }
    *node = k->node, *rail = k->rail;
    return CL_OK;
}
