/* harness_model.c: the machines the cost model sees, the simulator's times of the two
 * algorithms, and the modes that score the model's choice (choose) and measure the two
 * algorithms side by side (compare). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab18_harness.h"
#include "sim/sim.h"

#define US 1e-6

/* --- machines ---------------------------------------------------------------------------- */

static void from_system(const cl_sim_system *s, int nodes, lab18_machine *m)
{
    /* Bandwidths: NCCL's effective figures of the system file (a GPU's NVLink ports to
     * the NVSwitch, one NIC). Latencies: NCCL's LL latencies of one ring step on NVLink and
     * on the network (tuning.cc hwLat), the network step with two fabric hops; the fixed
     * cost is the call's launch plus the ring's base latency. */
    *m = (lab18_machine){
        .nodes = nodes,
        .ranks_per_node = s->gpus_per_node,
        .nics_per_node = s->nics_per_node,
        .bw_intra = s->nvlinks_per_gpu * s->nvlink_gbps * 1e9,
        .bw_nic = s->nic_eff_gbps * 1e9,
        .lat_intra = s->lat_ring_nvl[CL_PROTO_LL128] * US,
        .lat_inter = (s->lat_ring_net[CL_PROTO_LL128] + 2 * s->fabric_hop_us) * US,
        .launch = (s->launch_us + s->lat_ring_base[CL_PROTO_LL128]) * US,
    };
}

cl_result machine_of_system(const char *system, int nodes, lab18_machine *m)
{
    cl_sim_system s;
    CL_CHECK(cl_sim_system_load(system, &s));
    if (s.node != CL_SIM_NODE_NVSWITCH) {
        cl_set_error("%s: the model's machines are NVSwitch nodes", system);
        return CL_ERR_INVALID;
    }
    from_system(&s, nodes, m);
    return CL_OK;
}

/* "GBPS:US" (a bandwidth in GB/s and a latency in microseconds). */
static cl_result link_of(const char *name, const char *text, double *bw, double *lat)
{
    double g, us;
    char extra;
    if (!text || sscanf(text, "%lf:%lf%c", &g, &us, &extra) != 2 || !(g > 0) || !(us >= 0)) {
        cl_set_error("--%s is GBPS:LATENCY_US (e.g. 0.025:80), not '%s'", name, text ? text : "");
        return CL_ERR_INVALID;
    }
    *bw = g * 1e9, *lat = us * US;
    return CL_OK;
}

cl_result machine_of_options(cl_run *run, lab18_machine *m)
{
    memset(m, 0, sizeof *m);
    m->nodes = nodes_count(), m->ranks_per_node = nodes_size();
    CL_CHECK(link_of("intra", cl_opt(run, "intra"), &m->bw_intra, &m->lat_intra));
    CL_CHECK(link_of("inter", cl_opt(run, "inter"), &m->bw_nic, &m->lat_inter));
    double launch;
    CL_CHECK(cl_opt_int(run, "nics", 1, 64, &m->nics_per_node));
    CL_CHECK(cl_opt_num(run, "launch", 0, 1e6, &launch)); /* microseconds */
    m->launch = launch * US;
    return CL_OK;
}

/* --- the simulator's times ---------------------------------------------------------------- */

static struct {
    char system[256];
    int nodes;
    cl_sim_machine m;
    int built;
} M;

cl_result simulated_times(const char *system, int nodes, double bytes, double *flat, double *hier)
{
    if (!M.built || M.nodes != nodes || strcmp(M.system, system) != 0) {
        if (M.built)
            cl_sim_machine_free(&M.m);
        M.built = 0;
        cl_sim_overrides ov = {.nodes = nodes, .routing = -1};
        CL_CHECK(cl_sim_machine_load(system, &ov, &M.m));
        snprintf(M.system, sizeof M.system, "%s", system);
        M.nodes = nodes, M.built = 1;
    }
    cl_sim_result r;
    CL_CHECK(cl_sim_predict_machine(&M.m, CL_COLL_ALLREDUCE, CL_ALGO_RING, bytes, &r));
    *flat = r.time_us * US;
    CL_CHECK(cl_sim_predict_machine(&M.m, CL_COLL_ALLREDUCE, CL_ALGO_HIER, bytes, &r));
    *hier = r.time_us * US;
    return CL_OK;
}

static const char *algo_name(int a) { return a == LAB18_HIER ? "hier" : "flat"; }

