/* harness_replay.c: mode replay: a job trace replayed on a tree fabric, the student's policy
 * placing every job, and what its placements cost.
 *
 * The scheduler is first come, first served with greedy backfill: at every
 * arrival and every completion the harness walks the queue in arrival order
 * and starts each job that fits now (a job of at most gpus_per_node GPUs needs
 * one node with that many idle GPUs; a larger one needs gpus / gpus_per_node
 * whole idle nodes). Where it runs is the policy's choice: the student's
 * lab19_place(), or the topology-blind first fit (the lowest-numbered nodes
 * that fit). Run times come from the trace, so a placement changes when
 * later jobs can start, never how long a job runs.
 *
 * What placements cost:
 *   slowdown  every job on several nodes exchanges data all-to-all, each node
 *             injecting node_gbps spread evenly over its job's other nodes. A
 *             switch whose subtree holds k of a job's n nodes carries
 *             node_gbps * k * (n - k) / (n - 1) of it on its uplinks. Where the
 *             jobs' demands exceed a switch's up_gbps, each of them is slowed by
 *             demand / up_gbps; a job runs at the pace of its worst switch. The
 *             slowdown is weighted by GPUs and integrated over each job's life.
 *   spread    leaf switches a job spans beyond the fewest its size needs;
 *   excess    beyond the fewest the idle nodes allowed when it started.
 *   frag      the share of idle GPUs that a job of the trace's own mix of sizes
 *             could not use (fragmentation()), averaged while jobs arrive; and
 *             frag_leaf, how much more scattered over leaves the idle whole
 *             nodes are than they need be.
 *   wait      from submission to start, weighted by GPUs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boundary/arena.h"
#include "lab19_harness.h"

#define MAX_JOBS  20000
#define MAX_SPAN  64 /* nodes of the largest job */
#define MAX_LEVEL 8

typedef struct job {
    int id, gpus, nodes;
    double submit, duration, start, end;
    int state; /* 0 not yet submitted, 1 queued, 2 running, 3 done */
    int where[MAX_SPAN];
    int leaves, least_leaves, least_now; /* spanned; fewest for its size; fewest then */
    double slow_area;                    /* integral of the slowdown over its run */
} job;

typedef struct replay {
    const lab19_fabric *f; /* the harness's own copy */
    job *jobs;
    int njobs;
    int *free_gpus; /* per node */
    double *load;   /* per switch: demand on its uplinks, Gb/s */
    double *slow;   /* per running job: current slowdown */
    int *run;       /* running multi-node jobs */
    int nrun;
    int *leaf_order; /* leaves by size, largest first */
    int nleaves;
    int *leaf_size;
    /* integrals over time */
    double t0, t1, t, frag_leaf_area, frag_area, busy_area; /* t1: the last arrival */
    int samples, sampled;
    int size[64], nsizes; /* the trace's job sizes (GPUs) and their shares of its jobs */
    double share[64];
    double *tl_t, *tl_leaf, *tl_frag, *tl_busy;
} replay;

/* --- the trace ------------------------------------------------------------------------------- */

static cl_result read_trace(const char *path, const lab19_fabric *f, job *jobs, int *n)
{
    FILE *in = fopen(path, "r");
    if (!in) {
        cl_set_error("%s: %s", path, strerror(errno));
        return CL_ERR_IO;
    }
    char buf[256];
    int line = 0;
    cl_result rc = CL_OK;
    double last = -1;
    *n = 0;
    while (rc == CL_OK && fgets(buf, sizeof buf, in)) {
        line++;
        char *p = buf + strspn(buf, " \t");
        if (*p == '#' || *p == '\n' || !*p)
            continue;
        job j = {0};
        if (sscanf(p, "%d,%lf,%d,%lf", &j.id, &j.submit, &j.gpus, &j.duration) != 4) {
            cl_set_error("%s:%d: expected job_id,submit_s,gpu_num,duration_s", path, line);
            rc = CL_ERR_PARSE;
        } else if (j.gpus < 1 || !(j.duration > 0) || j.submit < last ||
                   (j.gpus > f->gpus_per_node && j.gpus % f->gpus_per_node)) {
            cl_set_error("%s:%d: job %d: %d GPUs (at most %d, or whole nodes), %g s, submitted "
                         "at %g (in order)",
                         path, line, j.id, j.gpus, f->gpus_per_node, j.duration, j.submit);
            rc = CL_ERR_PARSE;
        } else if (*n == MAX_JOBS) {
            cl_set_error("%s: more than %d jobs", path, MAX_JOBS);
            rc = CL_ERR_PARSE;
        } else {
            j.nodes = j.gpus <= f->gpus_per_node ? 1 : j.gpus / f->gpus_per_node;
            if (j.nodes > f->nnodes || j.nodes > MAX_SPAN) {
                cl_set_error("%s:%d: job %d needs %d nodes; the fabric has %d", path, line, j.id,
                             j.nodes, f->nnodes);
                rc = CL_ERR_PARSE;
            }
            last = j.submit;
            jobs[(*n)++] = j;
        }
    }
    fclose(in);
    if (rc == CL_OK && *n == 0) {
        cl_set_error("%s: no jobs", path);
        rc = CL_ERR_PARSE;
    }
    return rc;
}

