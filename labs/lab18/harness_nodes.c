/* harness_nodes.c: which node every rank is on, the student's split, and the pattern that
 * tells a two-level AllReduce from any other correct one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data.h"
#include "lab18_harness.h"
#include "sim/sim_system.h"

#define MAX_RANKS 4096

static struct {
    int ready, nranks, nodes, per_node;
    int node[MAX_RANKS], local[MAX_RANKS];
} T;

int nodes_count(void) { return T.nodes; }
int nodes_size(void) { return T.per_node; }
int node_of(int r) { return r >= 0 && r < T.nranks ? T.node[r] : -1; }
int local_of(int r) { return r >= 0 && r < T.nranks ? T.local[r] : -1; }

/* Host names, hashed, of every rank. */
static cl_result host_nodes(cl_comm *comm, int p)
{
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0) {
        cl_set_error("gethostname failed");
        return CL_ERR_IO;
    }
    int64_t hash[MAX_RANKS];
    uint64_t h = cl_data_hash(cl_data_hash_bytes(host, strlen(host)));
    CL_CHECK(cl_agree_gather(comm, (int64_t)(h >> 2), hash));
    int nodes = 0;
    int64_t seen[MAX_RANKS];
    for (int r = 0; r < p; r++) {
        int k = 0;
        while (k < nodes && seen[k] != hash[r])
            k++;
        if (k == nodes)
            seen[nodes++] = hash[r];
        T.node[r] = k;
    }
    return CL_OK;
}

static cl_result per_node_of(cl_run *run, cl_comm *comm, int *per)
{
    const char *v = cl_opt(run, "ranks-per-node");
    *per = 0;
    if (v && *v) {
        char *end;
        long n = strtol(v, &end, 10);
        if (*end || n < 1 || n > MAX_RANKS) {
            cl_set_error("--ranks-per-node wants a number of ranks, not '%s'", v);
            return CL_ERR_INVALID;
        }
        *per = (int)n;
    } else if (cl_comm_on_sim(comm)) {
        cl_sim_system s;
        CL_CHECK(cl_sim_system_load(cl_run_opts(run)->system, &s));
        *per = s.gpus_per_node < cl_comm_size(comm) ? s.gpus_per_node : cl_comm_size(comm);
    }
    return CL_OK;
}

cl_result nodes_setup(cl_run *run, cl_comm *comm)
{
    if (T.ready) /* "sim": every simulated rank asks; the first one did it */
        return CL_OK;
    int p = cl_comm_size(comm), per;
    if (p > MAX_RANKS) {
        cl_set_error("at most %d ranks", MAX_RANKS);
        return CL_ERR_INVALID;
    }
    CL_CHECK(per_node_of(run, comm, &per));
    const char *placement = cl_opt(run, "placement");
    int cyclic = placement && strcmp(placement, "cyclic") == 0;
    if (placement && !cyclic && strcmp(placement, "block") != 0) {
        cl_set_error("--placement is block or cyclic, not '%s'", placement);
        return CL_ERR_INVALID;
    }
    if (per) {
        if (p % per) {
            cl_set_error("%d ranks do not fill nodes of %d", p, per);
            return CL_ERR_INVALID;
        }
        for (int r = 0; r < p; r++)
            T.node[r] = cyclic ? r % (p / per) : r / per;
    } else {
        CL_CHECK(host_nodes(comm, p));
    }
    int count[MAX_RANKS] = {0}, nodes = 0;
    for (int r = 0; r < p; r++) {
        T.local[r] = count[T.node[r]]++;
        nodes = T.node[r] + 1 > nodes ? T.node[r] + 1 : nodes;
    }
    for (int k = 1; k < nodes; k++)
        if (count[k] != count[0]) {
            cl_set_error("node %d holds %d ranks and node 0 %d: every node must hold as many", k,
                         count[k], count[0]);
            return CL_ERR_INVALID;
        }
    T.nranks = p, T.nodes = nodes, T.per_node = count[0], T.ready = 1;
    cl_report_int(run, "nodes", nodes);
    cl_report_int(run, "ranks_per_node", T.per_node);
    cl_report_str(run, "placement", per ? (cyclic ? "cyclic" : "block") : "by host");
    return CL_OK;
}

cl_result nodes_split(cl_comm *comm)
{
    int r = cl_comm_rank(comm);
    split_args a = {.node = T.node[r], .nodes = T.nodes};
    cl_call_result res;
    CL_CHECK(cl_student_run(comm, "split", &a, sizeof a, CL_ALLOW_SPLIT, &res));
    int64_t bad = res.status != CL_OK;
    char why[400];
    snprintf(why, sizeof why, "lab18_split on rank %d: %s", r, res.error);
    CL_CHECK(cl_agree(comm, CL_MAX, &bad, 1));
    if (bad) {
        cl_set_error("%s", res.status != CL_OK ? why : "lab18_split failed on another rank");
        return res.status != CL_OK ? res.status : CL_ERR_INVALID;
    }
    return CL_OK;
}

int hier_pattern(const cl_comm *comm, const cl_coll_args *a, const cl_trace_event *ev, int n,
                 char *why, size_t why_len)
{
    int me = cl_comm_rank(comm), nodes = T.nodes, l = T.per_node;
    size_t es = cl_dtype_size(a->dtype), across = 0;
    for (int i = 0; i < n; i++) {
        if (ev[i].op != CL_WOP_ISEND || ev[i].peer_world < 0)
            continue;
        int to = ev[i].peer_world;
        if (node_of(to) == node_of(me))
            continue;
        if (local_of(to) != local_of(me)) {
            snprintf(why, why_len,
                     "rank %d (node %d, position %d) sent %zu bytes to rank %d (node %d, "
                     "position %d): across nodes, a rank talks only to its own rail",
                     me, node_of(me), local_of(me), ev[i].bytes, to, node_of(to), local_of(to));
            return 0;
        }
        across += ev[i].bytes;
    }
    /* An AllReduce of this rank's block (at most count / l + 1 elements) around its rail
     * sends 2 (nodes - 1) pieces of at most block / nodes + 1 elements. */
    size_t block = a->count / (size_t)l + 1;
    size_t bound = 2 * (size_t)(nodes - 1) * (block / (size_t)nodes + 1) * es;
    if (across > bound) {
        snprintf(why, why_len,
                 "rank %d sent %zu bytes across nodes; the two-level AllReduce of %zu elements "
                 "on %d nodes of %d sends at most %zu",
                 me, across, a->count, nodes, l, bound);
        return 0;
    }
    return 1;
}
