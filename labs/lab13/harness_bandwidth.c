/* harness_bandwidth.c: lab 13's WRITE bandwidth modes: bw (the student's WRITE loop at one
 * size and depth, against the harness's), plan (the student's lab13_write_plan run, with the
 * fewest bytes in flight that reach the plan's share of the link) and sweep (the loop over
 * sizes and depths, as ib_write_bw -a).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/ref.h"
#include "session/session.h"

static cl_result parse_depth(cl_run *run, int *depth)
{
    return cl_opt_int(run, "depth", 1, MAX_WR, depth);
}

cl_result bw_mode(cl_run *run, cl_comm *c)
{
    const cl_opts *o = cl_run_opts(run);
    int depth;
    CL_CHECK(parse_depth(run, &depth));
    size_t msg = o->bytes, total = PLAN_TOTAL;
    if (!msg || msg > total || total % msg) {
        cl_set_error("--bytes must divide %zu", total);
        return CL_ERR_INVALID;
    }
    CL_CHECK(l13_setup(run, c));
    CL_CHECK(l13_connected(run, c));
    int reps = o->repeats > 20 ? 20 : o->repeats;
    double mine[20], base[20];
    long long wrong = 0;
    int status = CL_OK;
    char why[480] = "";
    for (int r = 0; r < reps; r++) {
        l13_write_result w;
        CL_CHECK(l13_write(run, c, 0, total, msg, depth, &L13.remote, &w));
        wrong += w.wrong;
        if (w.status != CL_OK && status == CL_OK)
            status = w.status, snprintf(why, sizeof why, "%s", w.why);
        mine[r] = w.status == CL_OK && w.seconds > 0 ? total / w.seconds / 1e9 : 0;
        double b = L13.emu ? ref_write_seconds(L13.link, msg, depth, total) : 0;
        base[r] = b > 0 ? total / b / 1e9 : 0;
    }
    cl_row *row = cl_row_begin(run, c);
    cl_col_int(row, "msg", (long long)msg);
    cl_col_int(row, "depth", depth);
    cl_col_int(row, "total", (long long)total);
    cl_col_str(row, "status", status == CL_OK ? "ok" : cl_result_str(status));
    cl_col_str(row, "why", why);
    cl_col_int(row, "wrong_bytes", wrong);
    cl_col_nums(row, "student_gbps", mine, (size_t)reps, "%.3f");
    if (L13.emu)
        cl_col_nums(row, "base_gbps", base, (size_t)reps, "%.3f");
    cl_row_end(row);
    CL_CHECK(l13_close(run, c));
    l13_teardown();
    return CL_OK;
}

/* The fewest bytes in flight with which the harness's loop reaches share of the link, over
 * the plan's sizes (powers of two, 256 B .. 1 MiB) and depths (1 .. MAX_WR). */
static double frontier(int link, double share, size_t *best_msg, int *best_depth)
{
    double rate = hca_fabric_model(L13.fabric)->wire_Bps, best = 0;
    for (size_t msg = 256; msg <= ((size_t)1 << 20); msg *= 2) {
        double s = ref_write_seconds(link, msg, MAX_WR, PLAN_TOTAL);
        if (s <= 0 || PLAN_TOTAL / s < share * rate)
            continue;
        int lo = 1, hi = MAX_WR; /* the bandwidth grows with the depth: the least that reaches */
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            double t = ref_write_seconds(link, msg, mid, PLAN_TOTAL);
            if (t > 0 && PLAN_TOTAL / t >= share * rate)
                hi = mid;
            else
                lo = mid + 1;
        }
        double fp = (double)msg * lo;
        if (best == 0 || fp < best)
            best = fp, *best_msg = msg, *best_depth = lo;
    }
    return best;
}