/* One point of the grid: the simulator's two times, your model's and your choice. */
cl_result choose_case(cl_case *c)
{
    const char *system;
    long long nodes;
    double bytes;
    CL_CHECK(cl_case_str(c, "system", &system));
    CL_CHECK(cl_case_int(c, "nodes", &nodes));
    CL_CHECK(cl_case_num(c, "bytes", &bytes));
    if (nodes < 1 || nodes > 1024 || !(bytes >= 0) || !isfinite(bytes)) {
        cl_set_error("nodes 1..1024 and bytes >= 0, not %lld and %g", nodes, bytes);
        return CL_ERR_INVALID;
    }
    model_args a = {.bytes = bytes, .choice = -1};
    double flat, hier;
    CL_CHECK(machine_of_system(system, (int)nodes, &a.m));
    CL_CHECK(simulated_times(system, (int)nodes, bytes, &flat, &hier));
    cl_result rc = cl_case_call(c, "model", &a, sizeof a);
    int valid = a.choice == LAB18_FLAT || a.choice == LAB18_HIER;
    double chosen = a.choice == LAB18_HIER ? hier : flat, best = fmin(flat, hier);
    cl_row *row = cl_case_row(c);
    cl_col_str(row, "system", system);
    cl_col_int(row, "nodes", nodes);
    cl_col_num(row, "bytes", bytes, "%.0f");
    cl_col_num(row, "sim_flat_us", flat / US, "%.2f");
    cl_col_num(row, "sim_hier_us", hier / US, "%.2f");
    cl_col_num(row, "model_flat_us", a.t_flat / US, "%.2f");
    cl_col_num(row, "model_hier_us", a.t_hier / US, "%.2f");
    cl_col_str(row, "choice", valid ? algo_name(a.choice) : "?");
    cl_col_num(row, "best_over_chosen", valid && chosen > 0 ? best / chosen : 0, "%.4f");
    if (rc == CL_OK && !valid) {
        cl_set_error("lab18_choose returned %d (LAB18_FLAT or LAB18_HIER)", (int)a.choice);
        rc = CL_ERR_INVALID;
    }
    return rc;
}

/* --- compare: the given flat ring and your hierarchy, interleaved ------------------------- */

#define GUARD   64
#define MAX_REP 64

typedef struct bufs {
    void *send, *recv, *scratch;
    size_t count, scratch_bytes;
} bufs;

/* One checked call of entry ("flat" or "allreduce") with fresh inputs; *seconds is the
 * slowest rank's time, *wrong the wrong or overrun elements over all ranks. */
static cl_result one_call(cl_run *run, cl_comm *c, const char *entry, bufs *b, double *seconds,
                          size_t *wrong, char *pattern, size_t plen)
{
    const cl_opts *o = cl_run_opts(run);
    int p = cl_comm_size(c);
    size_t es = cl_dtype_size(o->dtype), w = 0, over = 0;
    uint64_t seed;
    CL_CHECK(cl_fresh_seed(run, c, &seed));
    CL_CHECK(cl_fill(c, b->send, b->count, o->dtype, o->op, seed, cl_comm_rank(c), 0));
    CL_CHECK(cl_poison(c, b->recv, (b->count + GUARD) * es, o->dtype));
    cl_coll_args a = {.sendbuf = b->send,
                      .recvbuf = b->recv,
                      .count = b->count,
                      .dtype = o->dtype,
                      .op = o->op,
                      .scratch = b->scratch,
                      .scratch_bytes = b->scratch_bytes};
    cl_call_result res;
    CL_CHECK(cl_barrier(c));
    CL_CHECK(cl_student_run(c, entry, &a, sizeof a, CL_ALLOW_COLLECTIVE, &res));
    int64_t bad = res.status != CL_OK || res.forbidden[0];
    CL_CHECK(cl_agree(c, CL_MAX, &bad, 1));
    if (bad) {
        if (res.status != CL_OK || res.forbidden[0]) {
            cl_set_error("%s on rank %d: %s%s%s", entry, cl_comm_rank(c),
                         res.forbidden[0] ? "a forbidden operation: " : "",
                         res.forbidden[0] ? res.forbidden : "", res.error);
            return res.status != CL_OK ? res.status : CL_ERR_FORBIDDEN;
        }
        cl_set_error("%s failed on another rank", entry);
        return CL_ERR_INVALID;
    }
    CL_CHECK(cl_count_wrong(c, b->recv, b->count, o->dtype, o->op, seed, 0, p, 0, &w));
    CL_CHECK(cl_count_unpoisoned(c, (char *)b->recv + b->count * es, GUARD, o->dtype, &over));
    double v[2] = {(double)(w + over)};
    CL_CHECK(cl_agree_sum(c, v, 1));
    *wrong += (size_t)v[0];
    *seconds = res.seconds;
    CL_CHECK(cl_agree_max(c, seconds, 1));
    if (strcmp(entry, "allreduce") == 0) {
        int n;
        char why[300] = "";
        const cl_trace_event *ev = cl_student_trace(c, &n);
        int64_t off = !hier_pattern(c, &a, ev, n, why, sizeof why);
        int64_t any = off;
        CL_CHECK(cl_agree(c, CL_MAX, &any, 1));
        if (off && !pattern[0])
            snprintf(pattern, plen, "%s", why);
        else if (any && !pattern[0])
            snprintf(pattern, plen, "(on another rank)");
    }
    return CL_OK;
}

