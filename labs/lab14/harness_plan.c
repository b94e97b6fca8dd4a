/* harness_plan.c: lab 14's plan mode. It reads a job file (the servers, their HCAs, the
 * busy ones, the other jobs' flows), asks the student for a placement and forwarding tables,
 * checks both, and times the job's ring AllReduce on the student's own routes with the
 * simulator's flow engine (common/sim/sim_paths.h), the other jobs' flows sharing the
 * links, against the first free servers in order.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boundary/arena.h"
#include "lab14_harness.h"
#include "sim/sim_paths.h"

#define HOP_S 0.5e-6 /* per switch crossed: SimAI's link hop (datasets/systems/dgx-h100.conf) */

/* --- plan ------------------------------------------------------------------------------------- */

/* A job file: "servers J", "rails R", "bytes S", "hca H0 H1 ...", "busy S0 S1 ...",
 * and "bg SRC DST" lines. */
static cl_result read_job(const char *path, const cl_fabric *f, lab14_job *j)
{
    FILE *in = fopen(path, "r");
    if (!in) {
        cl_set_error("cannot read %s", path);
        return CL_ERR_IO;
    }
    memset(j, 0, sizeof *j);
    char key[16];
    int nhca = 0, bad = 0;
    while (!bad && fscanf(in, " %15s", key) == 1) {
        int v, w;
        if (strcmp(key, "servers") == 0)
            bad = fscanf(in, "%d", &j->servers) != 1;
        else if (strcmp(key, "rails") == 0)
            bad = fscanf(in, "%d", &j->rails) != 1;
        else if (strcmp(key, "bytes") == 0)
            bad = fscanf(in, "%lf", &j->bytes) != 1;
        else if (strcmp(key, "hca") == 0)
            while (nhca < LAB14_MAX_HOSTS && fscanf(in, "%d", &v) == 1)
                j->hca[nhca++] = v;
        else if (strcmp(key, "busy") == 0)
            while (!bad && fscanf(in, "%d", &v) == 1) {
                bad = v < 0 || v >= LAB14_MAX_HOSTS;
                if (!bad)
                    j->busy[v] = 1;
            }
        else if (strcmp(key, "bg") == 0 && j->nbg < 4096 && fscanf(in, "%d %d", &v, &w) == 2)
            j->bg[j->nbg++] = (lab14_flow){v, w, 0};
        else
            bad = 1;
        if (!bad && !feof(in))
            clearerr(in);
    }
    fclose(in);
    int R = j->rails;
    j->nservers = R > 0 ? nhca / R : 0;
    for (int i = 0; !bad && i < nhca; i++)
        bad = j->hca[i] < 0 || j->hca[i] >= f->nhosts;
    for (int i = 0; !bad && i < j->nbg; i++)
        bad = j->bg[i].src < 0 || j->bg[i].src >= f->nhosts || j->bg[i].dst < 0 ||
              j->bg[i].dst >= f->nhosts || j->bg[i].src == j->bg[i].dst;
    if (bad || R < 1 || nhca % R || j->servers < 2 || j->servers > j->nservers || !(j->bytes > 0)) {
        cl_set_error("%s: a malformed job (servers, rails, bytes, hca, busy, bg)", path);
        return CL_ERR_PARSE;
    }
    return CL_OK;
}

/* The fabric as the simulator's graph, and the link of every channel. */
typedef struct timing {
    cl_sim_graph g;
    int *link_of;
} timing;

typedef struct plan_result {
    double time_s, ideal_s;
    double max_flows; /* flows on the busiest channel that carries the job */
} plan_result;

/* Time the job's AllReduce for order and routes r: 2(p-1) ring steps over
 * p = servers x rails GPUs; in a step every inter-server edge of every rail's
 * ring moves S / (rails x p) bytes while the other jobs' flows run. */
