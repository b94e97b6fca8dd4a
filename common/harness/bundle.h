/* bundle.h: reading a recorded text file (a tool's output, or a bundle of several) for the
 * student's program.
 *
 * The student's program opens no file: the harness reads the file a case names into the
 * shared arena and, for a bundle, splits it into sections at its header lines ("### ..."),
 * so the student's code receives NUL-terminated texts it can only read. lab15 (a cluster's
 * dump) and lab28 (a job's diagnostic bundle) read theirs this way; each lab parses its
 * own header lines into its own section type.
 */
#ifndef COMMLAB_BUNDLE_H
#define COMMLAB_BUNDLE_H

#include "harness.h"

/* The whole file at path in *text, NUL-terminated (*len bytes before the NUL), to free().
 * CL_ERR_IO with a reason naming the file when it cannot be read or is larger than max
 * bytes. */
cl_result cl_read_file(const char *path, size_t max, char **text, size_t *len);

/* The text file named by the case's key=PATH, whole and NUL-terminated, in the shared
 * arena: *text, to free with cl_host_free. CL_ERR_IO with a reason when it cannot be
 * read, is larger than max_mib MiB or holds a NUL byte (not a text file). */
cl_result cl_bundle_read(cl_case *c, const char *key, int max_mib, char **text);

/* Fills the lab's section i (of sections) from its header line (the whole line, "### "
 * included, NUL-terminated) and its text (up to the next header, NUL-terminated).
 * CL_ERR_PARSE with a reason naming the line number otherwise. */
typedef cl_result (*cl_bundle_section_fn)(void *sections, int i, const char *header,
                                          const char *text, int line);

/* What a lab's bundles look like. */
typedef struct cl_bundle_form {
    const char *key;  /* the case's key that names the file: "bundle" */
    int max_mib;      /* a larger file is refused */
    int max_sections; /* more sections are refused */
    /* When set ("### <kind> <node>", named in the error), only blank lines may come before
     * the first header; when NULL, text there (notes) is left alone. */
    const char *header;
    cl_bundle_section_fn section;
} cl_bundle_form;

/* Read the bundle the case names (cl_bundle_read) and split it into sections at the lines
 * that start with "### ": each section's text ends, NUL-terminated, before the next
 * header; form->section fills the lab's sections in order and *n counts them. *text is
 * the bundle, to free with cl_host_free once the sections are done with. On failure
 * nothing is left to free (*text is NULL), with a reason: CL_ERR_IO or CL_ERR_PARSE. */
cl_result cl_bundle_load(cl_case *c, const cl_bundle_form *form, void *sections, int *n,
                         char **text);

#endif /* COMMLAB_BUNDLE_H */