cl_result plan_mode(cl_run *run, cl_comm *c)
{
    CL_CHECK(l13_setup(run, c));
    int rank = cl_comm_rank(c);
    plan_args p = {{0, 0}};
    cl_call_result res;
    CL_CHECK(l13_call(c, "plan", &p, sizeof p, &res, NULL, NULL));
    int64_t v[2] = {(int64_t)p.plan.msg_bytes, p.plan.depth};
    CL_CHECK(cl_agree(c, CL_MAX, v, 2)); /* the same program on both ranks */
    size_t msg = (size_t)v[0];
    int depth = (int)v[1];
    int valid = msg >= 256 && msg <= ((size_t)1 << 20) && !(msg & (msg - 1)) && depth >= 1 &&
                depth <= MAX_WR;
    cl_report_int(run, "plan_msg_bytes", (long long)msg);
    cl_report_int(run, "plan_depth", depth);
    cl_report_int(run, "plan_valid", valid);
    cl_report_num(run, "plan_share", PLAN_SHARE);
    cl_report_num(run, "plan_slack", PLAN_SLACK);
    l13_write_result w;
    memset(&w, 0, sizeof w);
    if (valid) {
        CL_CHECK(l13_connected(run, c));
        CL_CHECK(l13_write(run, c, 0, PLAN_TOTAL, msg, depth, &L13.remote, &w));
        int64_t st[1] = {rank == 0 ? w.status : 0};
        CL_CHECK(cl_agree(c, CL_SUM, st, 1));
        w.status = (int)st[0];
    }
    cl_row *row = cl_row_begin(run, c);
    cl_col_int(row, "msg", (long long)msg);
    cl_col_int(row, "depth", depth);
    cl_col_int(row, "in_flight", (long long)msg * depth);
    cl_col_str(row, "status",
               !valid              ? "invalid plan"
               : w.status == CL_OK ? "ok"
                                   : cl_result_str(w.status));
    cl_col_str(row, "why", w.why);
    cl_col_int(row, "wrong_bytes", w.wrong);
    cl_col_int(row, "max_outstanding", w.max_outstanding);
    cl_col_int(row, "writes", w.writes);
    double gbps = valid && w.status == CL_OK && w.seconds > 0 ? PLAN_TOTAL / w.seconds / 1e9 : 0;
    cl_col_num(row, "gbps", gbps, "%.3f");
    if (L13.emu) {
        double rate = hca_fabric_model(L13.fabric)->wire_Bps / 1e9;
        size_t fm = 0;
        int fd = 0;
        double fp = rank == 0 ? frontier(L13.link, PLAN_SHARE, &fm, &fd) : 0;
        cl_col_num(row, "link_gbps", rate, "%.3f");
        cl_col_num(row, "share", gbps / rate, "%.4f");
        cl_col_int(row, "fewest_in_flight", (long long)fp);
        cl_col_int(row, "fewest_msg", (long long)fm);
        cl_col_int(row, "fewest_depth", fd);
        if (rank == 0) { /* the harness's loop: bandwidth against bytes in flight, to plot */
            static char curve[2048];
            size_t used = 0;
            for (size_t msg = 4096; msg <= ((size_t)256 << 10); msg *= 4)
                for (int depth = 1; depth <= 32 && used < sizeof curve; depth *= 2) {
                    double t = ref_write_seconds(L13.link, msg, depth, PLAN_TOTAL);
                    used += (size_t)snprintf(curve + used, sizeof curve - used, "%s%zu:%d:%.3f",
                                             used ? "," : "", msg, depth,
                                             t > 0 ? PLAN_TOTAL / t / 1e9 : 0.0);
                }
            cl_report_str(run, "reference_curve", curve);
        }
    }
    cl_row_end(row);
    if (valid)
        CL_CHECK(l13_close(run, c));
    l13_teardown();
    return CL_OK;
}

cl_result sweep_mode(cl_run *run, cl_comm *c)
{
    CL_CHECK(l13_setup(run, c));
    CL_CHECK(l13_connected(run, c));
    cl_report_str(run, "units", "msg in bytes, bandwidth in GB/s (model time on emu)");
    for (size_t msg = 1024; msg <= ((size_t)1 << 20); msg *= 4) {
        for (int depth = 1; depth <= MAX_WR; depth *= 2) {
            size_t total = msg * 256 < ((size_t)1 << 20) ? (size_t)1 << 20
                           : msg * 256 > PLAN_TOTAL      ? PLAN_TOTAL
                                                         : msg * 256;
            l13_write_result w;
            CL_CHECK(l13_write(run, c, 0, total, msg, depth, &L13.remote, &w));
            cl_row *row = cl_row_begin(run, c);
            cl_col_int(row, "msg", (long long)msg);
            cl_col_int(row, "depth", depth);
            cl_col_int(row, "in_flight", (long long)msg * depth);
            cl_col_str(row, "status", w.status == CL_OK ? "ok" : cl_result_str(w.status));
            cl_col_int(row, "wrong_bytes", w.wrong);
            cl_col_num(row, "gbps", w.seconds > 0 ? total / w.seconds / 1e9 : 0, "%.2f");
            cl_row_end(row);
            if (w.status != CL_OK) {
                cl_set_error("lab13_write failed: %s", w.why);
                return CL_ERR_INVALID;
            }
        }
    }
    CL_CHECK(l13_close(run, c));
    l13_teardown();
    return CL_OK;
}