static cl_result time_plan(const cl_fabric *f, const cl_fabric_routes *r, const lab14_job *j,
                           const int *order, timing *t, double *load, double *job_load,
                           plan_result *out)
{
    int J = j->servers, R = j->rails, nj = J * R, n = nj + j->nbg;
    double p = (double)J * R, chunk = j->bytes / (R * p);
    int *paths = malloc((size_t)n * (CL_FABRIC_MAX_NODES + 1) * sizeof *paths);
    int *ch = malloc((CL_FABRIC_MAX_NODES + 1) * sizeof *ch);
    cl_sim_path_flow *fl = malloc((size_t)n * sizeof *fl);
    double *fin = malloc((size_t)n * sizeof *fin);
    double *flows_on = calloc(CL_FABRIC_CHANNELS, sizeof *flows_on);
    unsigned char *job_on = calloc(CL_FABRIC_CHANNELS, 1);
    cl_result rc = CL_ERR_NOMEM;
    if (!paths || !ch || !fl || !fin || !flows_on || !job_on)
        goto done;
    out->ideal_s = 0;
    for (int i = 0; i < n; i++) {
        int src, dst, len;
        if (i < nj) {
            int k = i / R, rail = i % R;
            src = j->hca[order[k] * R + rail];
            dst = j->hca[order[(k + 1) % J] * R + rail];
        } else {
            src = j->bg[i - nj].src;
            dst = j->bg[i - nj].dst;
        }
        rc = cl_fabric_walk(f, r, src, dst, ch, CL_FABRIC_MAX_NODES + 1, &len);
        if (rc != CL_OK)
            goto done;
        int *path = paths + (size_t)i * (CL_FABRIC_MAX_NODES + 1);
        double slowest = INFINITY;
        for (int k = 0; k < len; k++) {
            path[k] = t->link_of[ch[k]];
            flows_on[ch[k]] += 1;
            load[ch[k]] += chunk; /* the other jobs' flows too: contention shows */
            if (i < nj) {
                job_on[ch[k]] = 1;
                job_load[ch[k]] += chunk;
            }
            if (t->g.l[path[k]].bw < slowest)
                slowest = t->g.l[path[k]].bw;
        }
        /* the other jobs' flows outlast the step: they share it from start to end */
        fl[i] = (cl_sim_path_flow){path, len, i < nj ? chunk : 1e3 * chunk, (len - 1) * HOP_S};
        if (i < nj && fl[i].latency_s + chunk / slowest > out->ideal_s)
            out->ideal_s = fl[i].latency_s + chunk / slowest;
    }
    CL_TRY(cl_sim_paths_run(&t->g, fl, n, fin));
    double step = 0;
    for (int i = 0; i < nj; i++)
        step = fin[i] > step ? fin[i] : step;
    out->time_s = 2 * (p - 1) * step;
    out->ideal_s *= 2 * (p - 1);
    out->max_flows = 0;
    for (int c = 0; c < CL_FABRIC_CHANNELS; c++)
        if (job_on[c] && flows_on[c] > out->max_flows)
            out->max_flows = flows_on[c];
done:
    free(paths);
    free(ch);
    free(fl);
    free(fin);
    free(flows_on);
    free(job_on);
    return rc;
}

/* Why order is not a placement of the job, or NULL. */
static const char *order_problem(const lab14_job *j, const int *order, char *why, size_t n)
{
    unsigned char used[LAB14_MAX_HOSTS] = {0};
    for (int i = 0; i < j->servers; i++) {
        int s = order[i];
        if (s < 0 || s >= j->nservers)
            snprintf(why, n, "order[%d] = %d is not a server (0..%d)", i, s, j->nservers - 1);
        else if (j->busy[s])
            snprintf(why, n, "order[%d] = %d is a busy server", i, s);
        else if (used[s]++)
            snprintf(why, n, "server %d appears twice in order", s);
        else
            continue;
        return why;
    }
    return NULL;
}

