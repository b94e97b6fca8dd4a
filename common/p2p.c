/* p2p.c: the point-to-point front end both programs share: checks, groups, blocking calls. */
#include <stdlib.h>
#include <string.h>

#include "p2p_backend.h"

void cl_comm_init(cl_comm *c, const cl_backend_ops *ops, int rank, int size, int world_rank)
{
    *c = (cl_comm){.ops = ops, .rank = rank, .size = size, .world_rank = world_rank};
}

void cl_comm_fini(cl_comm *c)
{
    free(c->group);
    free(c->world_of);
    c->group = c->world_of = NULL;
    c->ngroup = c->capgroup = 0;
}

int cl_comm_world_of(const cl_comm *c, int r) { return c->world_of ? c->world_of[r] : r; }

int cl_comm_rank(const cl_comm *c) { return c->rank; }
int cl_comm_size(const cl_comm *c) { return c->size; }
const char *cl_comm_backend(const cl_comm *c) { return c->ops->name; }
int cl_comm_on_sim(const cl_comm *c) { return strcmp(c->ops->name, "sim") == 0; }

static cl_result check_peer(const cl_comm *c, int peer)
{
    if (peer < 0 || peer >= c->size) {
        cl_set_error("rank %d: peer %d outside 0..%d", c->rank, peer, c->size - 1);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

static cl_result remember(cl_comm *c, int req)
{
    if (c->ngroup == c->capgroup) {
        int cap = c->capgroup ? 2 * c->capgroup : 16;
        int *q = realloc(c->group, (size_t)cap * sizeof *q);
        if (!q) {
            cl_set_error("rank %d: out of memory for a group of %d transfers", c->rank, cap);
            return CL_ERR_NOMEM;
        }
        c->group = q;
        c->capgroup = cap;
    }
    c->group[c->ngroup++] = req;
    return CL_OK;
}

/* A blocking transfer is a posted one that is waited for at once; inside a
 * group it is only posted, and cl_group_end waits for the whole group. */
static cl_result transfer(cl_comm *c, int is_send, void *buf, size_t bytes, int peer)
{
    int req = 0;
    CL_CHECK(check_peer(c, peer));
    if (is_send)
        CL_CHECK(c->ops->isend(c, buf, bytes, peer, &req));
    else
        CL_CHECK(c->ops->irecv(c, buf, bytes, peer, &req));
    if (c->group_depth > 0)
        return remember(c, req);
    return c->ops->wait(c, 1, &req);
}

cl_result cl_send(cl_comm *c, const void *buf, size_t bytes, int peer)
{
    return transfer(c, 1, (void *)buf, bytes, peer);
}

cl_result cl_recv(cl_comm *c, void *buf, size_t bytes, int peer)
{
    return transfer(c, 0, buf, bytes, peer);
}

cl_result cl_group_start(cl_comm *c)
{
    if (c->group_depth++ == 0)
        c->ngroup = 0;
    return CL_OK; /* nested groups merge into the outermost, as in NCCL */
}

cl_result cl_group_end(cl_comm *c)
{
    if (c->group_depth == 0) {
        cl_set_error("rank %d: cl_group_end without cl_group_start", c->rank);
        return CL_ERR_INVALID;
    }
    if (--c->group_depth > 0)
        return CL_OK;
    int n = c->ngroup;
    c->ngroup = 0;
    return n ? c->ops->wait(c, n, c->group) : CL_OK;
}

cl_result cl_sendrecv(cl_comm *c, const void *sendbuf, size_t sendbytes, int dst, void *recvbuf,
                      size_t recvbytes, int src)
{
    CL_CHECK(cl_group_start(c));
    cl_result rc = cl_send(c, sendbuf, sendbytes, dst);
    if (rc == CL_OK)
        rc = cl_recv(c, recvbuf, recvbytes, src);
    cl_result end = cl_group_end(c);
    return rc != CL_OK ? rc : end;
}

cl_result cl_isend(cl_comm *c, const void *buf, size_t bytes, int peer, cl_request *req)
{
    req->id = 0;
    CL_CHECK(check_peer(c, peer));
    return c->ops->isend(c, buf, bytes, peer, &req->id);
}

cl_result cl_irecv(cl_comm *c, void *buf, size_t bytes, int peer, cl_request *req)
{
    req->id = 0;
    CL_CHECK(check_peer(c, peer));
    return c->ops->irecv(c, buf, bytes, peer, &req->id);
}

cl_result cl_wait(cl_comm *c, cl_request *req) { return cl_waitall(c, 1, req); }

cl_result cl_waitall(cl_comm *c, int n, cl_request *reqs)
{
    enum { SMALL = 64 };
    int small[SMALL], *ids = n <= SMALL ? small : malloc((size_t)n * sizeof *ids);
    if (!ids)
        return CL_ERR_NOMEM;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (reqs[i].id)
            ids[k++] = reqs[i].id;
    cl_result rc = k ? c->ops->wait(c, k, ids) : CL_OK;
    if (rc == CL_OK)
        for (int i = 0; i < n; i++)
            reqs[i].id = 0;
    if (ids != small)
        free(ids);
    return rc;
}

cl_result cl_test(cl_comm *c, cl_request *req, int *done)
{
    *done = 1;
    if (!req->id)
        return CL_OK;
    CL_CHECK(c->ops->test(c, req->id, done));
    if (*done)
        req->id = 0;
    return CL_OK;
}

cl_result cl_barrier(cl_comm *c) { return c->ops->barrier(c); }

cl_result cl_comm_split(cl_comm *c, int color, int key, cl_comm **out)
{
    *out = NULL;
    return c->ops->split(c, color, key, out);
}

cl_result cl_comm_free(cl_comm *c) { return c ? c->ops->comm_free(c) : CL_OK; }

cl_result cl_agree(cl_comm *c, cl_op op, int64_t *values, int n)
{
    if (n < 0 || n > CL_AGREE_MAX || (op != CL_SUM && op != CL_MAX && op != CL_MIN)) {
        cl_set_error("cl_agree: %d values with %s (at most %d, with sum, max or min)", n,
                     cl_op_name(op), CL_AGREE_MAX);
        return CL_ERR_INVALID;
    }
    return n ? c->ops->agree(c, op, values, n) : CL_OK;
}

cl_result cl_mem_alloc(cl_comm *c, size_t bytes, void **out)
{
    *out = NULL;
    return c->ops->mem_alloc(c, bytes, out);
}

cl_result cl_mem_free(cl_comm *c, void *p) { return p ? c->ops->mem_free(c, p) : CL_OK; }

cl_result cl_mem_upload(cl_comm *c, void *dst, const void *host_src, size_t bytes)
{
    return bytes ? c->ops->mem_upload(c, dst, host_src, bytes) : CL_OK;
}

cl_result cl_mem_download(cl_comm *c, void *host_dst, const void *src, size_t bytes)
{
    return bytes ? c->ops->mem_download(c, host_dst, src, bytes) : CL_OK;
}

cl_result cl_reduce_local(cl_comm *c, void *inout, const void *in, size_t count, cl_dtype t,
                          cl_op op)
{
    if (cl_dtype_size(t) == 0 || (unsigned)op >= CL_OP_COUNT) {
        cl_set_error("rank %d: cl_reduce_local with data type %d and reduction %d", c->rank, (int)t,
                     (int)op);
        return CL_ERR_INVALID;
    }
    return count ? c->ops->reduce_local(c, inout, in, count, t, op) : CL_OK;
}

cl_result cl_copy_local(cl_comm *c, void *dst, const void *src, size_t bytes)
{
    return bytes && dst != src ? c->ops->copy_local(c, dst, src, bytes) : CL_OK;
}

double cl_comm_time(cl_comm *c) { return c->ops->time(c); }
