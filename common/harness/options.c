/* options.c: the options every lab program takes, and the lab's own. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_suite.h"
#include "run.h"

typedef struct opt_spec {
    const char *name, *alias;
    char kind; /* s string, i int, z size, u unsigned 64, d seconds, t dtype, o op */
    size_t off;
    long lo, hi; /* int range */
    const char *help;
} opt_spec;

#define O(f) offsetof(cl_opts, f)
static const opt_spec specs[] = {
    {"--json", NULL, 's', O(json), 0, 0, "FILE  also write the results as JSON"},
    {"--backend", NULL, 's', O(backend), 0, 0, "B  cpu (default), gpu or sim"},
    {"--system", NULL, 's', O(system), 0, 0, "S  sim: a recorded system (dgx-a100, ...)"},
    {"--nranks", "-n", 'i', O(nranks), 1, 65536, "N  sim: ranks to simulate"},
    {"--repeats", "-r", 'i', O(repeats), 1, 1000, "R  samples per measurement"},
    {"--iters", "-i", 'i', O(iters), 1, 1000000, "N  calls per sample"},
    {"--bytes", NULL, 'z', O(bytes), 0, 0, "N  one size (8, 64K, 1M, 2G)"},
    {"--min-bytes", "-b", 'z', O(min_bytes), 0, 0, "N  smallest size of a sweep"},
    {"--max-bytes", "-e", 'z', O(max_bytes), 0, 0, "N  largest size of a sweep"},
    {"--factor", "-f", 'i', O(factor), 2, 1024, "K  size step of a sweep"},
    {"--dtype", "-d", 't', O(dtype), 0, 0, "T  int32, int64, float, double"},
    {"--op", "-o", 'o', O(op), 0, 0, "O  sum, prod, max, min"},
    {"--coll", NULL, 's', O(colls), 0, 0, "A,B  the collectives to run"},
    {"--cases", NULL, 's', O(cases), 0, 0, "FILE  cases, one per line of key=value pairs"},
    {"--seed", NULL, 'u', O(seed), 0, 0, "N  the data's seed (default: random)"},
    {"--deadline", NULL, 'd', O(deadline), 0, 0, "SEC  give up after SEC seconds"},
    {"--student", NULL, 's', O(student), 0, 0, "PATH  the student's program"},
};
#undef O

/* The lab's modes, and a collective lab's three. */
static const cl_mode suite_modes[] = {
    {.name = "verify",
     .help = "check every collective on many counts, types, ops and roots",
     .ranks = cl_coll_verify},
    {.name = "bench",
     .help = "one collective (--coll) at one size (--bytes) against the library's",
     .ranks = cl_coll_bench},
    {.name = "sweep",
     .help = "the selected collectives from -b to -e bytes, nccl-tests' table",
     .ranks = cl_coll_sweep},
    {0}};

static const cl_mode *all_modes[2];

void cl_collect_modes(const cl_lab *lab)
{
    all_modes[0] = lab->modes;
    all_modes[1] = lab->collectives ? suite_modes : NULL;
}

#define EACH_MODE(m)                                                                               \
    for (int mi_ = 0; mi_ < 2; mi_++)                                                              \
        for (const cl_mode *m = all_modes[mi_]; m && m->name; m++)

/* A suite mode that a lab's own mode of the same name replaces (parsing finds the lab's
 * first). */
static int hidden(const cl_mode *m)
{
    if (!all_modes[1] || m < suite_modes ||
        m >= suite_modes + sizeof suite_modes / sizeof *suite_modes)
        return 0;
    for (const cl_mode *k = all_modes[0]; k && k->name; k++)
        if (strcmp(k->name, m->name) == 0)
            return 1;
    return 0;
}

void cl_usage(const cl_lab *lab, FILE *f)
{
    fprintf(f, "usage: %s MODE [options] [key=value ...]\n%s\n\nmodes:\n", lab->name,
            lab->title ? lab->title : "");
    EACH_MODE(m)
    if (!hidden(m))
        fprintf(f, "  %-12s %s\n", m->name, m->help ? m->help : "");
    fprintf(f, "\noptions:\n");
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        fprintf(f, "  %s%s%-12s %s\n", specs[i].alias ? specs[i].alias : "",
                specs[i].alias ? ", " : "    ", specs[i].name, specs[i].help);
    for (const cl_option *o = lab->options; o && o->name; o++)
        fprintf(f, "      --%-10s %s%s%s%s\n", o->name, o->help ? o->help : "",
                o->fallback ? " (default " : "", o->fallback ? o->fallback : "",
                o->fallback ? ")" : "");
    fprintf(f, "  -h, --help         this text\n\nThe table goes to standard output; "
               "--json FILE writes the same as JSON.\n");
}

