/* driver.c: lab 08's plug-in: fits of nccl-tests sweeps, the tuning table, and sweeps to fit.
 *
 *   lab08 fit points=8:17.3,64:17.4,...            your fit of one sweep (BYTES:US pairs)
 *   lab08 table fits=17.1:4.6,40.1:10.3 max_bytes=4294967295
 *                                                  your table for fitted ALPHA_US:BW_GBPS
 *   lab08 calibrate --machine l40s-4gpu [--data DIR]  every recorded sweep of a machine:
 *                                                  your fits of its fitting points, your table
 *   lab08 sweep [-b 8 -e 64M -f 4 | --sizes 8,1M] [--repeats 5]   (cpu, gpu)
 *       the library's AllReduce at each size, nccl-tests' way: time per call and bus
 *       bandwidth; on gpu NCCL honours NCCL_ALGO and NCCL_PROTO from the environment
 *
 * The recorded sweeps are datasets/nccl-tests/ (README.md names every source).
 * Your code gets the fitting points only; the held-out points stay with the
 * grader, which scores your fits and your table on them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness.h"
#include "lab08.h"

typedef struct fit_args {
    int n;
    lab08_point points[LAB08_MAX_POINTS];
    lab08_fit out; /* out */
} fit_args;

typedef struct table_args {
    int nconfigs;
    lab08_fit fits[LAB08_MAX_CONFIGS];
    unsigned long long max_bytes;
    int nrows;                      /* out */
    lab08_row rows[LAB08_MAX_ROWS]; /* out */
} table_args;

#ifdef CL_STUDENT_SIDE

static cl_result fit(cl_comm *c, void *args)
{
    (void)c;
    fit_args *a = args;
    return lab08_fit_sweep(a->points, a->n, &a->out);
}

static cl_result table(cl_comm *c, void *args)
{
    (void)c;
    table_args *a = args;
    return lab08_make_table(a->fits, a->nconfigs, a->max_bytes, a->rows, &a->nrows);
}

CL_STUDENT_ENTRIES({"fit", fit}, {"table", table});

#else

/* --- parsing ------------------------------------------------------------------------------ */

/* "A:B,A:B,..." into pairs; CL_ERR_INVALID naming the key for anything else. */
static cl_result parse_pairs(const char *key, const char *text, double (*out)[2], int max, int *n)
{
    *n = 0;
    for (const char *p = text; *p;) {
        char *end;
        if (*n == max) {
            cl_set_error("%s: more than %d pairs", key, max);
            return CL_ERR_INVALID;
        }
        out[*n][0] = strtod(p, &end);
        if (end == p || *end != ':') {
            cl_set_error("%s: expected A:B,A:B,... at '%.20s'", key, p);
            return CL_ERR_INVALID;
        }
        p = end + 1;
        out[*n][1] = strtod(p, &end);
        if (end == p || (*end && *end != ',')) {
            cl_set_error("%s: expected A:B,A:B,... at '%.20s'", key, p);
            return CL_ERR_INVALID;
        }
        (*n)++;
        p = *end ? end + 1 : end;
    }
    return CL_OK;
}

/* --- the table ------------------------------------------------------------------------------ */

/* Whether the rows cover 0 .. max_bytes in order with valid configurations;
 * the reason in why when not. */
static int table_valid(const table_args *a, char *why, size_t len)
{
    if (a->nrows < 1 || a->nrows > LAB08_MAX_ROWS) {
        snprintf(why, len, "%d rows (1 to %d)", a->nrows, LAB08_MAX_ROWS);
        return 0;
    }
    unsigned long long expect = 0;
    for (int i = 0; i < a->nrows; i++) {
        const lab08_row *r = &a->rows[i];
        if (r->min_bytes != expect) {
            snprintf(why, len, "row %d starts at %llu, not %llu (a gap or an overlap)", i,
                     r->min_bytes, expect);
            return 0;
        }
        if (r->max_bytes < r->min_bytes || r->max_bytes > a->max_bytes) {
            snprintf(why, len, "row %d ends at %llu (from %llu, at most %llu)", i, r->max_bytes,
                     r->min_bytes, a->max_bytes);
            return 0;
        }
        if (r->config < 0 || r->config >= a->nconfigs) {
            snprintf(why, len, "row %d runs configuration %d of %d", i, r->config, a->nconfigs);
            return 0;
        }
        expect = r->max_bytes + 1;
    }
    if (a->rows[a->nrows - 1].max_bytes != a->max_bytes) {
        snprintf(why, len, "the table ends at %llu, not %llu", a->rows[a->nrows - 1].max_bytes,
                 a->max_bytes);
        return 0;
    }
    return 1;
}

