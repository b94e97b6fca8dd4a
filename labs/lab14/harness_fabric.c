/* harness_fabric.c: what lab 14's modes share: memory the student's program shares, the
 * harness's fabric and forwarding tables converted to the student's and back (the student's
 * fabric checked on the way), the case's fabric file, the student's call, and the columns
 * every mode reports (the route check, and the fabric with its cable loads for the picture).
 */
#include <stdlib.h>
#include <string.h>

#include "boundary/arena.h"
#include "lab14_harness.h"

/* --- memory the student's program shares ------------------------------------------------ */

void *shared(size_t bytes)
{
    void *p;
    if (cl_host_alloc(bytes, &p) != CL_OK)
        return NULL;
    memset(p, 0, bytes);
    return p;
}

/* --- conversions between the harness's fabric and the student's -------------------------- */

void to_student(const cl_fabric *f, lab14_fabric *s)
{
    memset(s, 0, sizeof *s);
    s->nhosts = f->nhosts;
    s->nnodes = f->nnodes;
    for (int a = 0; a < f->nnodes; a++) {
        s->nports[a] = f->nports[a];
        s->level[a] = f->level[a];
        for (int p = 0; p < LAB14_MAX_PORTS; p++) {
            s->link[a][p] = (lab14_end){f->link[a][p].node, f->link[a][p].port};
            if (f->gbps[a][p] > s->gbps)
                s->gbps = f->gbps[a][p];
        }
    }
    for (int a = f->nnodes; a < LAB14_MAX_NODES; a++)
        for (int p = 0; p < LAB14_MAX_PORTS; p++)
            s->link[a][p] = (lab14_end){-1, -1};
}

/* The student's fabric, checked: CL_ERR_INVALID with a reason. */
cl_result from_student(const lab14_fabric *s, cl_fabric *f)
{
    memset(f, 0, sizeof *f);
    if (s->nhosts < 1 || s->nhosts > LAB14_MAX_HOSTS || s->nnodes <= s->nhosts ||
        s->nnodes > LAB14_MAX_NODES || s->nnodes - s->nhosts > LAB14_MAX_SWITCHES) {
        cl_set_error("nhosts %d, nnodes %d: outside the limits", s->nhosts, s->nnodes);
        return CL_ERR_INVALID;
    }
    f->nhosts = s->nhosts;
    f->nnodes = s->nnodes;
    for (int a = 0; a < s->nnodes; a++) {
        f->nports[a] = s->nports[a];
        for (int p = 0; p < CL_FABRIC_MAX_PORTS; p++) {
            f->link[a][p] = (cl_fabric_end){s->link[a][p].node, s->link[a][p].port};
            if (p >= s->nports[a])
                f->link[a][p] = (cl_fabric_end){-1, -1};
            f->gbps[a][p] = s->gbps;
        }
    }
    return cl_fabric_finish(f);
}

cl_result read_fabric(cl_case *c, cl_fabric **out)
{
    const char *path;
    CL_CHECK(cl_case_str(c, "fabric", &path));
    cl_fabric *f = malloc(sizeof *f);
    if (!f)
        return CL_ERR_NOMEM;
    cl_result rc = cl_fabric_read(path, 100, f);
    if (rc != CL_OK) {
        free(f);
        return rc;
    }
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "hosts", f->nhosts);
    cl_col_int(row, "switches", f->nnodes - f->nhosts);
    *out = f;
    return CL_OK;
}

void routes_to_student(const cl_fabric_routes *r, lab14_routes *s)
{
    for (int w = 0; w < r->nswitches; w++)
        for (int d = 0; d < r->nhosts; d++)
            s->out[w][d] = r->out[(size_t)w * r->nhosts + d];
}

void routes_from_student(const lab14_routes *s, cl_fabric_routes *r)
{
    for (int w = 0; w < r->nswitches; w++)
        for (int d = 0; d < r->nhosts; d++)
            r->out[(size_t)w * r->nhosts + d] = s->out[w][d];
}

/* Call the student's function for the case (the row gets its status); *ok says
 * whether it returned CL_OK. Returns CL_OK unless the student's program died,
 * which ends the mode. */
cl_result call(cl_case *c, const char *entry, void *args, size_t bytes, int *ok)
{
    cl_result rc = cl_case_call(c, entry, args, bytes);
    *ok = rc == CL_OK;
    return rc == CL_ERR_CRASHED || rc == CL_ERR_TIMEOUT ? rc : CL_OK;
}

/* The route check's columns. */
void report_check(cl_row *row, const cl_fabric_check *k)
{
    cl_col_int(row, "pairs", k->pairs);
    cl_col_int(row, "delivered", k->delivered);
    cl_col_str(row, "bad_route", k->why);
    cl_col_int(row, "max_hops", k->max_hops);
    cl_col_int(row, "dependencies", k->dependencies);
    cl_col_int(row, "acyclic", k->acyclic);
}

/* The fabric and the load on each direction of each cable, for the picture;
 * with job, also the part of it that is the job's own. */
void report_drawing(cl_row *row, const cl_fabric *f, const double *load, const double *job)
{
    long long *lv = malloc((size_t)f->nnodes * sizeof *lv);
    int ncab = 0;
    for (int a = 0; a < f->nnodes; a++)
        for (int p = 0; p < f->nports[a]; p++)
            ncab += f->link[a][p].node > a;
    long long *ca = malloc(((size_t)ncab + 1) * sizeof *ca),
              *cb = malloc(((size_t)ncab + 1) * sizeof *cb);
    double *up = malloc(((size_t)ncab + 1) * sizeof *up),
           *down = malloc(((size_t)ncab + 1) * sizeof *down);
    double *jup = malloc(((size_t)ncab + 1) * sizeof *jup),
           *jdown = malloc(((size_t)ncab + 1) * sizeof *jdown);
    if (lv && ca && cb && up && down && jup && jdown) {
        int k = 0;
        for (int a = 0; a < f->nnodes; a++) {
            lv[a] = f->level[a];
            for (int p = 0; p < f->nports[a]; p++) {
                cl_fabric_end e = f->link[a][p];
                if (e.node <= a)
                    continue;
                ca[k] = a;
                cb[k] = e.node;
                up[k] = load[CL_FABRIC_CHANNEL(a, p)];
                down[k] = load[CL_FABRIC_CHANNEL(e.node, e.port)];
                jup[k] = job ? job[CL_FABRIC_CHANNEL(a, p)] : 0;
                jdown[k++] = job ? job[CL_FABRIC_CHANNEL(e.node, e.port)] : 0;
            }
        }
        cl_col_ints(row, "level", lv, (size_t)f->nnodes);
        cl_col_ints(row, "cable_a", ca, (size_t)ncab);
        cl_col_ints(row, "cable_b", cb, (size_t)ncab);
        cl_col_nums(row, "load_ab", up, (size_t)ncab, "%.0f");
        cl_col_nums(row, "load_ba", down, (size_t)ncab, "%.0f");
        if (job) {
            cl_col_nums(row, "job_ab", jup, (size_t)ncab, "%.0f");
            cl_col_nums(row, "job_ba", jdown, (size_t)ncab, "%.0f");
        }
    }
    free(jup);
    free(jdown);
    free(lv);
    free(ca);
    free(cb);
    free(up);
    free(down);
}
