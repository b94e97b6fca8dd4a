/* driver.c: lab 28's plug-in: the student's diagnoser of an NCCL job.
 *
 *   lab28 diagnose bundle=job.txt      your findings and fixes for one bundle
 *   (or --cases FILE with one case per line)
 *
 * The harness reads the bundle (the student's program opens no file) and splits it into
 * sections: a line "### <kind> <node>" starts each one. */
#include <stdio.h>
#include <string.h>

#include "harness/harness.h"
#include "lab28.h"

typedef struct diagnose_args {
    lab28_bundle b;
    int n; /* out */
    lab28_finding f[LAB28_MAX_FINDINGS];
} diagnose_args;

#ifdef CL_STUDENT_SIDE

static cl_result e_diagnose(cl_comm *c, void *args)
{
    (void)c;
    diagnose_args *a = args;
    return lab28_diagnose(&a->b, a->f, LAB28_MAX_FINDINGS, &a->n);
}

CL_STUDENT_ENTRIES({"diagnose", e_diagnose});

#else

#include "boundary/arena.h"
#include "harness/bundle.h"

/* A section of the bundle from its header line "### kind node". */
static cl_result bundle_section(void *bundle, int i, const char *header, const char *text, int line)
{
    lab28_section *s = &((lab28_bundle *)bundle)->s[i];
    memset(s, 0, sizeof *s);
    if (sscanf(header + 4, "%15s %31s", s->kind, s->node) != 2) {
        cl_set_error("line %d: expected '### <kind> <node>'", line);
        return CL_ERR_PARSE;
    }
    s->text = text;
    return CL_OK;
}

static const cl_bundle_form bundle_form = {.key = "bundle",
                                           .max_mib = 8,
                                           .max_sections = LAB28_MAX_SECTIONS,
                                           .header = "### <kind> <node>",
                                           .section = bundle_section};

/* A bounded copy of a field the student's program wrote. */
static const char *field(char *s, size_t n)
{
    s[n - 1] = '\0';
    for (char *q = s; *q; q++)
        if (*q == '\t' || *q == '\n')
            *q = ' ';
    return s;
}

static cl_result diagnose_case(cl_case *c)
{
    static diagnose_args a;
    memset(&a, 0, sizeof a);
    char *text;
    cl_result rc = cl_bundle_load(c, &bundle_form, &a.b, &a.b.n, &text);
    if (rc != CL_OK)
        return rc;
    rc = cl_case_call(c, "diagnose", &a, sizeof a);
    cl_row *r = cl_case_row(c);
    int n = a.n < 0 ? 0 : a.n > LAB28_MAX_FINDINGS ? LAB28_MAX_FINDINGS : a.n;
    static char list[LAB28_MAX_FINDINGS * 280];
    size_t used = 0;
    list[0] = '\0';
    for (int i = 0; i < n && used < sizeof list; i++) {
        lab28_finding *f = &a.f[i];
        used += (size_t)snprintf(list + used, sizeof list - used, "%s\t%s\t%s\n",
                                 field(f->code, sizeof f->code), field(f->node, sizeof f->node),
                                 field(f->fix, sizeof f->fix));
    }
    cl_col_int(r, "sections", a.b.n);
    cl_col_int(r, "n", a.n);
    cl_col_str(r, "findings", list);
    cl_host_free(text);
    return rc;
}

const cl_lab cl_lab_def = {
    .name = "lab28",
    .title = "故障排查: a diagnoser of NCCL logs, topology, environment and ibstat",
    .modes = (const cl_mode[]){{.name = "diagnose",
                                .help = "your findings and fixes for a job's bundle: bundle=PATH",
                                .cases = diagnose_case},
                               {0}},
};

#endif
