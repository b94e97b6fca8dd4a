/* cases.c: a cases mode: each case is a line of key=value pairs; one row, one student call each. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boundary/arena.h"
#include "run.h"

#define MAX_KEYS       96
#define LINE_MAX_BYTES 65536

struct cl_case {
    cl_run *run;
    cl_comm *comm;
    int number;
    char *key[MAX_KEYS], *value[MAX_KEYS];
    int nkeys;
    cl_row *row;
    cl_result fatal; /* the student's program died: the mode ends */
};

cl_row *cl_case_row(cl_case *c) { return c->row; }
cl_run *cl_case_run(cl_case *c) { return c->run; }

cl_result cl_case_str(cl_case *c, const char *key, const char **out)
{
    for (int i = 0; i < c->nkeys; i++)
        if (strcmp(c->key[i], key) == 0) {
            *out = c->value[i];
            return CL_OK;
        }
    cl_set_error("case %d has no '%s'", c->number, key);
    return CL_ERR_INVALID;
}

cl_result cl_case_num(cl_case *c, const char *key, double *out)
{
    const char *v;
    CL_CHECK(cl_case_str(c, key, &v));
    char *end;
    errno = 0;
    *out = strtod(v, &end);
    if (!*v || *end || errno) {
        cl_set_error("case %d: %s=%s is not a number", c->number, key, v);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

cl_result cl_case_num_or(cl_case *c, const char *key, double fallback, double *out)
{
    const char *v;
    if (cl_case_str(c, key, &v) == CL_OK)
        return cl_case_num(c, key, out);
    cl_clear_error();
    if (isnan(fallback)) {
        cl_set_error("the case needs %s=", key);
        return CL_ERR_INVALID;
    }
    *out = fallback;
    return CL_OK;
}

cl_result cl_case_int(cl_case *c, const char *key, long long *out)
{
    const char *v;
    CL_CHECK(cl_case_str(c, key, &v));
    char *end;
    errno = 0;
    *out = strtoll(v, &end, 10);
    if (!*v || *end || errno) {
        cl_set_error("case %d: %s=%s is not a whole number", c->number, key, v);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

cl_result cl_case_nums(cl_case *c, const char *key, double *out, int max, int *n)
{
    const char *v;
    CL_CHECK(cl_case_str(c, key, &v));
    if (cl_parse_numbers(v, out, max, n) != CL_OK) {
        char why[160];
        snprintf(why, sizeof why, "%s", cl_last_error());
        cl_set_error("case %d: %s=: %s", c->number, key, why);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

void *cl_share(const void *data, size_t n)
{
    void *p = cl_arena_copy(data, n);
    if (!p)
        cl_set_error("no room in the shared arena for %zu bytes of arguments", n);
    return p;
}

cl_result cl_student_run(cl_comm *comm, const char *entry, void *args, size_t bytes, unsigned allow,
                         cl_call_result *res)
{
    cl_call call = {.entry = entry,
                    .args = args,
                    .args_bytes = bytes,
                    .out = args,
                    .out_bytes = bytes,
                    .allow = allow};
    cl_result rc = cl_student_call(comm, &call, res);
    if (rc == CL_OK && res->status != CL_OK)
        cl_set_error("%s", res->error);
    return rc;
}

cl_result cl_case_call(cl_case *c, const char *entry, void *args, size_t bytes)
{
    cl_call_result res;
    cl_result rc = cl_student_run(c->comm, entry, args, bytes, CL_ALLOW_ALL, &res);
    cl_col_call(c->row, &res);
    if (rc != CL_OK) {
        c->fatal = rc;
        return rc;
    }
    return res.status;
}

cl_result cl_case_call_quiet(cl_case *c, const char *entry, void *args, size_t bytes,
                             unsigned allow, cl_call_result *res)
{
    cl_result rc = cl_student_run(c->comm, entry, args, bytes, allow, res);
    if (rc != CL_OK)
        c->fatal = rc;
    return rc;
}

/* Split a line into key=value tokens; CL_ERR_INVALID for a token without '='. */
static cl_result tokens(cl_case *c, char *line)
{
    for (char *t = strtok(line, " \t\r\n"); t; t = strtok(NULL, " \t\r\n")) {
        char *eq = strchr(t, '=');
        if (!eq || eq == t) {
            cl_set_error("case %d: '%s' is not key=value", c->number, t);
            return CL_ERR_INVALID;
        }
        if (c->nkeys == MAX_KEYS) {
            cl_set_error("case %d: more than %d parameters", c->number, MAX_KEYS);
            return CL_ERR_INVALID;
        }
        *eq = '\0';
        c->key[c->nkeys] = t;
        c->value[c->nkeys++] = eq + 1;
    }
    return CL_OK;
}

/* One case: its row says its number, and the harness's or the student's verdict. */
static cl_result one(cl_run *run, cl_case *c)
{
    c->row = cl_row_begin(run, NULL);
    cl_col_int(c->row, "case", c->number);
    cl_clear_error();
    cl_result rc = run->mode->cases(c);
    if (c->fatal == CL_OK && rc != CL_OK) { /* a bad case, or the student's failure */
        cl_col_str(c->row, "status", cl_result_str(rc));
        cl_col_str(c->row, "error", cl_last_error());
    }
    cl_row_end(c->row);
    return c->fatal;
}

cl_result cl_run_cases(cl_run *run, cl_comm *comm)
{
    static char line[LINE_MAX_BYTES];
    cl_case c = {.run = run, .comm = comm};
    if (!run->o.cases) {
        if (run->nparams == 0) {
            cl_set_error("mode %s needs --cases FILE or key=value parameters", run->mode->name);
            return CL_ERR_INVALID;
        }
        c.number = 1;
        for (int i = 0; i < run->nparams; i++)
            CL_CHECK(tokens(&c, run->params[i]));
        return one(run, &c);
    }
    FILE *f = fopen(run->o.cases, "r");
    if (!f) {
        cl_set_error("cannot read %s: %s", run->o.cases, strerror(errno));
        return CL_ERR_IO;
    }
    cl_result rc = CL_OK;
    int number = 0;
    while (rc == CL_OK && fgets(line, sizeof line, f)) {
        char *p = line + strspn(line, " \t");
        if (*p == '#' || *p == '\n' || *p == '\0')
            continue;
        c = (cl_case){.run = run, .comm = comm, .number = ++number};
        rc = tokens(&c, p);
        if (rc == CL_OK)
            rc = one(run, &c);
    }
    fclose(f);
    if (rc == CL_OK && number == 0) {
        cl_set_error("%s has no cases", run->o.cases);
        rc = CL_ERR_INVALID;
    }
    return rc;
}
