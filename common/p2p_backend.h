/* p2p_backend.h: what a backend of the point-to-point interface provides.
 *
 * Each backend (p2p_mpi.c, p2p_nccl.c, p2p_sim.c) defines one const
 * cl_backend_ops with designated initialisers; p2p.c dispatches to it.
 * Every callback must be set: a backend that cannot do something returns
 * CL_ERR_UNSUPPORTED with a reason, it never leaves a NULL.
 * Internal to common/: labs include p2p.h only.
 */
#ifndef COMMLAB_P2P_BACKEND_H
#define COMMLAB_P2P_BACKEND_H

#include "p2p.h"

typedef struct cl_backend_ops {
    const char *name; /* "cpu", "gpu", "sim" */
    cl_result (*launch)(const cl_launch_opts *opts, cl_rank_body body, void *arg);
    cl_result (*send)(cl_comm *c, const void *buf, size_t bytes, int peer);
    cl_result (*recv)(cl_comm *c, void *buf, size_t bytes, int peer);
    cl_result (*group_start)(cl_comm *c);
    cl_result (*group_end)(cl_comm *c);
    cl_result (*barrier)(cl_comm *c);
    cl_result (*mem_alloc)(cl_comm *c, size_t bytes, void **out);
    cl_result (*mem_free)(cl_comm *c, void *p);
    cl_result (*mem_upload)(cl_comm *c, void *dst, const void *src, size_t bytes);
    cl_result (*mem_download)(cl_comm *c, void *dst, const void *src, size_t bytes);
    cl_result (*reduce_local)(cl_comm *c, void *inout, const void *in, size_t count, cl_dtype t,
                              cl_op op);
    cl_result (*copy_local)(cl_comm *c, void *dst, const void *src, size_t bytes);
    double (*time)(cl_comm *c);
    cl_result (*baseline_allreduce)(cl_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                    cl_dtype t, cl_op op);
} cl_backend_ops;

/* The common part of every communicator; backends embed it first in their own
 * struct and cast. */
struct cl_comm {
    const cl_backend_ops *ops;
    int rank;
    int size;
    int group_depth; /* > 0 between cl_group_start and cl_group_end */
};

extern const cl_backend_ops cl_backend_mpi;
extern const cl_backend_ops cl_backend_nccl;
extern const cl_backend_ops cl_backend_sim;

#endif /* COMMLAB_P2P_BACKEND_H */