cl_result cl_parse_size(const char *text, size_t *out)
{
    char *end;
    if (!text || !*text || *text == '-' || *text == '+') {
        cl_set_error("'%s' is not a size (8, 64K, 1M, 2G)", text ? text : "");
        return CL_ERR_INVALID;
    }
    unsigned long long v = strtoull(text, &end, 10);
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10, end++;
    else if (*end == 'M' || *end == 'm')
        shift = 20, end++;
    else if (*end == 'G' || *end == 'g')
        shift = 30, end++;
    if (end == text || *end || v > (1ULL << 46) >> shift) {
        cl_set_error("'%s' is not a size (8, 64K, 1M, 2G; whole numbers up to 64T)", text);
        return CL_ERR_INVALID;
    }
    *out = (size_t)(v << shift);
    return CL_OK;
}

/* v as a whole number from lo to hi, for the option spelled `option` ("--nranks"). */
static cl_result whole_number(const char *option, const char *v, long lo, long hi, int *out)
{
    char *end = NULL;
    errno = 0;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || !*v || *end || errno || x < lo || x > hi || x < INT_MIN || x > INT_MAX) {
        cl_set_error("%s wants a whole number from %ld to %ld, not '%s'", option, lo, hi,
                     v ? v : "");
        return CL_ERR_INVALID;
    }
    *out = (int)x;
    return CL_OK;
}

static cl_result parse_value(const opt_spec *s, const char *v, cl_opts *o)
{
    char *base = (char *)o + s->off, *end;
    switch (s->kind) {
    case 's': *(const char **)base = v; return CL_OK;
    case 'z': return cl_parse_size(v, (size_t *)base);
    case 't': return cl_dtype_parse(v, (cl_dtype *)base);
    case 'o': return cl_op_parse(v, (cl_op *)base);
    case 'i': return whole_number(s->name, v, s->lo, s->hi, (int *)base);
    case 'u': {
        unsigned long long x = strtoull(v, &end, 0);
        if (!*v || *end || *v == '-') {
            cl_set_error("%s wants a whole number, not '%s'", s->name, v);
            return CL_ERR_INVALID;
        }
        o->seed = x;
        o->seed_given = 1;
        return CL_OK;
    }
    default: {
        double x = strtod(v, &end);
        if (!*v || *end || !isfinite(x) || x <= 0) {
            cl_set_error("%s wants a positive number of seconds, not '%s'", s->name, v);
            return CL_ERR_INVALID;
        }
        *(double *)base = x;
        return CL_OK;
    }
    }
}

