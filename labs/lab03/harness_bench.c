/* harness_bench.c: lab 03's bench mode: the harness's own matrix, by the handout's method
 * with every byte checked, is the reference of the performance check; rounds of it and the
 * student's matrix alternate which goes first.
 */
#include <stdlib.h>
#include <string.h>

#include "lab03_harness.h"

/* --- the harness's own matrix: the reference of the performance check ------------------------ */

/* The operation of xfer.c, on the harness's communicator. */
static cl_result harness_op(cl_comm *c, int kind, int i, int j, size_t bytes, void *send,
                            void *recv)
{
    int me = cl_comm_rank(c), peer = me == i ? j : i;
    cl_request r[2];
    switch (kind) {
    case LAB03_UNI: return me == i ? cl_send(c, send, bytes, j) : cl_recv(c, recv, bytes, i);
    case LAB03_BIDIR:
        CL_CHECK(cl_irecv(c, recv, bytes, peer, &r[0]));
        CL_CHECK(cl_isend(c, send, bytes, peer, &r[1]));
        return cl_waitall(c, 2, r);
    default:
        if (me == i) {
            CL_CHECK(cl_send(c, send, bytes, j));
            return cl_recv(c, recv, bytes, j);
        }
        CL_CHECK(cl_recv(c, recv, bytes, i));
        return cl_send(c, send, bytes, i);
    }
}

/* The reference matrix: the handout's method, in the harness; data checked too. */
static cl_result harness_matrix(cl_run *run, cl_comm *c, int kind, size_t bytes,
                                const lab03_method *m, findings *f)
{
    int n = cl_comm_size(c), me = cl_comm_rank(c), P = m->warmup + m->iters * m->repeats;
    char *send, *recv;
    uint64_t seed;
    memset(f, 0, sizeof *f);
    CL_CHECK(cl_fresh_seed(run, c, &seed));
    CL_CHECK(cl_mem_alloc(c, (size_t)P * bytes, (void **)&send));
    CL_CHECK(cl_mem_alloc(c, (size_t)P * bytes, (void **)&recv));
    CL_CHECK(cl_poison(c, recv, (size_t)P * bytes, CL_INT32));
    for (int i = 0; i < n; i++)
        for (int j = kind == LAB03_UNI ? 0 : i + 1; j < n; j++) {
            if (i == j)
                continue;
            CL_CHECK(cl_barrier(c));
            if (me != i && me != j)
                continue;
            uint64_t ps = mix(seed, (uint64_t)(i * MAXR + j));
            for (int k = 0; k < P; k++)
                CL_CHECK(cl_fill_bytes(c, send + (size_t)k * bytes, bytes, op_seed(ps, k), me, 0));
            double per[LAB03_MAX_REPEATS];
            int k = 0;
            for (; k < m->warmup; k++)
                CL_CHECK(harness_op(c, kind, i, j, bytes, send + (size_t)k * bytes,
                                    recv + (size_t)k * bytes));
            for (int r = 0; r < m->repeats; r++) {
                double t0 = cl_comm_time(c);
                for (int q = 0; q < m->iters; q++, k++)
                    CL_CHECK(harness_op(c, kind, i, j, bytes, send + (size_t)k * bytes,
                                        recv + (size_t)k * bytes));
                per[r] = (cl_comm_time(c) - t0) / m->iters;
            }
            double mid = median_of_runs(per, m->repeats);
            if (me == i)
                f->ref[i * n + j] = ref_metric(kind, bytes, mid);
            if (kind != LAB03_UNI || me == j)
                for (int q = 0; q < P; q++) {
                    size_t wrong;
                    CL_CHECK(cl_count_wrong_bytes(c, recv + (size_t)q * bytes, bytes,
                                                  op_seed(ps, q), me == i ? j : i, 0, &wrong));
                    f->wrong[i * n + j] += (double)wrong;
                }
        }
    CL_CHECK(cl_barrier(c));
    CL_CHECK(cl_mem_free(c, send));
    CL_CHECK(cl_mem_free(c, recv));
    CL_CHECK(cl_agree_max(c, f->ref, n * n));
    return cl_agree_sum(c, f->wrong, n * n);
}

/* Rounds of (the student's matrix, the harness's matrix), alternating which goes
 * first; one paired sample per pair and round. */
cl_result bench_mode(cl_run *run, cl_comm *c)
{
    lab03_method m;
    int kind, noise, n = cl_comm_size(c);
    size_t bytes = cl_run_opts(run)->bytes;
    CL_CHECK(parse_method(run, &m, &kind, &noise));
    CL_CHECK(check_size(c, bytes, &m));
    int rounds;
    CL_CHECK(cl_opt_int(run, "rounds", 1, 64, &rounds));
    findings *f = malloc(sizeof *f), *h = malloc(sizeof *h);
    double(*mine)[64] = calloc((size_t)n * n, sizeof *mine);
    double(*rebuilt)[64] = calloc((size_t)n * n, sizeof *rebuilt);
    double(*ref)[64] = calloc((size_t)n * n, sizeof *ref);
    double *wrong = calloc((size_t)n * n, sizeof *wrong), *off = calloc((size_t)n * n, sizeof *off);
    if (!f || !h || !mine || !rebuilt || !ref || !wrong || !off)
        return CL_ERR_NOMEM;
    cl_call_result res = {0};
    for (long r = -1; r < rounds; r++) { /* round -1 warms both up */
        for (int side = 0; side < 2; side++) {
            if ((side == 0) == (r % 2 == 0)) {
                CL_CHECK(student_matrix(run, c, kind, bytes, &m, noise, f, &res));
                CL_CHECK(call_failed(&res));
            } else {
                CL_CHECK(harness_matrix(run, c, kind, bytes, &m, h));
            }
        }
        for (int p = 0; r >= 0 && p < n * n; p++) {
            mine[p][r] = f->writers[p] ? f->value[p] : 0;
            rebuilt[p][r] = f->ref[p];
            ref[p][r] = h->ref[p];
            wrong[p] += f->wrong[p] + h->wrong[p];
            off[p] += f->ops_off[p] + (f->visits[p] > 1);
        }
    }
    report_method(run, kind, bytes, &m);
    for (int i = 0; i < n; i++)
        for (int j = kind == LAB03_UNI ? 0 : i + 1; j < n; j++) {
            if (i == j)
                continue;
            int p = i * n + j;
            cl_row *row = cl_row_begin(run, c);
            cl_col_int(row, "i", i);
            cl_col_int(row, "j", j);
            cl_col_nums(row, "student", mine[p], (size_t)rounds, "%.3f");
            cl_col_nums(row, "rebuilt", rebuilt[p], (size_t)rounds, "%.3f");
            cl_col_nums(row, "reference", ref[p], (size_t)rounds, "%.3f");
            cl_col_int(row, "wrong_bytes", (long long)wrong[p]);
            cl_col_int(row, "ops_off", (long long)off[p]);
            cl_row_end(row);
        }
    free(f), free(h), free(mine), free(rebuilt), free(ref), free(wrong), free(off);
    return CL_OK;
}
