/* harness.h: the lab harness: what a lab's plug-in declares, and what the harness gives it.
 *
 * A lab is a student file (labs/labNN/labNN.c), a short plug-in
 * (labs/labNN/driver.c) and a spec for the grader (grader/labs/labNN.py).
 * The harness owns main(): the options, starting the student's program and
 * the ranks, the deadline, the timing, the data checks, the table people read
 * and the JSON the grader reads. The plug-in only says what is particular to
 * its chapter, in one definition:
 *
 *     const cl_lab cl_lab_def = {
 *         .name = "lab01",
 *         .title = "Point-to-point cost model",
 *         .modes = (const cl_mode[]){
 *             {.name = "estimate", .help = "the step estimate of each case",
 *              .cases = estimate_case},
 *             {.name = "sweep", .help = "ping-pong at every size", .ranks = sweep,
 *              .min_ranks = 2},
 *             {0}},
 *     };
 *
 * Two kinds of mode:
 *   cases  one process and no ranks: for each case (a line of key=value
 *          pairs from --cases FILE, or the key=value arguments), the harness
 *          calls cases(c); it reads the case, calls the student's function,
 *          checks or reports what came back, one row per case.
 *   ranks  the harness starts the ranks of --backend (mpirun's processes on
 *          "cpu" and "gpu", --nranks simulated ranks on "sim") and calls
 *          ranks(run, comm) on every rank; it measures, calls the student's
 *          functions on every rank, and rank 0 adds the rows.
 * A collective lab needs neither: cl_coll_suite() (coll_suite.h) gives it the
 * modes verify, bench and sweep from a table of its collectives.
 *
 * The trust line: this file's functions run in the harness, never in the
 * student's program. The student's functions run only through
 * cl_student_run() (boundary/boundary.h), in their own process.
 */
#ifndef COMMLAB_HARNESS_H
#define COMMLAB_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "boundary/boundary.h"
#include "coll.h"
#include "dtype.h"
#include "launch.h"
#include "p2p.h"
#include "result.h"
#include "stats.h"
#include "student/student.h"

typedef struct cl_run cl_run;   /* one run of one mode (the harness's) */
typedef struct cl_case cl_case; /* one case of a cases mode */
typedef struct cl_row cl_row;   /* a row of the report */

typedef struct cl_mode {
    const char *name;
    const char *help;                               /* one line, for --help */
    cl_result (*cases)(cl_case *c);                 /* a cases mode */
    cl_result (*ranks)(cl_run *run, cl_comm *comm); /* a ranks mode */
    int min_ranks;                                  /* ranks mode: at least this many */
    const char *backends;                           /* "cpu,sim": allowed (NULL: all) */
} cl_mode;

/* A lab-specific option: --name VALUE, read with cl_opt(). */
typedef struct cl_option {
    const char *name;
    const char *help;
    const char *fallback; /* the value when not given (NULL: none) */
} cl_option;

typedef struct cl_lab {
    const char *name;
    const char *title;
    const cl_mode *modes;                    /* ends with {0} */
    const cl_option *options;                /* ends with {0}; may be NULL */
    const struct cl_coll_entry *collectives; /* a collective lab's table (coll_suite.h),
                                                ends with {0}: adds verify, bench, sweep */
    unsigned permits;                        /* CL_PERMIT_* for the student's program */
    size_t arena_bytes; /* shared memory for the student's program (0: 64 MiB) */
    /* The lab's own operations, which code it gives the student calls with
     * cl_lab_call() (student.h): an emulated link, a modelled kernel. args is a
     * private copy of the argument block; it goes back when this returns CL_OK. */
    cl_result (*lab_op)(cl_run *run, cl_comm *comm, int code, void *args, size_t bytes);
    /* Adjust the start of the student's program from the run's options, before it
     * starts: extra environment (o->env) and permits. CL_ERR_UNSUPPORTED with a
     * reason when the run needs what this machine lacks (the grader skips it). */
    cl_result (*student_setup)(cl_run *run, cl_student_opts *o);
} cl_lab;

/* Every lab's plug-in defines it; the harness's main() runs it. */
extern const cl_lab cl_lab_def;

/* --- options ----------------------------------------------------------------------------
 * Every lab program takes, before or after the mode:
 *   --json FILE      also write the results as JSON (the table still prints)
 *   --backend B      cpu (default), gpu, sim      --system S   sim's recorded system
 *   --nranks N       sim's ranks                  --seed N     the data's seed (default: random)
 *   --repeats R      samples per measurement      --iters N    calls per sample
 *   --bytes N        one size; nccl-tests' forms: 8, 64K, 1M, 2G
 *   -b/--min-bytes N, -e/--max-bytes N, -f/--factor K   a size sweep
 *   --dtype T, --op O, --coll A,B   the collective labs' selection
 *   --cases FILE     a cases mode's input, one case per line
 *   --deadline SEC   give up (exit status 3) after SEC seconds
 *   --student PATH   the student's program (default: <this program>-student)
 *   -h/--help
 * and the lab's own options. key=value arguments are a case's parameters. */

