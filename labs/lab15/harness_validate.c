/* harness_validate.c: lab 15's validate mode. The harness reads a cluster's dump and splits
 * it into its sections (a line "### <kind> <node> $ <command>" starts each one; "### policy"
 * names no node), hands them to the student's validator, and reports its findings and
 * fixes one line each.
 */
#include <stdio.h>
#include <string.h>

#include "boundary/arena.h"
#include "harness/bundle.h"
#include "lab15_harness.h"

/* A section of the dump from its header line "### kind node $ command" ("### policy"). */
static cl_result dump_section(void *dump, int i, const char *header, const char *text, int line)
{
    lab15_section *s = &((lab15_dump *)dump)->s[i];
    memset(s, 0, sizeof *s);
    const char *dollar = strstr(header, " $ ");
    if (sscanf(header + 4, "%7s", s->kind) != 1) {
        cl_set_error("line %d: a section header without a kind", line);
        return CL_ERR_PARSE;
    }
    if (strcmp(s->kind, "policy") != 0) {
        if (!dollar || sscanf(header + 4 + strlen(s->kind), "%31s", s->node) != 1) {
            cl_set_error("line %d: expected '### %s <node> $ <command>'", line, s->kind);
            return CL_ERR_PARSE;
        }
        snprintf(s->command, sizeof s->command, "%s", dollar + 3);
    }
    s->text = text;
    return CL_OK;
}

static int finding_line(char *out, size_t len, void *findings, int i)
{
    lab15_finding *f = &((lab15_finding *)findings)[i];
    return snprintf(out, len, "%s\t%s\t%s\t%s\n", field(f->code, sizeof f->code),
                    field(f->node, sizeof f->node), field(f->target, sizeof f->target),
                    field(f->fix, sizeof f->fix));
}

/* A dump starts with notes (comment lines) before its first header. */
static const cl_bundle_form dump_form = {.key = "dump",
                                         .max_mib = FILE_MAX_MIB,
                                         .max_sections = LAB15_MAX_SECTIONS,
                                         .section = dump_section};

cl_result validate_case(cl_case *c)
{
    static validate_args a;
    memset(&a, 0, sizeof a);
    char *text;
    cl_result rc = cl_bundle_load(c, &dump_form, &a.d, &a.d.n, &text);
    if (rc != CL_OK)
        return rc;
    rc = cl_case_call(c, "validate", &a, sizeof a);
    cl_row *r = cl_case_row(c);
    cl_col_int(r, "sections", a.d.n);
    cl_col_int(r, "n", a.n);
    col_lines(r, "findings", LAB15_MAX_FINDINGS * 360, a.n, LAB15_MAX_FINDINGS, finding_line, a.f);
    cl_host_free(text);
    return rc;
}
