/* p2p.c: the point-to-point interface: argument checks, then the backend. */
#include "p2p_backend.h"

#include <string.h>

static const cl_backend_ops *find_backend(const char *name)
{
    static const cl_backend_ops *const all[] = {&cl_backend_mpi, &cl_backend_nccl, &cl_backend_sim};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(all[i]->name, name) == 0)
            return all[i];
    return NULL;
}

cl_result cl_launch(const cl_launch_opts *opts, cl_rank_body body, void *arg)
{
    const char *name = opts && opts->backend ? opts->backend : "cpu";
    const cl_backend_ops *ops = find_backend(name);
    if (!ops) {
        cl_set_error("unknown backend '%s' (cpu, gpu, sim)", name);
        return CL_ERR_INVALID;
    }
    return ops->launch(opts, body, arg);
}

int cl_comm_rank(const cl_comm *c) { return c->rank; }
int cl_comm_size(const cl_comm *c) { return c->size; }
const char *cl_comm_backend(const cl_comm *c) { return c->ops->name; }

static cl_result check_peer(const cl_comm *c, int peer)
{
    if (peer < 0 || peer >= c->size) {
        cl_set_error("rank %d: peer %d outside 0..%d", c->rank, peer, c->size - 1);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

cl_result cl_send(cl_comm *c, const void *buf, size_t bytes, int peer)
{
    CL_CHECK(check_peer(c, peer));
    return c->ops->send(c, buf, bytes, peer);
}

cl_result cl_recv(cl_comm *c, void *buf, size_t bytes, int peer)
{
    CL_CHECK(check_peer(c, peer));
    return c->ops->recv(c, buf, bytes, peer);
}

cl_result cl_group_start(cl_comm *c)
{
    if (c->group_depth++ > 0)
        return CL_OK; /* nested groups merge into the outermost, as in NCCL */
    return c->ops->group_start(c);
}

cl_result cl_group_end(cl_comm *c)
{
    if (c->group_depth == 0) {
        cl_set_error("rank %d: cl_group_end without cl_group_start", c->rank);
        return CL_ERR_INVALID;
    }
    if (--c->group_depth > 0)
        return CL_OK;
    return c->ops->group_end(c);
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

cl_result cl_barrier(cl_comm *c) { return c->ops->barrier(c); }

cl_result cl_mem_alloc(cl_comm *c, size_t bytes, void **out)
{
    *out = NULL;
    return c->ops->mem_alloc(c, bytes, out);
}

cl_result cl_mem_free(cl_comm *c, void *p) { return p ? c->ops->mem_free(c, p) : CL_OK; }

cl_result cl_mem_upload(cl_comm *c, void *dst, const void *host_src, size_t bytes)
{
    return c->ops->mem_upload(c, dst, host_src, bytes);
}

cl_result cl_mem_download(cl_comm *c, void *host_dst, const void *src, size_t bytes)
{
    return c->ops->mem_download(c, host_dst, src, bytes);
}

cl_result cl_reduce_local(cl_comm *c, void *inout, const void *in, size_t count, cl_dtype t,
                          cl_op op)
{
    return c->ops->reduce_local(c, inout, in, count, t, op);
}

cl_result cl_copy_local(cl_comm *c, void *dst, const void *src, size_t bytes)
{
    return c->ops->copy_local(c, dst, src, bytes);
}

double cl_comm_time(cl_comm *c) { return c->ops->time(c); }

cl_result cl_baseline_allreduce(cl_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                cl_dtype t, cl_op op)
{
    return c->ops->baseline_allreduce(c, sendbuf, recvbuf, count, t, op);
}

cl_result cl_baseline_busbw(cl_comm *c, size_t bytes, int iters, int repeats, double *samples)
{
    size_t count = bytes / sizeof(float);
    int n = c->size;
    void *buf;
    CL_CHECK(cl_mem_alloc(c, count * sizeof(float), &buf));
    CL_CHECK(cl_baseline_allreduce(c, buf, buf, count, CL_FLOAT32, CL_SUM)); /* warm-up */
    for (int r = 0; r < repeats; r++) {
        CL_CHECK(cl_barrier(c));
        double t0 = cl_comm_time(c);
        for (int i = 0; i < iters; i++)
            CL_CHECK(cl_baseline_allreduce(c, buf, buf, count, CL_FLOAT32, CL_SUM));
        double t = (cl_comm_time(c) - t0) / iters;
        samples[r] = t > 0 ? count * sizeof(float) / t / 1e9 * 2.0 * (n - 1) / n : 0;
    }
    return cl_mem_free(c, buf);
}