typedef struct cl_opts {
    const char *json, *backend, *system, *cases, *student, *colls;
    int nranks, repeats, iters, factor;
    size_t bytes, min_bytes, max_bytes;
    cl_dtype dtype;
    cl_op op;
    uint64_t seed;
    int seed_given;
    double deadline;
} cl_opts;

const cl_opts *cl_run_opts(const cl_run *run);

/* The value of a lab option (its fallback when not given; NULL without one). */
const char *cl_opt(const cl_run *run, const char *name);

/* A lab option as a whole number, or a number, from lo to hi. Anything else (no value,
 * a word, a fraction where a whole number is wanted, out of range) is CL_ERR_INVALID
 * with a reason naming the option and the range. */
cl_result cl_opt_int(const cl_run *run, const char *name, long lo, long hi, int *out);
cl_result cl_opt_num(const cl_run *run, const char *name, double lo, double hi, double *out);

/* A lab option as a size (cl_parse_size's forms); not given, the backend's default: sim
 * on "sim", cpu on every other backend. */
cl_result cl_opt_size(const cl_run *run, const char *name, size_t cpu, size_t sim, size_t *out);

/* A size in nccl-tests' form ("8", "64K", "1M", "2G", powers of 1024).
 * CL_ERR_INVALID with a reason for anything else (negative, fractional, too large). */
cl_result cl_parse_size(const char *text, size_t *out);

/* Numbers separated by commas ("3,1,0,2", "0.5,1e3") into out[0..*n), at most max.
 * CL_ERR_INVALID with a reason for anything else (an empty item, a word, too many). */
cl_result cl_parse_numbers(const char *text, double *out, int max, int *n);

/* --- cases ------------------------------------------------------------------------------- */

/* The case's parameters: key=value pairs. A missing key or a bad number is
 * CL_ERR_INVALID with a reason naming the key (the case's row says it). */
cl_result cl_case_str(cl_case *c, const char *key, const char **out);
cl_result cl_case_num(cl_case *c, const char *key, double *out);
cl_result cl_case_int(cl_case *c, const char *key, long long *out);
cl_result cl_case_nums(cl_case *c, const char *key, double *out, int max,
                       int *n); /* key=1,2.5,3 (cl_parse_numbers) */

/* A number of the case, or fallback when the key is absent; fallback NAN makes the key
 * required (CL_ERR_INVALID, "the case needs key="). A bad number is CL_ERR_INVALID. */
cl_result cl_case_num_or(cl_case *c, const char *key, double fallback, double *out);

/* The case's row (its "case" column is its number) and its run. */
cl_row *cl_case_row(cl_case *c);
cl_run *cl_case_run(cl_case *c);

/* Call the student's function `entry` for the case: the argument block goes to
 * the student's program and comes back (with what the function wrote into
 * it). The row gets the status and error columns. Returns the function's
 * status; CL_ERR_CRASHED or CL_ERR_TIMEOUT end the mode. */
cl_result cl_case_call(cl_case *c, const char *entry, void *args, size_t bytes);

/* Call entry for the case without adding columns: for a case that calls the
 * student's functions many times (a time-stepped model calls one per step)
 * and reports the calls itself. allow and res as cl_student_run's. Returns
 * CL_OK when the harness did its part; a crash or timeout of the student's
 * program is returned and ends the mode. */
cl_result cl_case_call_quiet(cl_case *c, const char *entry, void *args, size_t bytes,
                             unsigned allow, cl_call_result *res);

/* Copy n bytes into memory the student's program can read (the arena) and
 * return its address there, for pointers inside an argument block; NULL with
 * a reason when the arena is full. */
void *cl_share(const void *data, size_t n);

/* --- calling the student's code on a rank -------------------------------------------------- */

/* Run entry on the rank of comm with the argument block args (bytes long; the
 * block comes back with what the function wrote). allow (CL_ALLOW_*) says which
 * operations it may use. res gets the status, the error, the first forbidden
 * operation and the time the call took on the rank's clock. Returns CL_OK when
 * the harness did its part; a crash or timeout of the student's program is
 * returned (and ends the mode). */
cl_result cl_student_run(cl_comm *comm, const char *entry, void *args, size_t bytes, unsigned allow,
                         cl_call_result *res);

/* Memory every rank's student program shares with the others and with the
 * harness, mapped at the same address everywhere (CL_REGION_BASE), zeroed:
 * lab09's rings. Every rank of comm calls it once, with the same size; shared
 * memory between the processes of one node ("cpu", "gpu") or of the one
 * simulated program ("sim"). */
cl_result cl_shared_region(cl_comm *comm, size_t bytes, void **base);

/* --- data on any backend (filled and checked from the harness's side) ------------------------ */

/* A fresh seed, the same on every rank of comm, that the student's program
 * never sees (it comes from the harness's random source, or --seed). */
