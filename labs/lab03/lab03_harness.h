/* lab03_harness.h: what lab 03's driver.c shares with its harness_*.c files.
 *
 * driver.c          the student's entries (both sides compile it) and the lab's table
 * harness_ops.c     the record of every operation the student's code makes (LAB03_OP_BEGIN):
 *                   fresh data, every byte checked, the timed runs rebuilt
 * harness_call.c    one call of the student's matrix, and the method the options give it
 * harness_checks.c  the metric and matrix modes
 * harness_bench.c   the bench mode: the harness's own matrix, the reference, interleaved
 * harness_infer.c   the infer mode: three matrices, then the student's reading
 */
#ifndef COMMLAB_LAB03_HARNESS_H
#define COMMLAB_LAB03_HARNESS_H

#include <stdint.h>

#include "harness/harness.h"
#include "lab03.h"
#include "xfer.h"

#ifndef MAXR
#define MAXR LAB03_MAX_RANKS
#endif

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct metric_args {
    int32_t kind;
    uint64_t bytes;
    double seconds;
    double value; /* out */
} metric_args;

typedef struct matrix_args {
    int32_t kind;
    uint64_t bytes;
    lab03_method m;
    double matrix[MAXR * MAXR]; /* in/out, n x n row-major with n = ranks */
} matrix_args;

typedef struct infer_args {
    int32_t n;
    uint64_t bytes;
    double link_gbps;
    double uni[MAXR * MAXR], bidir[MAXR * MAXR], lat_us[MAXR * MAXR];
    int32_t link[MAXR * MAXR]; /* out */
} infer_args;

#ifndef CL_STUDENT_SIDE
/* Per pair (index i * n + j), after every rank's findings are combined. */
typedef struct findings {
    double value[MAXR * MAXR];   /* the student's merged matrix */
    double writers[MAXR * MAXR]; /* ranks that wrote each entry */
    double visits[MAXR * MAXR];  /* times the pair was measured (timing rank's count) */
    double ops_off[MAXR * MAXR]; /* visits with the wrong number or order of operations */
    double wrong[MAXR * MAXR];   /* bytes that arrived wrong */
    double ref[MAXR * MAXR];     /* the metric of the median run, rebuilt by the harness */
    double spread[MAXR * MAXR];  /* slowest run / fastest run */
    double slow[MAXR * MAXR];    /* runs held up */
    double start[MAXR * MAXR], end[MAXR * MAXR];
    double refused;
} findings;

#define BIG 1e6 /* start times (seconds from an origin) are agreed on as BIG - t, a maximum */

/* --- harness_ops.c --- */

/* The student's matrix call, in three steps: ops_start (on every rank) before it, then
 * lab_op (the lab's cl_lab.lab_op) for each LAB03_OP_BEGIN during it, ops_finish after it. */
cl_result ops_start(cl_run *run, cl_comm *c, int kind, size_t bytes, const lab03_method *m,
                    int noise);
cl_result lab_op(cl_run *run, cl_comm *c, int code, void *args, size_t bytes);
cl_result ops_finish(cl_comm *c, const double *matrix, findings *f, char *why, size_t whylen);

/* Small helpers the files share. */
uint64_t mix(uint64_t a, uint64_t b);
uint64_t op_seed(uint64_t pair_seed, int k);
double median_of_runs(double *per, int n);                 /* sorts per[0..n-1] */
double ref_metric(int kind, size_t bytes, double seconds); /* the handout's metric */

/* --- harness_call.c --- */

extern const char *const kind_names[3]; /* lab03_kind's, in order */

/* The method of --kind, --warmup, --iters, --repeats and --noise, checked; then whether
 * its buffers fit (and the ranks); and the method in the report. */
cl_result parse_method(cl_run *run, lab03_method *m, int *kind, int *noise);
cl_result check_size(cl_comm *c, size_t bytes, const lab03_method *m);
void report_method(cl_run *run, int kind, size_t bytes, const lab03_method *m);

/* Run the student's matrix of kind once, with fresh buffers, and gather findings. */
cl_result student_matrix(cl_run *run, cl_comm *c, int kind, size_t bytes, const lab03_method *m,
                         int noise, findings *f, cl_call_result *res);

/* The call's failure (its error and what it did that is forbidden) as the mode's, or CL_OK. */
cl_result call_failed(const cl_call_result *res);

/* --- the modes (harness_checks.c, harness_bench.c, harness_infer.c) --- */

cl_result metric_case(cl_case *c);
cl_result matrix_mode(cl_run *run, cl_comm *c);
cl_result bench_mode(cl_run *run, cl_comm *c);
cl_result infer_mode(cl_run *run, cl_comm *c);
#endif

#endif /* COMMLAB_LAB03_HARNESS_H */
