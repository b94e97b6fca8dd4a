/* coll.c: names, bus-bandwidth factors and blocks of collectives (coll.h). */
#include "coll.h"

#include <stdio.h>
#include <strings.h>

static const char *const coll_names[CL_COLL_KIND_COUNT] = {
    "allreduce", "reducescatter", "allgather", "broadcast", "reduce", "alltoall", "alltoallv"};
static const char *const algo_names[CL_ALGO_COUNT] = {"auto", "Ring",     "Tree",
                                                      "NVLS", "NVLSTree", "Hier"};
static const char *const proto_names[CL_PROTO_COUNT] = {"LL", "LL128", "Simple"};

const char *cl_coll_name(cl_coll_kind kind)
{
    return (unsigned)kind < CL_COLL_KIND_COUNT ? coll_names[kind] : "?";
}

const char *cl_algo_name(cl_algo algo)
{
    return (unsigned)algo < CL_ALGO_COUNT ? algo_names[algo] : "?";
}

const char *cl_proto_name(cl_proto proto)
{
    return (unsigned)proto < CL_PROTO_COUNT ? proto_names[proto] : "?";
}

/* Index of name in names[0..n), case-insensitively; -1 with a reason if absent. */
static int lookup(const char *what, const char *name, const char *const *names, int n)
{
    for (int i = 0; name && i < n; i++)
        if (strcasecmp(name, names[i]) == 0)
            return i;
    char list[160] = "";
    size_t used = 0;
    for (int i = 0; i < n && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", names[i]);
    cl_set_error("unknown %s '%s' (%s)", what, name ? name : "", list);
    return -1;
}

cl_result cl_coll_parse(const char *name, cl_coll_kind *out)
{
    int i = lookup("collective", name, coll_names, CL_COLL_KIND_COUNT);
    if (i < 0)
        return CL_ERR_INVALID;
    *out = (cl_coll_kind)i;
    return CL_OK;
}

cl_result cl_algo_parse(const char *name, cl_algo *out)
{
    int i = lookup("algorithm", name, algo_names, CL_ALGO_COUNT);
    if (i < 0)
        return CL_ERR_INVALID;
    *out = (cl_algo)i;
    return CL_OK;
}

cl_result cl_proto_parse(const char *name, cl_proto *out)
{
    int i = lookup("protocol", name, proto_names, CL_PROTO_COUNT);
    if (i < 0)
        return CL_ERR_INVALID;
    *out = (cl_proto)i;
    return CL_OK;
}

double cl_coll_busbw_factor(cl_coll_kind kind, int p)
{
    switch (kind) {
    case CL_COLL_ALLREDUCE: return 2.0 * (p - 1) / p;
    case CL_COLL_REDUCESCATTER:
    case CL_COLL_ALLGATHER:
    case CL_COLL_ALLTOALL:
    case CL_COLL_ALLTOALLV: return (double)(p - 1) / p;
    default: return 1.0;
    }
}

void cl_coll_block(size_t count, int p, int i, size_t *off, size_t *len)
{
    size_t base = count / (size_t)p, extra = count % (size_t)p, k = (size_t)i;
    *off = k * base + (k < extra ? k : extra);
    *len = base + (k < extra ? 1 : 0);
}

int cl_coll_reduces(cl_coll_kind kind)
{
    return kind == CL_COLL_ALLREDUCE || kind == CL_COLL_REDUCESCATTER || kind == CL_COLL_REDUCE;
}

int cl_coll_rooted(cl_coll_kind kind)
{
    return kind == CL_COLL_BROADCAST || kind == CL_COLL_REDUCE;
}
