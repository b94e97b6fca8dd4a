/* overlap.h: what the harness gives a lab whose student overlaps the AllReduce of a backward
 * pass's gradients with the pass's kernels (lab11, lab24).
 *
 * The kernels run on a GPU the harness models: on "sim" in virtual time, on "cpu" while the
 * harness spins and MPI keeps moving the posted transfers, as a GPU computes while its copy
 * engines and communication kernels move data. Every sample of a step is set against two
 * baselines taken in the same run: the kernels alone and the library's AllReduce alone.
 */
#ifndef COMMLAB_OVERLAP_H
#define COMMLAB_OVERLAP_H

#include "harness.h"

#define CL_OVERLAP_MAX_SAMPLES 16

/* One rank's step: the argument block of the student's entries "kernels" (the backward pass
 * with nothing else going on) and "step", and the float gradients the step sums over the ranks. */
typedef struct cl_overlap {
    void *args;
    size_t args_bytes;
    float *grads;  /* count floats */
    float *result; /* 2 x count floats: the library's result, then its scratch on "sim" */
    size_t count;
} cl_overlap;

/* One sample: the times are the slowest rank's, wrong (gradient elements) is summed over ranks. */
typedef struct cl_overlap_sample {
    double kernels_s, allreduce_s, step_s;
    double wrong;
} cl_overlap_sample;

/* The samples to take: --repeats, at most CL_OVERLAP_MAX_SAMPLES. This function can't fail. */
int cl_overlap_repeats(const cl_run *run);

/* Allocate o's gradients and result for count floats (o's other fields are kept), and free
 * them (those that were allocated). */
cl_result cl_overlap_alloc(cl_comm *c, cl_overlap *o, size_t count);
void cl_overlap_free(cl_comm *c, cl_overlap *o);

/* Keep the modelled GPU busy until `end` on this rank's clock. */
cl_result cl_overlap_busy_until(cl_comm *c, double end);

/* The library's AllReduce (sum) of the gradients into result, timed: cl_library_coll_timed. */
cl_result cl_overlap_allreduce(cl_comm *c, const cl_overlap *o, double *seconds);

/* The baselines: the student's entry "kernels" after a barrier, then the library's AllReduce;
 * sets s->kernels_s and s->allreduce_s. A student call that fails returns its status. */
cl_result cl_overlap_alone(cl_comm *c, const cl_overlap *o, cl_overlap_sample *s);

/* The student's entry "step" after a barrier, then its gradients checked against the sum over
 * the ranks of seed's data. This rank's: *start, its clock after the barrier; *seconds, the
 * call's time; *wrong, the wrong elements. A student call that fails returns its status. */
cl_result cl_overlap_step(cl_comm *c, const cl_overlap *o, uint64_t seed, double *start,
                          double *seconds, size_t *wrong);

/* A row (rank 0's; NULL elsewhere) with the n samples of kernels_s, allreduce_s and step_s;
 * the caller adds its columns and ends it. */
cl_row *cl_overlap_row(cl_run *run, const cl_comm *c, const cl_overlap_sample *s, int n);

/* The wrong elements of n samples. This function can't fail. */
long long cl_overlap_wrong(const cl_overlap_sample *s, int n);

/* The whole row of a run on real GPUs: the times and the wrong elements of n samples. */
void cl_overlap_gpu_row(cl_run *run, const cl_comm *c, const cl_overlap_sample *s, int n);

#endif /* COMMLAB_OVERLAP_H */