static cl_result model_here(cl_run *run, cl_comm *c, double bytes, model_args *a)
{
    memset(a, 0, sizeof *a);
    a->choice = -1;
    if (cl_comm_on_sim(c)) {
        CL_CHECK(machine_of_system(cl_run_opts(run)->system, nodes_count(), &a->m));
        a->m.ranks_per_node = nodes_size();
    } else {
        CL_CHECK(machine_of_options(run, &a->m));
    }
    a->bytes = bytes;
    cl_call_result res;
    CL_CHECK(cl_student_run(c, "model", a, sizeof *a, 0, &res));
    if (res.status != CL_OK) {
        cl_set_error("lab18_predict or lab18_choose: %s", res.error);
        return res.status;
    }
    return CL_OK;
}

cl_result compare_mode(cl_run *run, cl_comm *c)
{
    const cl_opts *o = cl_run_opts(run);
    CL_CHECK(nodes_setup(run, c));
    CL_CHECK(nodes_split(c));
    int reps = o->repeats;
    if (reps > MAX_REP) {
        cl_set_error("--repeats: at most %d", MAX_REP);
        return CL_ERR_INVALID;
    }
    size_t es = cl_dtype_size(o->dtype);
    bufs b = {.count = o->bytes / es ? o->bytes / es : 1};
    size_t two = 2 * (b.count / (size_t)nodes_size() + 1);
    b.scratch_bytes = (b.count > two ? b.count : two) * es;
    if (b.scratch_bytes < 4096)
        b.scratch_bytes = 4096;
    CL_CHECK(cl_mem_alloc(c, b.count * es, &b.send));
    CL_CHECK(cl_mem_alloc(c, (b.count + GUARD) * es, &b.recv));
    CL_CHECK(cl_mem_alloc(c, b.scratch_bytes, &b.scratch));
    double tf[MAX_REP], th[MAX_REP], s;
    size_t wrong_flat = 0, wrong_hier = 0;
    char pattern[300] = "";
    /* Round -1 warms both up (checked like the others); then the flat ring and the
     * hierarchy alternate, so a slow moment of the machine hits both of a pair. */
    for (int k = -1; k < reps; k++) {
        CL_CHECK(one_call(run, c, "flat", &b, &s, &wrong_flat, pattern, sizeof pattern));
        if (k >= 0)
            tf[k] = s;
        CL_CHECK(one_call(run, c, "allreduce", &b, &s, &wrong_hier, pattern, sizeof pattern));
        if (k >= 0)
            th[k] = s;
    }
    model_args a;
    CL_CHECK(model_here(run, c, (double)(b.count * es), &a));
    cl_mem_free(c, b.send);
    cl_mem_free(c, b.recv);
    cl_mem_free(c, b.scratch);
    const lab18_machine *m = &a.m;
    cl_report_num(run, "bw_intra", m->bw_intra);
    cl_report_num(run, "bw_nic", m->bw_nic);
    cl_report_int(run, "nics_per_node", m->nics_per_node);
    cl_row *row = cl_row_begin(run, c);
    cl_col_int(row, "bytes", (long long)(b.count * es));
    cl_col_nums(row, "flat_s", tf, (size_t)reps, "%.6f");
    cl_col_nums(row, "hier_s", th, (size_t)reps, "%.6f");
    cl_col_int(row, "wrong_flat", (long long)wrong_flat);
    cl_col_int(row, "wrong_hier", (long long)wrong_hier);
    cl_col_str(row, "pattern", pattern[0] ? pattern : "ok");
    cl_col_num(row, "model_flat_s", a.t_flat, "%.6f");
    cl_col_num(row, "model_hier_s", a.t_hier, "%.6f");
    int valid = a.choice == LAB18_FLAT || a.choice == LAB18_HIER;
    cl_col_str(row, "choice", valid ? algo_name(a.choice) : "?");
    cl_row_end(row);
    return CL_OK;
}
