/* driver.c: lab 28's plug-in: the student's diagnoser of an NCCL job.
 *
 *   lab28 diagnose bundle=job.txt      your findings and fixes for one bundle
 *   (or --cases FILE with one case per line)
 *
 * The harness reads the bundle (the student's program opens no file) and splits it into
 * sections: a line "### <kind> <node>" starts each one. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

/* The whole file at path, NUL-terminated, in the shared arena; NULL with a reason. */
static char *read_shared(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        cl_set_error("%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t k; buf && (k = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += k;
        if (n + 1 == cap) {
            char *b = cap > ((size_t)4 << 20) ? NULL : realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                buf = NULL;
                cl_set_error("%s: larger than 8 MiB", path);
                break;
            }
            buf = b, cap *= 2;
        }
    }
    fclose(f);
    if (!buf)
        return NULL;
    buf[n] = '\0';
    if (memchr(buf, '\0', n)) {
        cl_set_error("%s: not a text file (a NUL byte)", path);
        free(buf);
        return NULL;
    }
    char *shared = cl_share(buf, n + 1);
    free(buf);
    return shared;
}

/* Split text (in the arena, writable) into sections at "### kind node" lines. */
static cl_result split(char *text, lab28_bundle *b)
{
    b->n = 0;
    char *p = text;
    int line = 1;
    while (*p) {
        char *eol = strchr(p, '\n');
        char *next = eol ? eol + 1 : p + strlen(p);
        if (strncmp(p, "### ", 4) == 0) {
            if (eol)
                *eol = '\0';
            if (b->n > 0)
                p[-1] = '\0'; /* the previous section ends before this line */
            if (b->n == LAB28_MAX_SECTIONS) {
                cl_set_error("line %d: more than %d sections", line, LAB28_MAX_SECTIONS);
                return CL_ERR_PARSE;
            }
            lab28_section *s = &b->s[b->n++];
            memset(s, 0, sizeof *s);
            if (sscanf(p + 4, "%15s %31s", s->kind, s->node) != 2) {
                cl_set_error("line %d: expected '### <kind> <node>'", line);
                return CL_ERR_PARSE;
            }
            s->text = next;
        } else if (b->n == 0 && *p != '\n') {
            cl_set_error("line %d: text before the first '### <kind> <node>' line", line);
            return CL_ERR_PARSE;
        }
        p = next;
        line++;
    }
    return CL_OK;
}

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
    const char *path;
    CL_CHECK(cl_case_str(c, "bundle", &path));
    char *text = read_shared(path);
    if (!text)
        return CL_ERR_IO;
    cl_result rc = split(text, &a.b);
    if (rc != CL_OK) {
        cl_host_free(text);
        return rc;
    }
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
