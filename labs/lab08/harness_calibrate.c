/* harness_calibrate.c: lab 08's calibrate mode: the recorded sweeps of a system read from
 * datasets/nccl-tests (sweeps.csv, and their fitting points from fit.csv), each fitted by the
 * student's fit, and the student's table built from those fits and checked.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab08_harness.h"

/* --- the recorded sweeps of a system ---------------------------------------------------------- */

typedef struct sweep_rec {
    char id[64], system[64], algo[16], proto[16], name[48];
    int npoints;
    lab08_point points[LAB08_MAX_POINTS];
} sweep_rec;

/* Split a CSV line (no quoting) into at most max fields; returns how many. */
static int split_csv(char *line, char **field, int max)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line; n < max;) {
        field[n++] = p;
        char *comma = strchr(p, ',');
        if (!comma)
            break;
        *comma = '\0';
        p = comma + 1;
    }
    return n;
}

/* Open DIR/name for reading, or CL_ERR_IO naming it. */
static cl_result open_data(const char *dir, const char *name, FILE **f)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    *f = fopen(path, "r");
    if (!*f) {
        cl_set_error("cannot read %s (see --data)", path);
        return CL_ERR_IO;
    }
    return CL_OK;
}

/* The sweeps of system in DIR/sweeps.csv, with their points from DIR/fit.csv. */
static cl_result load_system(const char *dir, const char *system, sweep_rec *s, int *n)
{
    FILE *f;
    char line[1024], *fl[12];
    *n = 0;
    CL_CHECK(open_data(dir, "sweeps.csv", &f));
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || strncmp(line, "sweep,", 6) == 0)
            continue;
        if (split_csv(line, fl, 12) < 10 || strcmp(fl[1], system) != 0)
            continue;
        if (*n == LAB08_MAX_CONFIGS)
            break;
        sweep_rec *r = &s[(*n)++];
        memset(r, 0, sizeof *r);
        snprintf(r->id, sizeof r->id, "%s", fl[0]);
        snprintf(r->system, sizeof r->system, "%s", fl[1]);
        snprintf(r->algo, sizeof r->algo, "%s", fl[7]);
        snprintf(r->proto, sizeof r->proto, "%s", fl[8]);
        snprintf(r->name, sizeof r->name, "%s%s%s", r->algo[0] ? r->algo : "",
                 r->algo[0] && r->proto[0] ? "/" : "", r->proto[0] ? r->proto : "");
        if (!r->name[0])
            snprintf(r->name, sizeof r->name, "default");
    }
    fclose(f);
    if (*n == 0) {
        cl_set_error("no sweep of system '%s' in %s/sweeps.csv", system, dir);
        return CL_ERR_INVALID;
    }
    CL_CHECK(open_data(dir, "fit.csv", &f));
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || strncmp(line, "sweep,", 6) == 0 || split_csv(line, fl, 4) < 3)
            continue;
        for (int i = 0; i < *n; i++)
            if (strcmp(fl[0], s[i].id) == 0 && s[i].npoints < LAB08_MAX_POINTS)
                s[i].points[s[i].npoints++] = (lab08_point){atof(fl[1]), atof(fl[2])};
    }
    fclose(f);
    return CL_OK;
}

/* Rank 0 fits every recorded sweep of --machine with your fit (one row each)
 * and builds your table from the fits (header fields table, table_error). */
cl_result calibrate(cl_run *run, cl_comm *c)
{
    static sweep_rec s[LAB08_MAX_CONFIGS];
    static table_args t;
    int n;
    if (cl_comm_rank(c) != 0)
        return CL_OK;
    const char *system = cl_opt(run, "machine");
    CL_CHECK(load_system(cl_opt(run, "data"), system, s, &n));
    cl_report_str(run, "system", system);
    cl_report_str(run, "units", "alpha in us, bandwidth in GB/s (algbw)");
    memset(&t, 0, sizeof t);
    t.nconfigs = n;
    size_t max_bytes;
    CL_CHECK(cl_opt_size(run, "max-bytes-table", 0, 0, &max_bytes)); /* it has a fallback */
    t.max_bytes = max_bytes;
    cl_result fits = CL_OK;
    for (int i = 0; i < n; i++) {
        fit_args a = {.n = s[i].npoints};
        memcpy(a.points, s[i].points, sizeof a.points);
        cl_call_result res;
        CL_CHECK(cl_student_run(c, "fit", &a, sizeof a, CL_ALLOW_ALL, &res));
        t.fits[i] = a.out;
        if (res.status != CL_OK && fits == CL_OK)
            fits = res.status;
        cl_row *row = cl_row_begin(run, c);
        cl_col_str(row, "sweep", s[i].id);
        cl_col_str(row, "config", s[i].name);
        cl_col_int(row, "points", s[i].npoints);
        cl_col_num(row, "alpha_us", res.status == CL_OK ? a.out.alpha_us : NAN, "%.4g");
        cl_col_num(row, "bw_gbps", res.status == CL_OK ? a.out.bw_gbps : NAN, "%.4g");
        cl_col_call(row, &res);
        cl_row_end(row);
    }
    char text[LAB08_MAX_ROWS * 96] = "", why[400] = "a fit failed: no table";
    cl_result rc = fits;
    if (fits == CL_OK) {
        cl_call_result res;
        CL_CHECK(cl_student_run(c, "table", &t, sizeof t, CL_ALLOW_ALL, &res));
        rc = res.status;
        snprintf(why, sizeof why, "%s", rc == CL_OK ? "" : res.error);
        if (rc == CL_OK && table_valid(&t, why, sizeof why))
            for (int i = 0; i < t.nrows; i++)
                snprintf(text + strlen(text), sizeof text - strlen(text), "%s%llu-%llu:%s",
                         i ? ";" : "", t.rows[i].min_bytes, t.rows[i].max_bytes,
                         s[t.rows[i].config].id);
    }
    cl_report_str(run, "table", text);
    cl_report_str(run, "table_error", why);
    cl_report_str(run, "table_status", cl_result_str(rc));
    return CL_OK;
}