/* --- the fabric's derived tables ----------------------------------------------------------------
 */

static int cmp_size_desc(const void *a, const void *b, void *ctx)
{
    const int *size = ctx, x = *(const int *)a, y = *(const int *)b;
    return size[y] - size[x] ? size[y] - size[x] : x - y;
}

/* The fewest leaves that hold n nodes (whole leaves, largest first). */
static int least_leaves(const replay *R, int n)
{
    int k = 0;
    for (int i = 0; i < R->nleaves && n > 0; i++, k++)
        n -= R->leaf_size[R->leaf_order[i]];
    return k;
}

/* --- contention ----------------------------------------------------------------------------------
 */

static void update_loads(replay *R)
{
    const lab19_fabric *f = R->f;
    int cnt[LAB19_MAX_SWITCHES];
    for (int s = 0; s < f->nswitches; s++)
        R->load[s] = 0;
    for (int k = 0; k < R->nrun; k++) {
        const job *j = &R->jobs[R->run[k]];
        memset(cnt, 0, (size_t)f->nswitches * sizeof *cnt);
        for (int i = 0; i < j->nodes; i++)
            for (int s = f->leaf[j->where[i]]; s >= 0; s = f->sw[s].parent)
                cnt[s]++;
        for (int s = 0; s < f->nswitches; s++)
            if (cnt[s] > 0 && cnt[s] < j->nodes)
                R->load[s] += f->node_gbps * cnt[s] * (j->nodes - cnt[s]) / (j->nodes - 1.0);
    }
    for (int k = 0; k < R->nrun; k++) {
        const job *j = &R->jobs[R->run[k]];
        memset(cnt, 0, (size_t)f->nswitches * sizeof *cnt);
        for (int i = 0; i < j->nodes; i++)
            for (int s = f->leaf[j->where[i]]; s >= 0; s = f->sw[s].parent)
                cnt[s]++;
        double worst = 1;
        for (int s = 0; s < f->nswitches; s++)
            if (cnt[s] > 0 && cnt[s] < j->nodes && f->sw[s].up_gbps > 0)
                worst = fmax(worst, R->load[s] / f->sw[s].up_gbps);
        R->slow[k] = worst;
    }
}

/* --- fragmentation -------------------------------------------------------------------------------
 */

/* The workload's fragmentation of the idle GPUs (after Weng et al., ATC'23): the
 * share of idle GPUs a job drawn from the trace's own mix of sizes could not
 * use. A job of g <= gpus_per_node GPUs cannot use a node with fewer than g
 * idle; a job of n whole nodes cannot use partly busy nodes, nor any node when
 * fewer than n are idle. Also the leaves' share: idle whole nodes sit on more
 * leaves than the fewest that could hold them (1 - fewest / used). */
