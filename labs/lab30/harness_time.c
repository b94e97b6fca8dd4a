/* harness_time.c: lab 30's time of one AllReduce at a point: switched fabrics are simulated
 * (common/sim: a DGX H100 rail fabric built for the job, routed flows, NCCL's latencies); a
 * torus and SHARP, which the simulator does not have, are timed by the handout's formulas.
 * The probe the student's program asks for (lab30_probe_time) is answered here, against the
 * case's budget.
 */
#include <math.h>

#include "lab30_harness.h"

static const cl_algo SIM_ALGO[LAB30_NALGOS] = {CL_ALGO_RING, CL_ALGO_TREE, CL_ALGO_NVLS_TREE,
                                               CL_ALGO_NVLS, CL_ALGO_AUTO};

/* The DGX H100 machine of gpus GPUs, built once per process. */
static cl_result machine(long gpus, cl_sim_machine **out)
{
    for (int i = 0; i < CACHED_MACHINES; i++)
        if (current_case.m_gpus[i] == gpus) {
            *out = &current_case.m[i];
            return CL_OK;
        }
    int i = current_case.next;
    current_case.next = (current_case.next + 1) % CACHED_MACHINES;
    if (current_case.m_gpus[i])
        cl_sim_machine_free(&current_case.m[i]);
    current_case.m_gpus[i] = 0;
    cl_sim_overrides ov = {.nodes = (int)(gpus / current_case.def->f.gpus_per_node), .routing = -1};
    CL_CHECK(cl_sim_machine_load(current_case.def->system, &ov, &current_case.m[i]));
    current_case.m_gpus[i] = gpus;
    *out = &current_case.m[i];
    return CL_OK;
}

/* --- the formulas: a torus, and in-network reduction ------------------------------------- */

/* One AllReduce of bytes on a torus of gpus chips (handout, "四种网络"). ring: 2 x ndims
 * edge-disjoint rings through every chip, one per link of a chip, each with its share of
 * the data; torus: the dimension-wise rings, both directions of a dimension at once, each
 * with half the data. Every ring step costs one hop. */
static double torus_time(const lab30_fabric *f, int algo, long gpus, double bytes)
{
    double B = f->link_gbps * 1e9, h = f->hop_us * 1e-6, t = f->launch_us * 1e-6;
    if (gpus < 2)
        return t;
    if (algo == LAB30_RING)
        return t + 2.0 * (gpus - 1) * h + 2.0 * (gpus - 1) / gpus * bytes / (2.0 * f->ndims * B);
    int dims[LAB30_MAX_DIMS];
    lab30_torus_dims(gpus, f->ndims, dims);
    double s = bytes;
    for (int d = 0; d < f->ndims; d++) {
        int k = dims[d];
        if (k > 1)
            t += 2.0 * (k - 1) * h + 2.0 * (k - 1) / k * s / (2.0 * B);
        s /= k;
    }
    return t;
}

/* NVLS with the reduction in the InfiniBand switches too (SHARP): inside a server NVLS moves
 * S(G+1)/G over each GPU's NVSwitch port at NCCL's NVLS efficiency; each GPU's shard S/G
 * goes up its rail's two switch tiers, reduced there, and comes back; the two are
 * pipelined. Constants of datasets/systems/dgx-h100.conf (launch_us, lat_nvls_us,
 * fabric_hop_us, nvls_eff). */
static double sharp_time(const lab30_fabric *f, double bytes)
{
    const double launch = 14.67e-6, nvls_lat = 25e-6, hop = 0.5e-6, eff = 0.85;
    int G = f->gpus_per_node;
    double intra = bytes * (G + 1) / G / (f->nvlink_gbps * 1e9 * eff);
    double net = bytes / G / (f->nic_gbps * 1e9);
    return launch + nvls_lat + 4 * hop + fmax(intra, net);
}

/* --- the time of one point ------------------------------------------------------------------ */

static cl_result valid_point(const lab30_fabric *f, int algo, long gpus, double bytes)
{
    if (algo < 0 || algo >= LAB30_NALGOS || !(f->algos & ALGO_BIT(algo))) {
        cl_set_error("%s: algorithm %d does not run on this fabric", f->name, algo);
        return CL_ERR_INVALID;
    }
    if (gpus < 2 || gpus > 65536 || (f->kind == LAB30_SWITCHED && gpus % f->gpus_per_node)) {
        cl_set_error("%s: %ld GPUs: 2 to 65536%s", f->name, gpus,
                     f->kind == LAB30_SWITCHED ? ", whole servers of 8" : "");
        return CL_ERR_INVALID;
    }
    if (!(bytes >= 8 && bytes <= 16.0 * (1 << 30))) {
        cl_set_error("%s: %g bytes: 8 B to 16 GiB", f->name, bytes);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

cl_result time_of(int algo, long gpus, double bytes, double *out)
{
    const struct fabric_def *d = current_case.def;
    CL_CHECK(valid_point(&d->f, algo, gpus, bytes));
    if (d->f.kind == LAB30_TORUS_FABRIC) {
        *out = torus_time(&d->f, algo, gpus, bytes);
        return CL_OK;
    }
    if (algo == LAB30_NVLS) {
        *out = sharp_time(&d->f, bytes);
        return CL_OK;
    }
    cl_sim_machine *m;
    cl_sim_result r;
    CL_CHECK(machine(gpus, &m));
    CL_CHECK(cl_sim_predict_machine(m, CL_COLL_ALLREDUCE, SIM_ALGO[algo], bytes, &r));
    *out = r.time_us * 1e-6;
    return CL_OK;
}

cl_result lab_op(cl_run *run, cl_comm *comm, int code, void *args, size_t bytes)
{
    (void)run, (void)comm;
    if (code != LAB30_OP_PROBE || bytes != sizeof(lab30_probe_args) || !current_case.def) {
        cl_set_error("lab30 has no operation %d of %zu bytes here", code, bytes);
        return CL_ERR_INVALID;
    }
    lab30_probe_args *a = args;
    const lab30_fabric *f = &current_case.def->f;
    if (current_case.calls >= f->budget) {
        cl_set_error("lab30_probe_time: this case's budget of %d calls is spent", f->budget);
        return CL_ERR_INVALID;
    }
    if (a->gpus > f->probe_max_gpus) {
        cl_set_error("lab30_probe_time: %ld GPUs; the simulator takes jobs of at most %d here",
                     a->gpus, f->probe_max_gpus);
        return CL_ERR_INVALID;
    }
    CL_CHECK(time_of(a->algo, a->gpus, a->bytes, &a->time_s));
    current_case.calls++;
    return CL_OK;
}