/* Call the student's table and add its columns: "table" (MIN-MAX:CONFIG;...
 * with configurations by index) and "table_error" (empty when it is valid). */
static cl_result run_table(cl_case *c, table_args *a)
{
    cl_result rc = cl_case_call(c, "table", a, sizeof *a);
    cl_row *row = cl_case_row(c);
    char why[160] = "", text[LAB08_MAX_ROWS * 64] = "";
    if (rc == CL_OK && table_valid(a, why, sizeof why))
        for (int i = 0; i < a->nrows; i++)
            snprintf(text + strlen(text), sizeof text - strlen(text), "%s%llu-%llu:%d",
                     i ? ";" : "", a->rows[i].min_bytes, a->rows[i].max_bytes, a->rows[i].config);
    cl_col_str(row, "table", text);
    cl_col_str(row, "table_error", rc != CL_OK ? "no table" : why);
    return rc;
}

/* --- cases: fit and table ----------------------------------------------------------------- */

static cl_result fit_case(cl_case *c)
{
    const char *text;
    double pairs[LAB08_MAX_POINTS][2];
    fit_args a = {0};
    CL_CHECK(cl_case_str(c, "points", &text));
    CL_CHECK(parse_pairs("points", text, pairs, LAB08_MAX_POINTS, &a.n));
    for (int i = 0; i < a.n; i++)
        a.points[i] = (lab08_point){pairs[i][0], pairs[i][1]};
    cl_result rc = cl_case_call(c, "fit", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    cl_col_num(row, "alpha_us", rc == CL_OK ? a.out.alpha_us : NAN, "%.6g");
    cl_col_num(row, "bw_gbps", rc == CL_OK ? a.out.bw_gbps : NAN, "%.6g");
    return rc;
}

static cl_result table_case(cl_case *c)
{
    const char *text;
    double pairs[LAB08_MAX_CONFIGS + 1][2];
    long long max_bytes;
    table_args a = {0};
    CL_CHECK(cl_case_str(c, "fits", &text));
    CL_CHECK(cl_case_int(c, "max_bytes", &max_bytes));
    CL_CHECK(parse_pairs("fits", text, pairs, LAB08_MAX_CONFIGS + 1, &a.nconfigs));
    if (max_bytes < 0) {
        cl_set_error("max_bytes=%lld is negative", max_bytes);
        return CL_ERR_INVALID;
    }
    for (int i = 0; i < a.nconfigs && i < LAB08_MAX_CONFIGS; i++)
        a.fits[i] = (lab08_fit){pairs[i][0], pairs[i][1]};
    a.max_bytes = (unsigned long long)max_bytes;
    return run_table(c, &a);
}

/* --- cases: the recorded sweeps of a system ------------------------------------------------ */

#define MAX_SWEEPS 64
#define FIELD      160

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
static cl_result calibrate(cl_run *run, cl_comm *c)
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
    t.max_bytes = strtoull(cl_opt(run, "max-bytes-table"), NULL, 10);
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

/* --- ranks: the library's AllReduce, nccl-tests' way ---------------------------------------- */

#define MAX_SIZES 40

static cl_result sizes_of(cl_run *run, size_t *sizes, int *n)
{
    const cl_opts *o = cl_run_opts(run);
    const char *list = cl_opt(run, "sizes");
    *n = 0;
    if (list && *list) {
        char buf[512], *save = NULL;
        snprintf(buf, sizeof buf, "%s", list);
        for (char *t = strtok_r(buf, ",", &save); t && *n < MAX_SIZES;
             t = strtok_r(NULL, ",", &save))
            CL_CHECK(cl_parse_size(t, &sizes[(*n)++]));
    } else {
        for (size_t b = o->min_bytes; b <= o->max_bytes && *n < MAX_SIZES; b *= (size_t)o->factor)
            sizes[(*n)++] = b;
    }
    for (int i = 0; i < *n; i++)
        if (sizes[i] < sizeof(float)) {
            cl_set_error("size %zu: an AllReduce of floats needs at least 4 bytes", sizes[i]);
            return CL_ERR_INVALID;
        }
    return CL_OK;
}

/* Calls per sample: about 16 MiB of traffic, 5 to 200 calls. */
static int calls_for(size_t bytes)
{
    size_t k = ((size_t)16 << 20) / bytes;
    return k < 5 ? 5 : k > 200 ? 200 : (int)k;
}

static cl_result sweep(cl_run *run, cl_comm *c)
{
    const cl_opts *o = cl_run_opts(run);
    size_t sizes[MAX_SIZES], biggest = 0;
    int n, p = cl_comm_size(c);
    CL_CHECK(sizes_of(run, sizes, &n));
    for (int i = 0; i < n; i++)
        biggest = sizes[i] > biggest ? sizes[i] : biggest;
    const char *algo = getenv("NCCL_ALGO"), *proto = getenv("NCCL_PROTO");
    cl_report_str(run, "NCCL_ALGO", algo ? algo : "");
    cl_report_str(run, "NCCL_PROTO", proto ? proto : "");
    cl_report_str(run, "units", "size in bytes per rank, time in us per call, GB/s");
    void *send = NULL, *recv = NULL;
    cl_result rc = CL_OK;
    CL_TRY(cl_mem_alloc(c, biggest, &send));
    CL_TRY(cl_mem_alloc(c, biggest, &recv));
    for (int i = 0; i < n; i++) {
        size_t count = sizes[i] / sizeof(float), wrong = 0;
        uint64_t seed;
        cl_coll_args a = {.sendbuf = send,
                          .recvbuf = recv,
                          .count = count,
                          .dtype = CL_FLOAT32,
                          .op = CL_SUM,
                          .root = 0};
        CL_TRY(cl_fresh_seed(run, c, &seed));
        CL_TRY(cl_fill(c, send, count, CL_FLOAT32, CL_SUM, seed, cl_comm_rank(c), 0));
        cl_result first = cl_library_coll(c, CL_COLL_ALLREDUCE, &a);
        if (first != CL_OK && i == 0 && (algo || proto)) {
            /* NCCL refuses a forced setting the machine cannot run (NVLS
             * without NVSwitch) instead of falling back. */
            cl_set_error("NCCL_ALGO=%s NCCL_PROTO=%s does not run here: %s", algo ? algo : "",
                         proto ? proto : "", cl_last_error());
            rc = CL_ERR_UNSUPPORTED;
            goto done;
        }
        CL_TRY(first);
        CL_TRY(cl_count_wrong(c, recv, count, CL_FLOAT32, CL_SUM, seed, 0, p, 0, &wrong));
        double t[64];
        int calls = calls_for(sizes[i]), reps = o->repeats > 64 ? 64 : o->repeats;
        for (int r = 0; r < reps; r++) {
            CL_TRY(cl_barrier(c));
            double t0 = cl_comm_time(c);
            for (int k = 0; k < calls; k++)
                CL_TRY(cl_library_coll(c, CL_COLL_ALLREDUCE, &a));
            t[r] = (cl_comm_time(c) - t0) / calls * 1e6;
            CL_TRY(cl_agree_max(c, &t[r], 1));
        }
        double w = (double)wrong;
        CL_TRY(cl_agree_sum(c, &w, 1));
        double us = cl_median(t, (size_t)reps), algbw = us > 0 ? sizes[i] / us / 1e3 : 0;
        cl_row *row = cl_row_begin(run, c);
        cl_col_int(row, "size", (long long)sizes[i]);
        cl_col_int(row, "count", (long long)count);
        cl_col_nums(row, "time_us", t, (size_t)reps, "%.2f");
        cl_col_num(row, "algbw", algbw, "%.2f");
        cl_col_num(row, "busbw", algbw * cl_coll_busbw_factor(CL_COLL_ALLREDUCE, p), "%.2f");
        cl_col_int(row, "#wrong", (long long)w);
        cl_row_end(row);
    }
done:
    if (send)
        cl_mem_free(c, send);
    if (recv)
        cl_mem_free(c, recv);
    return rc;
}

const cl_lab cl_lab_def = {
    .name = "lab08",
    .title = "16 卡与 NVSwitch: 从 nccl-tests 扫描标定调优表",
    .modes =
        (const cl_mode[]){
            {.name = "fit", .help = "your fit of points=BYTES:US,...", .cases = fit_case},
            {.name = "table",
             .help = "your table for fits=ALPHA_US:BW_GBPS,... max_bytes=N",
             .cases = table_case},
            {.name = "calibrate",
             .help = "your fits and table for the recorded sweeps of --machine",
             .ranks = calibrate,
             .backends = "cpu"},
            {.name = "sweep",
             .help = "the library's AllReduce per size (nccl-tests' columns)",
             .ranks = sweep,
             .backends = "cpu,gpu"},
            {0}},
    .options =
        (const cl_option[]){
            {.name = "machine",
             .help = "M  calibrate: a system of sweeps.csv",
             .fallback = "l40s-4gpu"},
            {.name = "data", .help = "DIR  the recorded sweeps", .fallback = "datasets/nccl-tests"},
            {.name = "max-bytes-table",
             .help = "N  calibrate: the table's last size",
             .fallback = "4294967295"},
            {.name = "sizes", .help = "LIST  sweep these sizes (8,64K,1M) instead of -b/-e/-f"},
            {0}},
};

#endif