static void fragmentation(const replay *R, double *frag, double *leaf, double *busy)
{
    const lab19_fabric *f = R->f;
    int whole[LAB19_MAX_SWITCHES] = {0}, nwhole = 0, used = 0, G = f->gpus_per_node;
    long idle = 0, below[65] = {0},
         total = (long)f->nnodes * G; /* below[g]: idle on nodes with < g */
    for (int i = 0; i < f->nnodes; i++) {
        int fr = R->free_gpus[i];
        idle += fr;
        for (int g = fr + 1; g <= G; g++)
            below[g] += fr;
        if (fr == G) {
            whole[f->leaf[i]]++;
            nwhole++;
        }
    }
    for (int s = 0; s < f->nswitches; s++)
        used += whole[s] > 0;
    double un = 0;
    for (int k = 0; k < R->nsizes; k++) {
        int g = R->size[k], n = g <= G ? 1 : g / G;
        double lost = g <= G        ? (double)below[g]
                      : n <= nwhole ? (double)(idle - (long)nwhole * G)
                                    : (double)idle;
        un += R->share[k] * lost;
    }
    *frag = idle ? un / idle : 0;
    *leaf = nwhole ? 1.0 - (double)least_leaves(R, nwhole) / used : 0;
    *busy = 1.0 - (double)idle / total;
}

/* Integrate everything from R->t to t (the state is constant in between). */
static void advance(replay *R, double t, double end_hint)
{
    double dt = t - R->t;
    if (dt <= 0)
        return;
    double fg, fl, busy, in = fmin(t, R->t1) - fmin(R->t, R->t1); /* part before the last arrival */
    fragmentation(R, &fg, &fl, &busy);
    R->frag_leaf_area += fl * in;
    R->frag_area += fg * in;
    R->busy_area += busy * in;
    for (int k = 0; k < R->nrun; k++)
        R->jobs[R->run[k]].slow_area += R->slow[k] * dt;
    /* timeline samples that fall in [R->t, t) */
    while (R->sampled < R->samples) {
        double at = R->t0 + (end_hint - R->t0) * R->sampled / R->samples;
        if (at >= t)
            break;
        R->tl_t[R->sampled] = at;
        R->tl_leaf[R->sampled] = fl;
        R->tl_frag[R->sampled] = fg;
        R->tl_busy[R->sampled] = busy;
        R->sampled++;
    }
    R->t = t;
}

/* --- placing one job
 * ------------------------------------------------------------------------------ */

static int fits(const replay *R, const job *j, int node)
{
    int g = R->free_gpus[node];
    return j->nodes == 1 ? g >= j->gpus : g == R->f->gpus_per_node;
}

static int feasible(const replay *R, const job *j)
{
    int n = 0;
    for (int i = 0; i < R->f->nnodes && n < j->nodes; i++)
        n += fits(R, j, i);
    return n >= j->nodes;
}

static void first_fit(const replay *R, const job *j, int *nodes)
{
    int n = 0;
    for (int i = 0; i < R->f->nnodes && n < j->nodes; i++)
        if (fits(R, j, i))
            nodes[n++] = i;
}

/* The student's choice for job j, checked: CL_OK with nodes[] filled. */
static cl_result ask_student(cl_case *c, replay *R, place_args *a, const job *j, int queued,
                             int *nodes)
{
    const lab19_fabric *f = R->f;
    a->s.now = R->t;
    for (int i = 0; i < f->nnodes; i++)
        a->s.free_gpus[i] = R->free_gpus[i];
    for (int s = 0; s < f->nswitches; s++)
        a->s.uplink_load[s] = R->load[s];
    a->s.queued = queued;
    a->job = (lab19_job){.id = j->id, .gpus = j->gpus, .nodes = j->nodes, .submit = j->submit};
    for (int i = 0; i < j->nodes; i++)
        a->nodes[i] = -1;
    CL_CHECK(cl_case_call(c, "place", a, sizeof *a));
    char seen[LAB19_MAX_NODES] = {0};
    for (int i = 0; i < j->nodes; i++) {
        int n = a->nodes[i];
        if (n < 0 || n >= f->nnodes) {
            cl_set_error("job %d (%d GPUs, %d node(s)) at t=%.0f s: nodes[%d] = %d is not a node "
                         "index (0..%d)",
                         j->id, j->gpus, j->nodes, R->t, i, n, f->nnodes - 1);
            return CL_ERR_INVALID;
        }
        if (seen[n]++) {
            cl_set_error("job %d at t=%.0f s: node %s given twice", j->id, R->t, f->node[n]);
            return CL_ERR_INVALID;
        }
        if (!fits(R, j, n)) {
            cl_set_error("job %d (%d GPUs) at t=%.0f s: node %s has %d idle GPUs; %s", j->id,
                         j->gpus, R->t, f->node[n], R->free_gpus[n],
                         j->nodes == 1 ? "too few" : "a job on several nodes takes whole nodes");
            return CL_ERR_INVALID;
        }
        nodes[i] = n;
    }
    return CL_OK;
}

