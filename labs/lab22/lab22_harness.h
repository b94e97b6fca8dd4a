/* lab22_harness.h: what lab 22's driver.c shares with its harness_*.c files.
 *
 * driver.c               the student's entries (both sides compile it) and the lab's table
 * harness_trace.c        what the trace of a rank's last call says: its peak memory
 * harness_collectives.c  the collectives mode: the student's ReduceScatter and AllGather
 * harness_stages.c       the train mode: each stage's model, bytes and memory, checked
 * harness_train.c        the harness's own plain data-parallel run, its inputs, and ZeRO's
 *                        accounting of bytes and memory
 * harness_bucket.c       the bucket mode and the bucket's model
 *
 * Only the argument blocks are seen by the student's program.
 */
#ifndef LAB22_HARNESS_H
#define LAB22_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "harness/harness.h"
#include "lab22.h"
#include "p2p.h"

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct coll_args {
    int gather; /* 0: reduce-scatter, 1: all-gather */
    float *buf, *shard;
    size_t n;
} coll_args;

typedef struct train_args {
    lab22_job job;
} train_args;

typedef struct bucket_args {
    lab22_cluster k;
    double bucket; /* out */
} bucket_args;

#ifndef CL_STUDENT_SIDE

/* What the student's functions may do in the ranks modes. */
#define ALLOW (CL_ALLOW_P2P | CL_ALLOW_LOCAL | CL_ALLOW_MEMORY)

/* --- harness_train.c --- */

/* The stated tolerance on the model after k steps: the student's float run against the
 * harness's double-precision run, per parameter |got - want| <= max(REL * |want|, ABS). */
#define LAB22_REL 1e-4
#define LAB22_ABS 1e-5

typedef struct lab22_model {
    int layers, width, batch, steps;
    float lr, momentum;
} lab22_model;

/* The initial model (the same for every rank) and rank's batch for seed. */
void lab22_init(const lab22_model *m, uint64_t seed, int rank, float *params, float *x, float *t);

/* *changed = floats of the rank's inputs (params, x, t) that differ from what they were
 * (host: lab22_init's values for this rank, one after the other). */
cl_result lab22_count_changed(cl_comm *c, const lab22_model *m, const float *params, const float *x,
                              const float *t, const float *host, size_t *changed);

/* The model after m->steps steps of plain data parallelism over ranks ranks (the mean
 * of every rank's gradient), in double precision: want[] (every layer's block). */
cl_result lab22_reference(const lab22_model *m, uint64_t seed, int ranks, double *want);

/* The bytes a rank sends in m->steps steps of a stage, by ZeRO's accounting with ring
 * collectives: 2Ψ(N-1)/N per step for stages 0-2 (a ReduceScatter and an AllGather of
 * Ψ), 3Ψ(N-1)/N for stage 3 (the parameters gathered twice). Ψ in bytes. */
size_t lab22_expected_sent(const lab22_model *m, int ranks, int stage);

/* The model states a rank holds in a stage (parameters, gradients, momentum: fp32),
 * and the most memory it may hold at once: the states, the activations and a fixed
 * allowance for one layer's working buffers (lab22_memory_bound). */
size_t lab22_states_bytes(const lab22_model *m, int ranks, int stage);
size_t lab22_memory_bound(const lab22_model *m, int ranks, int stage);

/* --- harness_bucket.c --- */

/* The bucket's model: the step time of ZeRO-2 with buckets of s elements on cluster k
 * (INFINITY with *why when the buckets do not fit), and the best bucket's. */
double lab22_bucket_step(const lab22_cluster *k, double s, const char **why);
double lab22_best_bucket(const lab22_cluster *k, double *best_s);

/* --- harness_trace.c --- */

/* The most memory the rank held at once in its last call (cl_mem_alloc less cl_mem_free),
 * from the trace. */
size_t peak_bytes(const cl_comm *c);

/* --- the modes (harness_collectives.c, harness_stages.c, harness_bucket.c) --- */

cl_result collectives_mode(cl_run *run, cl_comm *c);
cl_result train_mode(cl_run *run, cl_comm *c);
cl_result bucket_case(cl_case *cs);
#endif

#endif /* LAB22_HARNESS_H */
