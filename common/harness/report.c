/* report.c: rows and header fields, printed as a table as they come and written as JSON at the end.
 *
 * The table is for people: "#" lines carry the header fields and the column
 * names, then one line per row, as nccl-tests prints. The JSON is for the
 * grader: the same fields and rows, every sample of an array column, and the
 * run's status. It is written to a temporary name and renamed, so a reader
 * sees a whole file or none.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "run.h"
#include "stats.h"

enum { V_STR, V_INT, V_NUM, V_NUMS, V_INTS };

typedef struct col {
    char key[48];
    int type;
    char *s;
    long long i;
    double d;
    double *nums;
    long long *ints;
    size_t n;
    char fmt[16];
} col;

struct cl_row {
    col *c;
    int n, cap;
    int number;
};

struct cl_report {
    col *fields;
    int nfields, capfields;
    cl_row **rows;
    int nrows, caprows;
    int printed_fields;
    char head[1024]; /* the column keys of the block being printed */
    int width[64];
};

cl_report *cl_report_new(const cl_run *run)
{
    (void)run;
    return calloc(1, sizeof(cl_report));
}

static void col_free(col *c)
{
    free(c->s);
    free(c->nums);
    free(c->ints);
}

void cl_report_free(cl_report *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->nfields; i++)
        col_free(&r->fields[i]);
    for (int i = 0; i < r->nrows; i++) {
        for (int k = 0; k < r->rows[i]->n; k++)
            col_free(&r->rows[i]->c[k]);
        free(r->rows[i]->c);
        free(r->rows[i]);
    }
    free(r->fields);
    free(r->rows);
    free(r);
}

static col *add_col(col **cs, int *n, int *cap, const char *key)
{
    for (int i = 0; i < *n; i++)
        if (strcmp((*cs)[i].key, key) == 0) { /* a key given twice: the last value wins */
            col_free(&(*cs)[i]);
            memset(&(*cs)[i], 0, sizeof **cs);
            snprintf((*cs)[i].key, sizeof(*cs)[i].key, "%s", key);
            return &(*cs)[i];
        }
    if (*n == *cap) {
        int nc = *cap ? 2 * *cap : 16;
        col *q = realloc(*cs, (size_t)nc * sizeof *q);
        if (!q)
            return NULL;
        *cs = q;
        *cap = nc;
    }
    col *c = &(*cs)[(*n)++];
    memset(c, 0, sizeof *c);
    snprintf(c->key, sizeof c->key, "%s", key);
    return c;
}

static col *field(cl_run *run, const char *key)
{
    cl_report *r = run->report;
    return r ? add_col(&r->fields, &r->nfields, &r->capfields, key) : NULL;
}

void cl_report_str(cl_run *run, const char *key, const char *value)
{
    col *c = field(run, key);
    if (c) {
        c->type = V_STR;
        c->s = strdup(value ? value : "");
    }
}

void cl_report_num(cl_run *run, const char *key, double value)
{
    col *c = field(run, key);
    if (c) {
        c->type = V_NUM;
        c->d = value;
        snprintf(c->fmt, sizeof c->fmt, "%%g");
    }
}

void cl_report_int(cl_run *run, const char *key, long long value)
{
    col *c = field(run, key);
    if (c) {
        c->type = V_INT;
        c->i = value;
    }
}

/* --- rows --------------------------------------------------------------------------------- */

static cl_run *current_run; /* rows print through the run that made them */

cl_row *cl_row_begin(cl_run *run, const cl_comm *comm)
{
    if (comm && comm->world_rank != 0)
        return NULL;
    cl_report *r = run->report;
    cl_row *row = calloc(1, sizeof *row);
    if (!r || !row) {
        free(row);
        return NULL;
    }
    if (r->nrows == r->caprows) {
        int nc = r->caprows ? 2 * r->caprows : 32;
        cl_row **q = realloc(r->rows, (size_t)nc * sizeof *q);
        if (!q) {
            free(row);
            return NULL;
        }
        r->rows = q;
        r->caprows = nc;
    }
    r->rows[r->nrows++] = row;
    row->number = r->nrows;
    current_run = run;
    return row;
}

void cl_col_str(cl_row *r, const char *key, const char *value)
{
    col *c = r ? add_col(&r->c, &r->n, &r->cap, key) : NULL;
    if (c) {
        c->type = V_STR;
        c->s = strdup(value ? value : "");
    }
}

void cl_col_int(cl_row *r, const char *key, long long value)
{
    col *c = r ? add_col(&r->c, &r->n, &r->cap, key) : NULL;
    if (c) {
        c->type = V_INT;
        c->i = value;
    }
}

void cl_col_num(cl_row *r, const char *key, double value, const char *fmt)
{
    col *c = r ? add_col(&r->c, &r->n, &r->cap, key) : NULL;
    if (c) {
        c->type = V_NUM;
        c->d = value;
        snprintf(c->fmt, sizeof c->fmt, "%s", fmt ? fmt : "%g");
    }
}

void cl_col_nums(cl_row *r, const char *key, const double *v, size_t n, const char *fmt)
{
    col *c = r ? add_col(&r->c, &r->n, &r->cap, key) : NULL;
    if (!c)
        return;
    c->type = V_NUMS;
    c->nums = malloc((n ? n : 1) * sizeof *v);
    if (c->nums && n)
        memcpy(c->nums, v, n * sizeof *v);
    c->n = c->nums ? n : 0;
    snprintf(c->fmt, sizeof c->fmt, "%s", fmt ? fmt : "%g");
}

