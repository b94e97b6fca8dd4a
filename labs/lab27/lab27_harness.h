/* lab27_harness.h: the harness's side of lab 27.
 *
 * driver.c           the student's entries (both sides compile it) and the lab's table
 * harness_ops.c      the lab's operations (lab_op): the collective, the fills, the checks and
 *                    the elements the harness corrupts
 * harness_ref.c      the harness's reference benchmark
 * harness_sweep.c    the sweep mode: the reference and the student's benchmark, taking turns
 * harness_compare.c  the compare mode: the student's before/after record of one change
 */
#ifndef COMMLAB_LAB27_HARNESS_H
#define COMMLAB_LAB27_HARNESS_H

#include <stdint.h>

#include "harness/harness.h"
#include "lab27.h"

/* The operations (harness_ops.c): the student's calls come through lab27_lab_op. */
cl_result lab27_lab_op(cl_run *run, cl_comm *c, int code, void *args, size_t bytes);
cl_result lab27_coll_op(cl_comm *c, cl_coll_kind kind, const void *send, void *recv, size_t count);
cl_result lab27_fill_op(cl_comm *c, void *buf, size_t count, size_t first);
cl_result lab27_check_op(cl_comm *c, const void *buf, size_t count, int lo, int hi, size_t first,
                         long long *wrong);

/* The collective calls the rank has made so far (the student's and the reference's). */
uint64_t lab27_colls(cl_comm *c);

/* A run's fresh seeds (the data's, the corruption's), and the rank's buffers released. */
void lab27_ops_begin(uint64_t seed);
void lab27_ops_end(cl_comm *c);

/* The elements the harness corrupts after every call of (kind, count, in place): none in
 * about two rows of three; else k elements of rank victim's output from off. */
typedef struct lab27_corruption {
    int k, victim;
    size_t off;
} lab27_corruption;
lab27_corruption lab27_corruption_of(cl_coll_kind kind, size_t count, int in_place, int p);

/* The reference benchmark (harness_ref.c): round k of every size into ref[size][k]. */
typedef struct lab27_ref_row {
    size_t size, count, sendcount, recvcount;
    double us[2];
    long long wrong[2], corrupted[2];
} lab27_ref_row;
cl_result lab27_ref_sweep(cl_comm *c, const lab27_config *cfg, lab27_ref_row ref[][9], int k);

/* The modes (harness_sweep.c, harness_compare.c). */
cl_result sweep_mode(cl_run *run, cl_comm *c);
cl_result compare_case(cl_case *c);

#endif /* COMMLAB_LAB27_HARNESS_H */