cl_result cl_parse_options(cl_run *run, int argc, char **argv, int *help)
{
    const cl_lab *lab = run->lab;
    int nlab = 0;
    for (const cl_option *o = lab->options; o && o->name; o++)
        nlab++;
    run->lab_values = calloc((size_t)nlab + 1, sizeof *run->lab_values);
    if (!run->lab_values)
        return CL_ERR_NOMEM;
    for (int i = 0; i < nlab; i++)
        run->lab_values[i] = lab->options[i].fallback;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            *help = 1;
            return CL_OK;
        }
        const opt_spec *s = NULL;
        for (size_t k = 0; k < sizeof specs / sizeof specs[0] && !s; k++)
            if (strcmp(a, specs[k].name) == 0 || (specs[k].alias && strcmp(a, specs[k].alias) == 0))
                s = &specs[k];
        int li = -1;
        for (int k = 0; a[0] == '-' && a[1] == '-' && k < nlab && li < 0; k++)
            if (strcmp(a + 2, lab->options[k].name) == 0)
                li = k;
        if (s || li >= 0) {
            if (i + 1 >= argc) {
                cl_set_error("%s needs a value", a);
                return CL_ERR_INVALID;
            }
            if (s)
                CL_CHECK(parse_value(s, argv[++i], &run->o));
            else
                run->lab_values[li] = argv[++i];
        } else if (a[0] == '-') {
            cl_set_error("unknown option '%s' (see --help)", a);
            return CL_ERR_INVALID;
        } else if (strchr(a, '=')) {
            if (run->nparams == CL_MAX_PARAMS) {
                cl_set_error("more than %d key=value parameters", CL_MAX_PARAMS);
                return CL_ERR_INVALID;
            }
            run->params[run->nparams++] = argv[i];
        } else if (!run->mode) {
            EACH_MODE(m)
            if (!run->mode && strcmp(m->name, a) == 0)
                run->mode = m;
            if (!run->mode) {
                char list[256] = "";
                EACH_MODE(m)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                         list[0] ? ", " : "", m->name);
                cl_set_error("unknown mode '%s' (%s)", a, list);
                return CL_ERR_INVALID;
            }
        } else {
            cl_set_error("unexpected argument '%s'", a);
            return CL_ERR_INVALID;
        }
    }
    if (!run->mode) {
        cl_set_error("which mode? (see --help)");
        return CL_ERR_INVALID;
    }
    const cl_opts *o = &run->o;
    if (strcmp(o->backend, "cpu") && strcmp(o->backend, "gpu") && strcmp(o->backend, "sim")) {
        cl_set_error("unknown backend '%s' (cpu, gpu, sim)", o->backend);
        return CL_ERR_INVALID;
    }
    const char *allowed = run->mode->backends;
    if (allowed && !strstr(allowed, o->backend)) {
        cl_set_error("mode %s runs on %s, not on %s", run->mode->name, allowed, o->backend);
        return CL_ERR_INVALID;
    }
    if (o->min_bytes > o->max_bytes || !o->min_bytes) {
        cl_set_error("the sweep's sizes are not 1 <= --min-bytes <= --max-bytes");
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

const cl_opts *cl_run_opts(const cl_run *run) { return &run->o; }

const char *cl_opt(const cl_run *run, const char *name)
{
    int i = 0;
    for (const cl_option *o = run->lab->options; o && o->name; o++, i++)
        if (strcmp(o->name, name) == 0)
            return run->lab_values[i];
    return NULL;
}

cl_result cl_parse_numbers(const char *text, double *out, int max, int *n)
{
    *n = 0;
    for (const char *p = text; *p;) {
        if (*n == max) {
            cl_set_error("more than %d numbers in '%.40s'", max, text);
            return CL_ERR_INVALID;
        }
        char *end;
        errno = 0;
        out[(*n)++] = strtod(p, &end);
        if (end == p || errno || (*end && *end != ',') || (*end == ',' && !end[1])) {
            cl_set_error("expected numbers separated by commas at '%.20s'", p);
            return CL_ERR_INVALID;
        }
        p = *end ? end + 1 : end;
    }
    return CL_OK;
}

cl_result cl_opt_int(const cl_run *run, const char *name, long lo, long hi, int *out)
{
    char option[64];
    snprintf(option, sizeof option, "--%s", name);
    return whole_number(option, cl_opt(run, name), lo, hi, out);
}

cl_result cl_opt_num(const cl_run *run, const char *name, double lo, double hi, double *out)
{
    const char *v = cl_opt(run, name);
    char *end = NULL;
    errno = 0;
    double x = v ? strtod(v, &end) : 0;
    if (!v || !*v || *end || errno || !(x >= lo && x <= hi)) {
        cl_set_error("--%s wants a number from %g to %g, not '%s'", name, lo, hi, v ? v : "");
        return CL_ERR_INVALID;
    }
    *out = x;
    return CL_OK;
}

cl_result cl_opt_size(const cl_run *run, const char *name, size_t cpu, size_t sim, size_t *out)
{
    const char *v = cl_opt(run, name);
    if (!v) {
        *out = strcmp(run->o.backend, "sim") == 0 ? sim : cpu;
        return CL_OK;
    }
    if (cl_parse_size(v, out) != CL_OK) {
        char why[160];
        snprintf(why, sizeof why, "%s", cl_last_error());
        cl_set_error("--%s: %s", name, why);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}