cl_result cl_fresh_seed(cl_run *run, cl_comm *comm, uint64_t *seed);

/* Fill count elements of buf with rank `owner`'s inputs of (seed, t, op),
 * starting at global index first (data.h: any reduction order is exact). */
cl_result cl_fill(cl_comm *c, void *buf, size_t count, cl_dtype t, cl_op op, uint64_t seed,
                  int owner, size_t first);

/* Fill bytes of buf with owner's raw bytes for seed (payloads that are not reduced). */
cl_result cl_fill_bytes(cl_comm *c, void *buf, size_t bytes, uint64_t seed, int owner,
                        size_t first);

/* Fill bytes of buf with a value no fill produces. */
cl_result cl_poison(cl_comm *c, void *buf, size_t bytes, cl_dtype t);

/* *wrong = elements of buf[0..count) that differ, bit for bit, from the
 * reduction with op over owners lo..hi-1 of their inputs (seed, t, op) from
 * global index first. A single owner's copy is lo..lo+1. */
cl_result cl_count_wrong(cl_comm *c, const void *buf, size_t count, cl_dtype t, cl_op op,
                         uint64_t seed, int lo, int hi, size_t first, size_t *wrong);

/* The same for raw bytes of owner. */
cl_result cl_count_wrong_bytes(cl_comm *c, const void *buf, size_t bytes, uint64_t seed, int owner,
                               size_t first, size_t *wrong);

/* *n = elements of buf (count of type t) that are no longer the poison of
 * cl_poison(): written where nothing should be. */
cl_result cl_count_unpoisoned(cl_comm *c, const void *buf, size_t count, cl_dtype t, size_t *n);

/* The tolerant check: *far = elements of buf (count doubles or floats, t
 * CL_FLOAT32 or CL_FLOAT64) farther from expected[] than max(rel * |e|, abs). */
cl_result cl_count_far(cl_comm *c, const void *buf, const double *expected, size_t count,
                       cl_dtype t, double rel, double abs, size_t *far);

/* Every rank of comm gets the maximum over ranks of v[0..n) (non-negative
 * values: times, sizes; a negative or NaN value counts as 0), or the sum (of
 * whole numbers: counts). */
cl_result cl_agree_max(cl_comm *comm, double *v, int n);
cl_result cl_agree_sum(cl_comm *comm, double *v, int n);

/* Every rank of comm gets every rank's value: all[r] = rank r's mine, for each of
 * the cl_comm_size(comm) ranks. */
cl_result cl_agree_gather(cl_comm *comm, int64_t mine, int64_t *all);

/* The library's collective of kind (cl_library_coll) after a barrier, timed on c's
 * clock: *seconds is the slowest rank's time, the same on every rank. */
cl_result cl_library_coll_timed(cl_comm *c, cl_coll_kind kind, const cl_coll_args *a,
                                double *seconds);

#define CL_LIBRARY_BUSBW_MAX_REPEATS 64

/* The bus bandwidth of the library's collective of kind, CL_COLL_ALLREDUCE or
 * CL_COLL_ALLGATHER, on count floats of c (summed; ALLGATHER: count a multiple of c's size),
 * --repeats times (at most CL_LIBRARY_BUSBW_MAX_REPEATS): each time fresh inputs, a warm-up
 * call whose output is checked, then --iters calls after a barrier of all, timed on c's clock.
 * Every rank of all calls it at once, with c all itself or the rank's own part of all (a TP
 * group, say). busbw[r] (GB/s) is repeat r's, of the slowest rank of all; *repeats how many;
 * *wrong the warm-ups' wrong elements, summed over all. */
cl_result cl_library_coll_busbw(cl_run *run, cl_comm *c, cl_comm *all, cl_coll_kind kind,
                                size_t count, double *busbw, int *repeats, double *wrong);

/* --- the report: a table for people, JSON for the grader ------------------------------------ */

/* Header fields (before the rows): "# key: value" lines and top-level JSON. */
void cl_report_str(cl_run *run, const char *key, const char *value);
void cl_report_num(cl_run *run, const char *key, double value);
void cl_report_int(cl_run *run, const char *key, long long value);

/* A new row (rank 0 only: other ranks get NULL, which every cl_col_* ignores).
 * Columns print in the order added; cl_row_end() prints the row. */
cl_row *cl_row_begin(cl_run *run, const cl_comm *comm);
void cl_col_str(cl_row *r, const char *key, const char *value);
void cl_col_int(cl_row *r, const char *key, long long value);
void cl_col_num(cl_row *r, const char *key, double value, const char *fmt);
/* An array: JSON gets every value, the table its median. */
void cl_col_nums(cl_row *r, const char *key, const double *v, size_t n, const char *fmt);
void cl_col_ints(cl_row *r, const char *key, const long long *v, size_t n);
void cl_row_end(cl_row *r);

/* The status columns of a student call: status, error and forbidden. */
void cl_col_call(cl_row *r, const cl_call_result *res);

#endif /* COMMLAB_HARNESS_H */
