/* p2p_backend.h: what an implementation of the point-to-point interface provides.
 *
 * p2p.c is the front end that both programs share: it checks arguments,
 * implements groups and blocking transfers on top of non-blocking ones, and
 * dispatches to c->ops. Each implementation defines one const cl_backend_ops
 * with designated initialisers: the harness's backends (p2p_mpi.c,
 * p2p_sim.c, gpu/p2p_nccl.c) and the student program's forwarding one
 * (student/forward.c). Every callback is set: one that cannot do something
 * returns CL_ERR_UNSUPPORTED with a reason, it never leaves a NULL.
 * Internal to common/: labs include p2p.h only.
 */
#ifndef COMMLAB_P2P_BACKEND_H
#define COMMLAB_P2P_BACKEND_H

#include "coll.h"
#include "p2p.h"

typedef struct cl_backend_ops {
    const char *name; /* "cpu", "gpu", "sim" */
    /* Post a transfer and return a request id > 0 in *req (unique per comm). */
    cl_result (*isend)(cl_comm *c, const void *buf, size_t bytes, int peer, int *req);
    cl_result (*irecv)(cl_comm *c, void *buf, size_t bytes, int peer, int *req);
    /* Complete all n requests; test one without blocking. */
    cl_result (*wait)(cl_comm *c, int n, const int *reqs);
    cl_result (*test)(cl_comm *c, int req, int *done);
    cl_result (*barrier)(cl_comm *c);
    cl_result (*split)(cl_comm *c, int color, int key, cl_comm **out);
    cl_result (*comm_free)(cl_comm *c);
    cl_result (*agree)(cl_comm *c, cl_op op, int64_t *values, int n);
    cl_result (*mem_alloc)(cl_comm *c, size_t bytes, void **out);
    cl_result (*mem_free)(cl_comm *c, void *p);
    cl_result (*mem_upload)(cl_comm *c, void *dst, const void *src, size_t bytes);
    cl_result (*mem_download)(cl_comm *c, void *dst, const void *src, size_t bytes);
    cl_result (*reduce_local)(cl_comm *c, void *inout, const void *in, size_t count, cl_dtype t,
                              cl_op op);
    cl_result (*copy_local)(cl_comm *c, void *dst, const void *src, size_t bytes);
    double (*time)(cl_comm *c);
} cl_backend_ops;

/* The common part of every communicator; implementations embed it first in
 * their own struct and cast. */
struct cl_comm {
    const cl_backend_ops *ops;
    int rank; /* in this communicator */
    int size;
    int world_rank;  /* in the launch's world: the owner of this rank's buffers */
    int *world_of;   /* world rank of each rank of this communicator; NULL: the world itself */
    int group_depth; /* > 0 between cl_group_start and cl_group_end */
    int *group;      /* requests posted inside the current group */
    int ngroup, capgroup;
};

/* Fill the common part of a new communicator. This function can't fail. */
void cl_comm_init(cl_comm *c, const cl_backend_ops *ops, int rank, int size, int world_rank);

/* Release what the common part owns (the group list, world_of). This function can't fail. */
void cl_comm_fini(cl_comm *c);

/* The world rank of rank r of c. This function can't fail (0 <= r < size). */
int cl_comm_world_of(const cl_comm *c, int r);

#endif /* COMMLAB_P2P_BACKEND_H */