void cl_col_ints(cl_row *r, const char *key, const long long *v, size_t n)
{
    col *c = r ? add_col(&r->c, &r->n, &r->cap, key) : NULL;
    if (!c)
        return;
    c->type = V_INTS;
    c->ints = malloc((n ? n : 1) * sizeof *v);
    if (c->ints && n)
        memcpy(c->ints, v, n * sizeof *v);
    c->n = c->ints ? n : 0;
}

void cl_col_call(cl_row *r, const cl_call_result *res)
{
    cl_col_str(r, "status", cl_result_str(res->status));
    if (res->forbidden[0])
        cl_col_str(r, "forbidden", res->forbidden);
    if (res->status != CL_OK)
        cl_col_str(r, "error", res->error);
}

/* --- the table ------------------------------------------------------------------------------ */

static void cell(const col *c, char *out, size_t n)
{
    switch (c->type) {
    case V_STR: snprintf(out, n, "%s", c->s ? c->s : ""); return;
    case V_INT: snprintf(out, n, "%lld", c->i); return;
    case V_NUM:
        if (isfinite(c->d))
            snprintf(out, n, c->fmt, c->d);
        else
            snprintf(out, n, "-");
        return;
    case V_NUMS: {
        double m = c->n ? cl_median(c->nums, c->n) : NAN;
        if (isfinite(m))
            snprintf(out, n, c->fmt, m);
        else
            snprintf(out, n, "-");
        return;
    }
    default: {
        long long s = 0;
        for (size_t i = 0; i < c->n; i++)
            s += c->ints[i];
        snprintf(out, n, "%lld", s);
    }
    }
}

static int is_text(const col *c)
{
    return strcmp(c->key, "error") == 0 || strcmp(c->key, "why") == 0;
}

static void print_fields(cl_report *r)
{
    for (int i = r->printed_fields; i < r->nfields; i++) {
        char v[256];
        cell(&r->fields[i], v, sizeof v);
        printf("# %s: %s\n", r->fields[i].key, v);
    }
    r->printed_fields = r->nfields;
}

void cl_row_end(cl_row *row)
{
    if (!row || !current_run || !current_run->report)
        return;
    cl_report *r = current_run->report;
    print_fields(r);
    char head[1024] = "";
    for (int i = 0; i < row->n; i++) {
        strncat(head, row->c[i].key, sizeof head - strlen(head) - 2);
        strcat(head, ",");
    }
    if (strcmp(head, r->head) != 0) { /* a new block of columns: its header line */
        snprintf(r->head, sizeof r->head, "%s", head);
        printf("#");
        for (int i = 0; i < row->n && i < 64; i++) {
            char v[256];
            cell(&row->c[i], v, sizeof v);
            int w = (int)strlen(row->c[i].key), wv = (int)strlen(v);
            r->width[i] = (wv + 3 > w + 2 ? wv + 3 : w + 2);
            if (r->width[i] < 7)
                r->width[i] = 7;
            if (is_text(&row->c[i]))
                printf("  %s", row->c[i].key);
            else
                printf("%*s", i == 0 ? r->width[i] - 1 : r->width[i], row->c[i].key);
        }
        printf("\n");
    }
    for (int i = 0; i < row->n && i < 64; i++) {
        char v[512];
        cell(&row->c[i], v, sizeof v);
        if (is_text(&row->c[i]))
            printf("  %s", v);
        else
            printf(" %*s", r->width[i] - 1, v); /* a space even when a value overflows */
    }
    printf("\n");
    fflush(stdout);
}

/* --- JSON ----------------------------------------------------------------------------------- */

static void json_col(cl_json *j, const col *c)
{
    switch (c->type) {
    case V_STR: cl_json_string(j, c->key, c->s); break;
    case V_INT: cl_json_int(j, c->key, c->i); break;
    case V_NUM: cl_json_number(j, c->key, c->d); break;
    case V_NUMS: cl_json_number_array(j, c->key, c->nums, c->n); break;
    default: cl_json_int_array(j, c->key, c->ints, c->n);
    }
}

static const char *status_word(cl_result rc)
{
    switch (rc) {
    case CL_OK: return "ok";
    case CL_ERR_CRASHED: return "crashed";
    case CL_ERR_TIMEOUT: return "timeout";
    case CL_ERR_UNSUPPORTED: return "unsupported";
    default: return "error";
    }
}

cl_result cl_report_finish(cl_run *run, cl_result status, const char *error, int print)
{
    cl_report *r = run->report;
    if (!r)
        return CL_OK;
    if (print) {
        print_fields(r);
        if (status != CL_OK)
            printf("# %s: %s\n", status_word(status), error ? error : "");
        else if (r->nrows)
            printf("# %d row(s)\n", r->nrows);
        fflush(stdout);
    }
    if (!run->o.json)
        return CL_OK;
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", run->o.json, (int)getpid());
    cl_json j;
    CL_CHECK(cl_json_open(&j, tmp));
    cl_json_object_start(&j, NULL);
    cl_json_string(&j, "lab", run->lab->name);
    cl_json_string(&j, "mode", run->mode ? run->mode->name : "");
    cl_json_string(&j, "status", status_word(status));
    cl_json_string(&j, "error", status == CL_OK ? "" : error ? error : "");
    for (int i = 0; i < r->nfields; i++)
        json_col(&j, &r->fields[i]);
    cl_json_array_start(&j, "rows");
    for (int i = 0; i < r->nrows; i++) {
        cl_json_object_start(&j, NULL);
        for (int k = 0; k < r->rows[i]->n; k++)
            json_col(&j, &r->rows[i]->c[k]);
        cl_json_object_end(&j);
    }
    cl_json_array_end(&j);
    cl_json_object_end(&j);
    CL_CHECK(cl_json_close(&j));
    if (rename(tmp, run->o.json) != 0) {
        cl_set_error("cannot write %s", run->o.json);
        return CL_ERR_IO;
    }
    return CL_OK;
}
