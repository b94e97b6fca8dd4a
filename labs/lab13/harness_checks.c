/* harness_checks.c: lab 13's modes that check a connection and the data it moves: connect
 * (every step on both ranks, each checked, then a probe WRITE), write (RDMA WRITEs of fresh
 * data at several sizes and depths, and one to a damaged rkey that must fail) and lat (a
 * SEND/RECV ping-pong of fresh data both ways, its one-way latency).
 */
#include <stdio.h>
#include <string.h>

#include "emu/ref.h"
#include "session/session.h"

cl_result connect_mode(cl_run *run, cl_comm *c)
{
    CL_CHECK(l13_setup(run, c));
    l13_steps s = {.run = run, .c = c, .report = 1};
    CL_CHECK(l13_connect_all(&s));
    /* The connection carries data: rank 0 writes 64 KiB to rank 1. */
    if (!s.failed) {
        l13_write_result w;
        l13_report r = {0};
        CL_CHECK(l13_write(run, c, 0, 64 << 10, 4096, 4, &L13.remote, &w));
        if (cl_comm_rank(c) == 0 && w.status != CL_OK)
            snprintf(r.why, sizeof r.why, "lab13_write: %.400s", w.why), r.status = w.status;
        else if (cl_comm_rank(c) == 1 && w.wrong)
            l13_fail(&r, "%lld of the 65536 bytes rank 0 wrote arrived wrong", w.wrong);
        CL_CHECK(l13_end_step(&s, "probe", &r));
    } else {
        l13_not_run(&s, "probe");
    }
    CL_CHECK(l13_step_close(&s)); /* on both ranks (it synchronises them), whatever failed */
    l13_teardown();
    return CL_OK;
}

cl_result write_mode(cl_run *run, cl_comm *c)
{
    CL_CHECK(l13_setup(run, c));
    CL_CHECK(l13_connected(run, c));
    static const struct {
        const char *name;
        size_t offset, total, msg;
        int depth;
    } cases[] = {
        {"one message", 0, 4096, 4096, 1},
        {"64 KiB, 4 KiB x 4", 0, 64 << 10, 4096, 4},
        {"at an offset", 12288, 12288 * 9, 12288, 3},
        {"multi-packet, deep", 65536, 2 << 20, 65536, 16},
        {"small messages", 4096, 256 * 64, 256, 32},
        {"1 MiB messages", 1 << 20, 8 << 20, 1 << 20, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        l13_write_result w;
        CL_CHECK(l13_write(run, c, cases[i].offset, cases[i].total, cases[i].msg, cases[i].depth,
                           &L13.remote, &w));
        l13_write_row(run, c, cases[i].name, cases[i].offset, cases[i].total, cases[i].msg,
                      cases[i].depth, &w);
    }
    /* A damaged rkey: the WRITE must fail, and the failure must be reported. */
    lab13_endpoint bad = L13.remote;
    bad.rkey ^= 0x5a5a00;
    l13_write_result w;
    CL_CHECK(l13_write(run, c, 0, 16 << 10, 4096, 4, &bad, &w));
    l13_write_row(run, c, "wrong rkey (must fail)", 0, 16 << 10, 4096, 4, &w);
    CL_CHECK(l13_close(run, c));
    l13_teardown();
    return CL_OK;
}

cl_result lat_mode(cl_run *run, cl_comm *c)
{
    CL_CHECK(l13_setup(run, c));
    CL_CHECK(l13_connected(run, c));
    int rank = cl_comm_rank(c);
    const int iters = cl_run_opts(run)->iters > 1 ? cl_run_opts(run)->iters : 200;
    const size_t sizes[] = {8, 4096};
    const size_t send_off = 0, recv_off = 8 << 20;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t bytes = sizes[i];
        uint64_t seed;
        CL_CHECK(cl_fresh_seed(run, c, &seed));
        CL_CHECK(cl_fill_bytes(c, L13.host + send_off, bytes, seed, rank, 0));
        memset(L13.host + recv_off, 0xab, bytes);
        CL_CHECK(l13_together(c));
        pingpong_args a = {.conn = L13.conn,
                           .server = rank == 1,
                           .send_off = send_off,
                           .recv_off = recv_off,
                           .bytes = bytes,
                           .iters = iters};
        cl_call_result res;
        double t;
        hca_counters k;
        CL_CHECK(l13_call(c, "pingpong", &a, sizeof a, &res, &t, &k));
        size_t wrong = 0;
        CL_CHECK(cl_count_wrong_bytes(c, L13.host + recv_off, bytes, seed, 1 - rank, 0, &wrong));
        int64_t v[8] = {0};
        v[rank] = res.status;
        v[2 + rank] = (int64_t)wrong;
        v[4 + rank] = k.sends;
        v[6 + rank] = k.recvs;
        CL_CHECK(cl_agree(c, CL_SUM, v, 8));
        L13.bd->rep[rank].status = res.status;
        snprintf(L13.bd->rep[rank].why, sizeof L13.bd->rep[rank].why, "%s", res.error);
        CL_CHECK(cl_barrier(c));
        double ref = L13.emu ? ref_pingpong_seconds(L13.link, bytes, iters) : 0;
        cl_row *row = cl_row_begin(run, c);
        cl_col_int(row, "bytes", (long long)bytes);
        cl_col_int(row, "iters", iters);
        for (int r = 0; r < 2; r++) {
            char k0[24];
            snprintf(k0, sizeof k0, "status%d", r);
            cl_col_str(row, k0, v[r] == CL_OK ? "ok" : cl_result_str((cl_result)v[r]));
            snprintf(k0, sizeof k0, "why%d", r);
            cl_col_str(row, k0, L13.bd->rep[r].why);
            snprintf(k0, sizeof k0, "wrong_bytes%d", r);
            cl_col_int(row, k0, v[2 + r]);
            if (L13.emu) {
                snprintf(k0, sizeof k0, "sends%d", r);
                cl_col_int(row, k0, v[4 + r]);
                snprintf(k0, sizeof k0, "recvs%d", r);
                cl_col_int(row, k0, v[6 + r]);
            }
        }
        cl_col_num(row, "one_way_us", t / (2.0 * iters) * 1e6, "%.3f");
        if (L13.emu)
            cl_col_num(row, "reference_us", ref * 1e6, "%.3f");
        cl_row_end(row);
        CL_CHECK(cl_barrier(c));
        if (v[0] != CL_OK || v[1] != CL_OK)
            break; /* the QPs may be in error: the next size cannot run */
    }
    CL_CHECK(l13_close(run, c));
    l13_teardown();
    return CL_OK;
}
