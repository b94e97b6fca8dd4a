/* harness_fabric.c: the consequence of the routes on a cluster: an AlltoAll between the GPUs
 * of different nodes (expert parallelism's traffic), every message routed as the student's
 * lab17_p2p_route says and, for comparison, as the grader's reference routes say, simulated
 * on a rail-optimised fabric or on a leaf-spine of the same switches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab17_harness.h"
#include "sim/sim_engine.h"
#include "sim/sim_machine.h"

/* "nic:proxy,nic:proxy,..." for every GPU g and peer device d (g-major). */
static cl_result parse_routes(const char *text, int G, int nic[][LAB17_MAX_GPUS],
                              int proxy[][LAB17_MAX_GPUS])
{
    const char *p = text;
    for (int i = 0; i < G * G; i++) {
        int a, b, used;
        if (sscanf(p, "%d:%d%n", &a, &b, &used) != 2) {
            cl_set_error("ref: %d nic:proxy pairs expected, the %dth is malformed", G * G, i + 1);
            return CL_ERR_INVALID;
        }
        nic[i / G][i % G] = a, proxy[i / G][i % G] = b;
        p += used;
        if (*p == ',')
            p++;
    }
    return CL_OK;
}

/* "n0,n1,...": the NIC each GPU receives on. */
static cl_result parse_list(const char *text, int G, int *out)
{
    const char *p = text;
    for (int i = 0; i < G; i++) {
        int used;
        if (sscanf(p, "%d%n", &out[i], &used) != 1) {
            cl_set_error("recv: %d NICs expected", G);
            return CL_ERR_INVALID;
        }
        p += used + (p[used] == ',');
    }
    return CL_OK;
}

/* The simulated time of the AlltoAll with routes (nic, proxy) on machine m. */
static cl_result alltoall(cl_sim_machine *m, const int *recv_nic, int nic[][LAB17_MAX_GPUS],
                          int proxy[][LAB17_MAX_GPUS], double bytes, double *seconds)
{
    int N = m->nodes, G = m->gpus;
    cl_sim_engine eng;
    CL_CHECK(cl_sim_engine_init(&eng, &m->g, 1.0));
    int path[2 * CL_SIM_MAX_PATH];
    double each = bytes / ((double)N * G); /* bytes per GPU split over every GPU */
    cl_result rc = CL_OK;
    for (int a = 0; a < N && rc == CL_OK; a++)
        for (int b = 0; b < N && rc == CL_OK; b++) {
            if (a == b)
                continue;
            for (int g = 0; g < G && rc == CL_OK; g++)
                for (int h = 0; h < G && rc == CL_OK; h++) {
                    int n = nic[g][h], p = proxy[g][h], len = 0, more;
                    int src = a * G + g, via = a * G + p, dst = b * G + h;
                    int recv = recv_nic[h]; /* a receiver uses its own NIC (net.cc) */
                    cl_sim_pclass cls;
                    if (n < 0 || n >= m->nics || p < 0 || p >= G || recv < 0 || recv >= m->nics) {
                        cl_set_error("GPU %d to peer device %d: NIC %d through GPU %d does not "
                                     "exist",
                                     g, h, n, p);
                        rc = CL_ERR_INVALID;
                        break;
                    }
                    if (p != g) { /* the relay: over NVLink to the GPU that drives the NIC */
                        len = cl_sim_route(m, src, via, -1, 0, path, CL_SIM_MAX_PATH, &cls);
                        if (len < 0) {
                            rc = CL_ERR_BACKEND;
                            break;
                        }
                    }
                    more = cl_sim_route_nics(m, via, dst, n, recv, g * G + h, path + len,
                                             CL_SIM_MAX_PATH, &cls);
                    if (more < 0) {
                        rc = CL_ERR_BACKEND;
                        break;
                    }
                    if (cl_sim_engine_add(&eng, path, len + more, each, 0, 0, 0) < 0)
                        rc = CL_ERR_NOMEM;
                }
        }
    if (rc == CL_OK)
        rc = cl_sim_engine_run(&eng);
    *seconds = eng.now;
    cl_sim_engine_free(&eng);
    return rc;
}