/* The fewest leaves that could hold n whole nodes among the idle ones now. */
static int least_now(const replay *R, int n)
{
    const lab19_fabric *f = R->f;
    int idle[LAB19_MAX_SWITCHES] = {0}, k = 0;
    for (int i = 0; i < f->nnodes; i++)
        idle[f->leaf[i]] += R->free_gpus[i] == f->gpus_per_node;
    while (n > 0) {
        int best = 0;
        for (int s = 1; s < f->nswitches; s++)
            if (idle[s] > idle[best])
                best = s;
        if (idle[best] == 0)
            break;
        n -= idle[best];
        idle[best] = 0;
        k++;
    }
    return k;
}

static void start(replay *R, job *j, const int *nodes)
{
    const lab19_fabric *f = R->f;
    char on[LAB19_MAX_SWITCHES] = {0};
    j->least_now = j->nodes > 1 ? least_now(R, j->nodes) : 1;
    j->leaves = 0;
    for (int i = 0; i < j->nodes; i++) {
        j->where[i] = nodes[i];
        R->free_gpus[nodes[i]] -= j->nodes == 1 ? j->gpus : f->gpus_per_node;
        if (!on[f->leaf[nodes[i]]]++)
            j->leaves++;
    }
    j->least_leaves = least_leaves(R, j->nodes);
    j->start = R->t;
    j->end = R->t + j->duration;
    j->state = 2;
    if (j->nodes > 1)
        R->run[R->nrun++] = (int)(j - R->jobs);
}

static void finish(replay *R, job *j)
{
    for (int i = 0; i < j->nodes; i++)
        R->free_gpus[j->where[i]] += j->nodes == 1 ? j->gpus : R->f->gpus_per_node;
    j->state = 3;
    for (int k = 0; k < R->nrun; k++)
        if (&R->jobs[R->run[k]] == j) {
            R->run[k] = R->run[--R->nrun];
            R->slow[k] = R->slow[R->nrun];
            break;
        }
}

/* --- the replay
 * ----------------------------------------------------------------------------------- */

static cl_result run(cl_case *c, replay *R, int student, place_args *a)
{
    int next = 0, done = 0, *queue = malloc((size_t)R->njobs * sizeof *queue), nq = 0;
    int nodes[MAX_SPAN];
    if (!queue)
        return CL_ERR_NOMEM;
    cl_result rc = CL_OK;
    double horizon = R->jobs[R->njobs - 1].submit; /* a first guess for the timeline's end */
    for (int i = 0; i < R->njobs; i++)
        horizon = fmax(horizon, R->jobs[i].submit + R->jobs[i].duration);
    R->t0 = R->t = R->jobs[0].submit;
    R->t1 = R->jobs[R->njobs - 1].submit;
    while (rc == CL_OK && done < R->njobs) {
        /* the next event: an arrival or a completion */
        double t = next < R->njobs ? R->jobs[next].submit : INFINITY;
        for (int i = 0; i < R->njobs; i++)
            if (R->jobs[i].state == 2 && R->jobs[i].end < t)
                t = R->jobs[i].end;
        if (!isfinite(t)) {
            cl_set_error("replay: %d jobs can never start (the fabric is too small)", nq);
            rc = CL_ERR_INVALID;
            break;
        }
        advance(R, t, horizon);
        for (int i = 0; i < R->njobs; i++)
            if (R->jobs[i].state == 2 && R->jobs[i].end <= t) {
                finish(R, &R->jobs[i]);
                done++;
            }
        while (next < R->njobs && R->jobs[next].submit <= t) {
            R->jobs[next].state = 1;
            queue[nq++] = next++;
        }
        update_loads(R);
        int kept = 0;
        for (int q = 0; q < nq && rc == CL_OK; q++) {
            job *j = &R->jobs[queue[q]];
            if (!feasible(R, j)) {
                queue[kept++] = queue[q];
                continue;
            }
            if (student)
                rc = ask_student(c, R, a, j, nq - q - 1, nodes);
            else
                first_fit(R, j, nodes);
            if (rc == CL_OK) {
                start(R, j, nodes);
                if (j->nodes > 1)
                    update_loads(R);
            }
        }
        nq = rc == CL_OK ? kept : nq;
    }
    free(queue);
    return rc;
}