cl_result plan_case(cl_case *c)
{
    const char *path;
    CL_CHECK(cl_case_str(c, "job", &path));
    cl_fabric *f;
    CL_CHECK(read_fabric(c, &f));
    cl_fabric_routes r = {0};
    timing t = {0};
    lab14_job *job = malloc(sizeof *job);
    double *load = calloc(CL_FABRIC_CHANNELS, sizeof *load);
    double *mine_load = calloc(CL_FABRIC_CHANNELS, sizeof *mine_load);
    double *scratch = calloc(2 * (size_t)CL_FABRIC_CHANNELS, sizeof *scratch);
    plan_args a = {0};
    lab14_fabric *sf = shared(sizeof *sf);
    lab14_job *sj = shared(sizeof *sj);
    a.order = shared(LAB14_MAX_HOSTS * sizeof *a.order);
    a.r = shared(sizeof *a.r);
    int order[LAB14_MAX_HOSTS];
    cl_result rc = CL_ERR_NOMEM;
    if (!job || !load || !mine_load || !scratch || !sf || !sj || !a.order || !a.r)
        goto done;
    CL_TRY(read_job(path, f, job));
    to_student(f, sf);
    memcpy(sj, job, sizeof *sj);
    memset(a.order, 0xff, LAB14_MAX_HOSTS * sizeof *a.order);
    memset(a.r->out, 0xff, sizeof a.r->out);
    a.f = sf;
    a.job = sj;
    int ok;
    rc = call(c, "plan", &a, sizeof a, &ok);
    if (rc != CL_OK || !ok)
        goto done;
    memcpy(order, a.order, sizeof order);
    CL_TRY(cl_fabric_routes_init(f, &r));
    routes_from_student(a.r, &r);
    cl_row *row = cl_case_row(c);
    char why[160];
    const char *bad = order_problem(job, order, why, sizeof why);
    cl_col_str(row, "placement", bad ? bad : "valid");
    cl_fabric_check k;
    CL_TRY(cl_fabric_check_routes(f, &r, &k));
    report_check(row, &k);
    long long ord[LAB14_MAX_HOSTS];
    for (int i = 0; i < job->servers; i++)
        ord[i] = order[i];
    cl_col_ints(row, "order", ord, (size_t)job->servers);
    if (bad || k.delivered != k.pairs || !k.acyclic)
        goto done;
    t.link_of = malloc(CL_FABRIC_CHANNELS * sizeof *t.link_of);
    if (!t.link_of) {
        rc = CL_ERR_NOMEM;
        goto done;
    }
    CL_TRY(cl_fabric_sim_graph(f, &t.g, t.link_of));
    plan_result mine, naive;
    CL_TRY(time_plan(f, &r, job, order, &t, load, mine_load, &mine));
    /* the plan of a scheduler that knows no topology: the first free servers, in order */
    int first[LAB14_MAX_HOSTS], m = 0;
    for (int s = 0; s < job->nservers && m < job->servers; s++)
        if (!job->busy[s])
            first[m++] = s;
    CL_TRY(time_plan(f, &r, job, first, &t, scratch, scratch + CL_FABRIC_CHANNELS, &naive));
    cl_col_num(row, "time_s", mine.time_s, "%.6g");
    cl_col_num(row, "ideal_s", mine.ideal_s, "%.6g");
    cl_col_num(row, "naive_s", naive.time_s, "%.6g");
    cl_col_num(row, "max_flows", mine.max_flows, "%.0f");
    cl_col_num(row, "naive_max_flows", naive.max_flows, "%.0f");
    report_drawing(row, f, load, mine_load);
done:
    cl_fabric_routes_free(&r);
    cl_sim_graph_free(&t.g);
    free(t.link_of);
    cl_host_free(sf);
    cl_host_free(sj);
    cl_host_free(a.order);
    cl_host_free(a.r);
    free(job);
    free(load);
    free(mine_load);
    free(scratch);
    free(f);
    return rc;
}