cl_result fabric_case(cl_case *c)
{
    const char *system, *fabric, *ref, *recv_text;
    int recv[LAB17_MAX_GPUS];
    long long nodes;
    double bytes, over = 1;
    CL_CHECK(cl_case_str(c, "system", &system));
    CL_CHECK(cl_case_str(c, "fabric", &fabric));
    CL_CHECK(cl_case_str(c, "ref", &ref));
    CL_CHECK(cl_case_str(c, "recv", &recv_text));
    CL_CHECK(cl_case_int(c, "nodes", &nodes));
    CL_CHECK(cl_case_num(c, "bytes", &bytes));
    if (cl_case_num(c, "oversubscription", &over) != CL_OK)
        cl_clear_error();
    int rail = strcmp(fabric, "rail") == 0;
    if ((!rail && strcmp(fabric, "leafspine") != 0) || nodes < 2 || nodes > 128 || !(bytes > 0) ||
        !(over >= 1)) {
        cl_set_error("fabric rail or leafspine, 2..128 nodes, bytes > 0, oversubscription >= 1");
        return CL_ERR_INVALID;
    }
    route_args *a = calloc(1, sizeof *a);
    int(*rnic)[LAB17_MAX_GPUS] = calloc(LAB17_MAX_GPUS, sizeof *rnic);
    int(*rproxy)[LAB17_MAX_GPUS] = calloc(LAB17_MAX_GPUS, sizeof *rproxy);
    int(*snic)[LAB17_MAX_GPUS] = calloc(LAB17_MAX_GPUS, sizeof *snic);
    int(*sproxy)[LAB17_MAX_GPUS] = calloc(LAB17_MAX_GPUS, sizeof *sproxy);
    cl_sim_machine m;
    int built = 0;
    double mine = 0, theirs = 0;
    cl_result rc = a && rnic && rproxy && snic && sproxy ? CL_OK : CL_ERR_NOMEM;
    if (rc == CL_OK)
        rc = server_of_system(system, &a->s);
    if (rc == CL_OK)
        rc = env_of_case(c, &a->e);
    if (rc == CL_OK)
        rc = parse_routes(ref, a->s.ngpus, rnic, rproxy);
    if (rc == CL_OK)
        rc = parse_list(recv_text, a->s.ngpus, recv);
    if (rc == CL_OK) {
        cl_sim_overrides ov = {.nodes = (int)nodes,
                               .routing = -1,
                               .oversubscription = over,
                               .fabric = 1 + (rail ? CL_SIM_FABRIC_RAIL : CL_SIM_FABRIC_LEAFSPINE)};
        rc = cl_sim_machine_load(system, &ov, &m);
        built = rc == CL_OK;
    }
    cl_result call = CL_OK;
    if (rc == CL_OK) {
        call = cl_case_call(c, "route", a, sizeof *a);
        for (int g = 0; g < a->s.ngpus; g++)
            for (int d = 0; d < a->s.ngpus; d++)
                snic[g][d] = a->nic[g][d], sproxy[g][d] = a->proxy[g][d];
        rc = alltoall(&m, recv, rnic, rproxy, bytes, &theirs);
    }
    if (rc == CL_OK && call == CL_OK)
        rc = alltoall(&m, recv, snic, sproxy, bytes, &mine);
    cl_row *row = cl_case_row(c);
    cl_col_str(row, "fabric", fabric);
    cl_col_int(row, "nodes", nodes);
    cl_col_num(row, "seconds", mine, "%.6f");
    cl_col_num(row, "reference_seconds", theirs, "%.6f");
    if (built)
        cl_sim_machine_free(&m);
    free(a), free(rnic), free(rproxy), free(snic), free(sproxy);
    return rc != CL_OK ? rc : call;
}