static void metrics(cl_case *c, const replay *R)
{
    double gt = 0, slow = 0, spread = 0, excess = 0, gw = 0, wait = 0, mgw = 0, mwait = 0,
           end = R->t;
    int multi = 0;
    for (int i = 0; i < R->njobs; i++) {
        const job *j = &R->jobs[i];
        double w = j->start - j->submit;
        gw += j->gpus;
        wait += w * j->gpus;
        if (j->nodes > 1) {
            multi++;
            double area = j->gpus * j->duration;
            gt += area;
            slow += j->slow_area * j->gpus;
            spread += (j->leaves - j->least_leaves) * area;
            excess += (j->leaves - j->least_now) * area;
            mgw += j->gpus;
            mwait += w * j->gpus;
        }
    }
    double span = end - R->t0 > 0 ? end - R->t0 : 1, window = R->t1 - R->t0 > 0 ? R->t1 - R->t0 : 1;
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "jobs", R->njobs);
    cl_col_int(row, "multinode", multi);
    cl_col_num(row, "slowdown", gt > 0 ? slow / gt : 1, "%.4f");
    cl_col_num(row, "spread", gt > 0 ? spread / gt : 0, "%.4f");
    cl_col_num(row, "excess", gt > 0 ? excess / gt : 0, "%.4f");
    cl_col_num(row, "frag", R->frag_area / window, "%.4f");
    cl_col_num(row, "frag_leaf", R->frag_leaf_area / window, "%.4f");
    cl_col_num(row, "busy", R->busy_area / window, "%.4f");
    cl_col_num(row, "wait", gw > 0 ? wait / gw : 0, "%.1f");
    cl_col_num(row, "wait_multinode", mgw > 0 ? mwait / mgw : 0, "%.1f");
    cl_col_num(row, "makespan", span, "%.0f");
    cl_col_nums(row, "tl_t", R->tl_t, (size_t)R->sampled, "%.0f");
    cl_col_nums(row, "tl_frag_leaf", R->tl_leaf, (size_t)R->sampled, "%.3f");
    cl_col_nums(row, "tl_frag", R->tl_frag, (size_t)R->sampled, "%.3f");
    cl_col_nums(row, "tl_busy", R->tl_busy, (size_t)R->sampled, "%.3f");
}

/* jobs=FILE: every job as `sacct --parsable2 --format=JobID,Submit,Start,End,NNodes,AllocTRES,
 * NodeList` prints it, with times in seconds from the trace's start (sacct prints dates) and the
 * node list as the names joined by commas (a hostlist Slurm accepts anywhere). */
static cl_result write_jobs(const replay *R, const char *path)
{
    FILE *out = fopen(path, "w");
    if (!out) {
        cl_set_error("jobs=%s: %s", path, strerror(errno));
        return CL_ERR_IO;
    }
    fprintf(out, "JobID|Submit|Start|End|NNodes|AllocTRES|NodeList\n");
    for (int i = 0; i < R->njobs; i++) {
        const job *j = &R->jobs[i];
        fprintf(out, "%d|%.1f|%.1f|%.1f|%d|gres/gpu=%d,node=%d|", j->id, j->submit, j->start,
                j->end, j->nodes, j->gpus, j->nodes);
        for (int k = 0; k < j->nodes; k++)
            fprintf(out, "%s%s", k ? "," : "", R->f->node[j->where[k]]);
        fputc('\n', out);
    }
    if (fclose(out) != 0) {
        cl_set_error("jobs=%s: %s", path, strerror(errno));
        return CL_ERR_IO;
    }
    return CL_OK;
}

