/* p2p_solo.c: one rank and no peers: host buffers and local work, for calls of pure functions.
 *
 * A cases mode calls the student's functions one case at a time, with no
 * other rank to talk to. Buffers are host memory the student's program shares;
 * transfers, barriers and splits say that there is no one to talk to.
 */
#include <string.h>

#include "boundary/arena.h"
#include "buffers.h"
#include "launch.h"
#include "p2p_backend.h"
#include "timing.h"

static cl_result alone(void)
{
    cl_set_error("this function runs on its own: there are no other ranks");
    return CL_ERR_UNSUPPORTED;
}

static cl_result solo_isend(cl_comm *c, const void *b, size_t n, int peer, int *req)
{
    (void)c, (void)b, (void)n, (void)peer, (void)req;
    return alone();
}

static cl_result solo_irecv(cl_comm *c, void *b, size_t n, int peer, int *req)
{
    (void)c, (void)b, (void)n, (void)peer, (void)req;
    return alone();
}

static cl_result solo_wait(cl_comm *c, int n, const int *reqs)
{
    (void)c, (void)n, (void)reqs;
    return alone();
}

static cl_result solo_test(cl_comm *c, int req, int *done)
{
    (void)c, (void)req, (void)done;
    return alone();
}

static cl_result solo_barrier(cl_comm *c)
{
    (void)c;
    return CL_OK;
}

static cl_result solo_split(cl_comm *c, int color, int key, cl_comm **out)
{
    (void)c, (void)color, (void)key, (void)out;
    return alone();
}

static cl_result solo_comm_free(cl_comm *c)
{
    (void)c;
    return alone();
}

static cl_result solo_agree(cl_comm *c, cl_op op, int64_t *v, int n)
{
    (void)c, (void)op, (void)v, (void)n;
    return CL_OK; /* one rank agrees with itself */
}

static cl_result solo_alloc(cl_comm *c, size_t bytes, void **out)
{
    CL_CHECK(cl_host_alloc(bytes, out));
    cl_result rc = cl_buffers_add((uintptr_t)*out, bytes, c->world_rank, NULL);
    if (rc != CL_OK)
        cl_host_free(*out);
    return rc;
}

static cl_result solo_free(cl_comm *c, void *p)
{
    (void)c;
    CL_CHECK(cl_buffers_remove((uintptr_t)p, NULL));
    cl_host_free(p);
    return CL_OK;
}

static cl_result solo_copy(cl_comm *c, void *dst, const void *src, size_t bytes)
{
    (void)c;
    memmove(dst, src, bytes);
    return CL_OK;
}

static cl_result solo_reduce(cl_comm *c, void *inout, const void *in, size_t count, cl_dtype t,
                             cl_op op)
{
    (void)c;
    return cl_reduce_host(inout, in, count, t, op);
}

static double solo_time(cl_comm *c)
{
    (void)c;
    return cl_wtime();
}

static const cl_backend_ops solo_ops = {
    .name = "cpu",
    .isend = solo_isend,
    .irecv = solo_irecv,
    .wait = solo_wait,
    .test = solo_test,
    .barrier = solo_barrier,
    .split = solo_split,
    .comm_free = solo_comm_free,
    .agree = solo_agree,
    .mem_alloc = solo_alloc,
    .mem_free = solo_free,
    .mem_upload = solo_copy,
    .mem_download = solo_copy,
    .reduce_local = solo_reduce,
    .copy_local = solo_copy,
    .time = solo_time,
};

static void release_host(const cl_buffer *b) { cl_host_free((void *)b->base); }

cl_result cl_solo_launch(const cl_launch_opts *opts, cl_rank_body body, void *arg)
{
    (void)opts;
    cl_comm c;
    cl_comm_init(&c, &solo_ops, 0, 1, 0);
    cl_result rc = body(&c, arg);
    cl_buffers_release_all(-1, release_host); /* what the rank did not free */
    cl_comm_fini(&c);
    return rc;
}