cl_result lab19_replay_case(cl_case *c)
{
    const char *fpath, *tpath, *policy = "student";
    CL_CHECK(cl_case_str(c, "fabric", &fpath));
    CL_CHECK(cl_case_str(c, "trace", &tpath));
    if (cl_case_str(c, "policy", &policy) != CL_OK)
        policy = "student";
    int student = strcmp(policy, "student") == 0;
    if (!student && strcmp(policy, "firstfit") != 0) {
        cl_set_error("policy=%s: student or firstfit", policy);
        return CL_ERR_INVALID;
    }
    const char *ns = cl_opt(cl_case_run(c), "samples");
    int samples = ns ? atoi(ns) : 100;
    if (samples < 1 || samples > 10000) {
        cl_set_error("--samples wants 1 to 10000, not %s", ns ? ns : "");
        return CL_ERR_INVALID;
    }
    replay R = {0};
    lab19_fabric *f = malloc(sizeof *f);
    R.jobs = malloc(MAX_JOBS * sizeof *R.jobs);
    place_args *a = NULL;
    cl_result rc = f && R.jobs ? lab19_read_fabric(fpath, f) : CL_ERR_NOMEM;
    if (rc == CL_OK)
        rc = read_trace(tpath, f, R.jobs, &R.njobs);
    if (rc == CL_OK) {
        R.f = f;
        R.samples = samples;
        R.free_gpus = calloc((size_t)f->nnodes, sizeof *R.free_gpus);
        R.load = calloc(LAB19_MAX_SWITCHES, sizeof *R.load);
        R.slow = calloc((size_t)R.njobs, sizeof *R.slow);
        R.run = calloc((size_t)R.njobs, sizeof *R.run);
        R.leaf_order = calloc(LAB19_MAX_SWITCHES, sizeof *R.leaf_order);
        R.leaf_size = calloc(LAB19_MAX_SWITCHES, sizeof *R.leaf_size);
        R.tl_t = calloc((size_t)samples, sizeof *R.tl_t);
        R.tl_leaf = calloc((size_t)samples, sizeof *R.tl_leaf);
        R.tl_frag = calloc((size_t)samples, sizeof *R.tl_frag);
        R.tl_busy = calloc((size_t)samples, sizeof *R.tl_busy);
        a = calloc(1, sizeof *a);
        if (!R.free_gpus || !R.load || !R.slow || !R.run || !R.leaf_order || !R.leaf_size ||
            !R.tl_t || !R.tl_leaf || !R.tl_frag || !R.tl_busy || !a)
            rc = CL_ERR_NOMEM;
    }
    if (rc == CL_OK) {
        for (int i = 0; i < R.njobs; i++) {
            int k = 0;
            while (k < R.nsizes && R.size[k] != R.jobs[i].gpus)
                k++;
            if (k == R.nsizes && R.nsizes < 64)
                R.size[R.nsizes++] = R.jobs[i].gpus;
            if (k < 64)
                R.share[k] += 1.0 / R.njobs;
        }
        for (int i = 0; i < f->nnodes; i++) {
            R.free_gpus[i] = f->gpus_per_node;
            R.leaf_size[f->leaf[i]]++;
        }
        for (int s = 0; s < f->nswitches; s++)
            if (f->sw[s].level == 1)
                R.leaf_order[R.nleaves++] = s;
        qsort_r(R.leaf_order, (size_t)R.nleaves, sizeof *R.leaf_order, cmp_size_desc, R.leaf_size);
        if (student && !(a->f = cl_share(f, sizeof *f)))
            rc = CL_ERR_NOMEM;
    }
    if (rc == CL_OK)
        rc = run(c, &R, student, a);
    cl_col_str(cl_case_row(c), "policy", policy);
    if (rc == CL_OK)
        metrics(c, &R);
    const char *jobs;
    if (rc == CL_OK && cl_case_str(c, "jobs", &jobs) == CL_OK)
        rc = write_jobs(&R, jobs);
    if (a && a->f)
        cl_host_free((void *)a->f);
    free(a);
    free(f);
    free(R.jobs);
    free(R.free_gpus);
    free(R.load);
    free(R.slow);
    free(R.run);
    free(R.leaf_order);
    free(R.leaf_size);
    free(R.tl_t);
    free(R.tl_leaf);
    free(R.tl_frag);
    free(R.tl_busy);
    return rc;
}
